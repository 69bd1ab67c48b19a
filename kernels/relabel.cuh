// Hub-first relabelling of the default's large graphs (dynpr.gpu.classes.Relabel):
// Static, ND, DF and DF-P iterate on a renumbered in-CSR whose hot contributions
// share cache lines; DT's reached set is renamed into it.
#pragma once
#include "common.cuh"
#include "layouts.cuh"

// Vertex i of the relabelled graph is vertex order[i]: rank[order[i]] = i,
// and its in-degree (into degree[i], scanned into the new in-offsets on the
// host side), 1/d and starting rank move with it.
extern "C" __global__ void relabel_vertices(const long long* order, const __grid_constant__ dynpr::GraphArgs g,
    const double* start, int* rank, long long* degree, double* new_inv_degree, double* new_start) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= g.n) return;
  const int v = static_cast<int>(order[i]);
  rank[v] = i;
  degree[i] = g.in_offsets[v + 1] - g.in_offsets[v];
  new_inv_degree[i] = g.inv_degree[v];
  new_start[i] = start[v];
}

// DT's reached set, found in the original ids (its search walks the original out-CSR),
// renamed into the relabelled ones: dv[rank[v]] = reached[v].
extern "C" __global__ void rename_flags(const unsigned char* reached, const int* rank, int n, unsigned char* dv) {
  const int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v < n) dv[rank[v]] = reached[v];
}

// Row i of the relabelled in-CSR is row order[i] of the original with every
// source u renamed rank[u], kept in the original (ascending original id)
// order, so each vertex adds the same contributions in the same sequence.
// 8 lanes per row of at most `limit` in-edges (most rows are short, and each
// row's copy waits on a chain of dependent loads: more rows in flight).
extern "C" __global__ void __launch_bounds__(dynpr::kBlock) relabel_rows(const __grid_constant__ dynpr::RelabelArgs r,
    long long limit) {
  const long long i = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) >> 3;
  if (i >= r.n) return;
  const long long begin = r.new_offsets[i], d = r.new_offsets[i + 1] - begin;
  if (d > limit) return;
  const long long old = r.in_offsets[r.order[i]];
  for (long long e = threadIdx.x & 7; e < d; e += 8) r.new_sources[begin + e] = r.rank[r.sources[old + e]];
}

// The rows longer than `limit` (new ids rows[0..count)), cut into chunks of
// `chunk` edges, a block per chunk: last[j] = the chunks of rows[0..j]
// (inclusive scan), so block b copies chunk b - last[j-1] of the row j with
// last[j-1] <= b < last[j].
extern "C" __global__ void __launch_bounds__(dynpr::kBlock) relabel_long_rows(
    const __grid_constant__ dynpr::RelabelArgs r, const long long* rows, const long long* last, int count,
    long long chunk) {
  const long long b = blockIdx.x;
  int lo = 0, hi = count - 1;
  while (lo < hi) {  // the first j with last[j] > b
    const int mid = (lo + hi) / 2;
    if (last[mid] > b) hi = mid;
    else lo = mid + 1;
  }
  const long long i = rows[lo], first = (b - (lo ? last[lo - 1] : 0)) * chunk;
  const long long begin = r.new_offsets[i], end = min(r.new_offsets[i + 1] - begin, first + chunk);
  const long long old = r.in_offsets[r.order[i]];
  for (long long e = first + threadIdx.x; e < end; e += dynpr::kBlock)
    r.new_sources[begin + e] = r.rank[r.sources[old + e]];
}
