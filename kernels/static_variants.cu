// Static PageRank pull kernels of the companion report "PageRank Algorithm:
// Complete CUDA Implementation" (versions 4-6), used by dynpr.gpu.baselines
// only: the thread/warp hybrid at in-degree 32, shared-memory tiling of the
// block's own vertices, and the coalesced pull in float32. Each computes one
// synchronous iteration R -> Rnew of every vertex (Static and ND) and folds
// the block's largest change into *delta; finish_iteration (baselines.cu)
// ends the iteration. Every kernel returns at once once *done is set.
#include "common.cuh"
#include "layouts.cuh"
#include "rank_vertex.cuh"

using dynpr::kBlock;
using dynpr::finish_vertex;

// In-degree from which a vertex gets a whole warp (the report's hybrid).
constexpr long long kWarpDegree = 32;

__device__ __forceinline__ void fold_change(double change, double* delta) {
  change = dynpr::block_max(change);
  if (threadIdx.x == 0 && change > 0.0) dynpr::atomic_max_nonneg(delta, change);
}

// A thread per vertex below in-degree 32; each warp then takes the vertices
// of its 32 lanes at or above 32 in-edges one after another, all lanes
// striding the vertex's in-edges and a shuffle reduction summing them
// (version 6, "GPU Warp-Optimized", made correct for a warp of vertices).
extern "C" __global__ void __launch_bounds__(kBlock) rank_hybrid_thread_warp(
    dynpr::GraphArgs g, dynpr::RankBuffers r, dynpr::SolveOptions o, double* delta, const int* done) {
  if (*done) return;
  const int n = g.n;
  const long long* in_offsets = g.in_offsets;
  const int* sources = g.sources;
  const double* inv_degree = g.inv_degree;
  const double* R = r.R[0];
  double* Rnew = r.R[1];
  const double c0 = o.c0, alpha = o.alpha;
  const int v = blockIdx.x * blockDim.x + threadIdx.x;
  const int lane = threadIdx.x & 31;
  long long begin = 0, end = 0;
  if (v < n) {
    begin = in_offsets[v];
    end = in_offsets[v + 1];
  }
  const bool wide = end - begin >= kWarpDegree;
  double change = 0.0;
  if (v < n && !wide) {
    double c = 0.0;
    for (long long e = begin; e < end; ++e) {
      const int u = sources[e];
      c += R[u] * inv_degree[u];
    }
    change = finish_vertex<false, false>(v, c, inv_degree, R, Rnew, nullptr, nullptr, c0, alpha, 0.0, 0.0);
  }
  // Every lane reaches the ballot (no early return above), so the full mask holds.
  for (unsigned pending = __ballot_sync(0xffffffffu, wide); pending; pending &= pending - 1) {
    const int owner = __ffs(pending) - 1;
    const int w = __shfl_sync(0xffffffffu, v, owner);
    const long long first = __shfl_sync(0xffffffffu, begin, owner), last = __shfl_sync(0xffffffffu, end, owner);
    double c = 0.0;
    for (long long e = first + lane; e < last; e += 32) {
      const int u = sources[e];
      c += R[u] * inv_degree[u];
    }
    c = dynpr::warp_reduce<dynpr::Sum>(c);
    if (lane == 0) {
      change = fmax(change, finish_vertex<false, false>(w, c, inv_degree, R, Rnew, nullptr, nullptr, c0, alpha,
                                                        0.0, 0.0));
    }
  }
  fold_change(change, delta);
}

// A thread per vertex; the block first loads the ranks and inverse degrees of
// its own kBlock vertices into shared memory, and an in-edge whose source is
// one of them reads it there, any other source from global memory (version
// 5, "GPU Shared Memory (Tiling)").
extern "C" __global__ void __launch_bounds__(kBlock) rank_pull_tiled(
    dynpr::GraphArgs g, dynpr::RankBuffers r, dynpr::SolveOptions o, double* delta, const int* done) {
  if (*done) return;
  const int n = g.n;
  const long long* in_offsets = g.in_offsets;
  const int* sources = g.sources;
  const double* inv_degree = g.inv_degree;
  const double* R = r.R[0];
  double* Rnew = r.R[1];
  const double c0 = o.c0, alpha = o.alpha;
  __shared__ double tile_rank[kBlock];
  __shared__ double tile_inv[kBlock];
  const int first = blockIdx.x * kBlock;
  const int v = first + threadIdx.x;
  if (v < n) {
    tile_rank[threadIdx.x] = R[v];
    tile_inv[threadIdx.x] = inv_degree[v];
  }
  __syncthreads();
  double change = 0.0;
  if (v < n) {
    double c = 0.0;
    for (long long e = in_offsets[v]; e < in_offsets[v + 1]; ++e) {
      const int u = sources[e];
      // one unsigned compare tests first <= u < first + kBlock (a source past n is never stored)
      const unsigned local = static_cast<unsigned>(u - first);
      c += local < static_cast<unsigned>(kBlock) ? tile_rank[local] * tile_inv[local] : R[u] * inv_degree[u];
    }
    change = finish_vertex<false, false>(v, c, tile_rank[threadIdx.x], tile_inv[threadIdx.x], Rnew, nullptr,
                                         nullptr, c0, alpha, 0.0, 0.0);
  }
  fold_change(change, delta);
}

// A thread per vertex in single precision: float32 ranks and inverse degrees,
// the in-neighbours' contributions summed in a float32 register ("float sum
// = 0.0f", version 4, "GPU Coalesced"). The change is widened to double only
// for the iteration's L-infinity test.
// The graph's in-CSR from g (its float64 1/d unused: inv_degree is the float32 copy).
extern "C" __global__ void __launch_bounds__(kBlock) rank_pull_float32(
    dynpr::GraphArgs g, const float* inv_degree, const float* R, float* Rnew, float c0, float alpha, double* delta,
    const int* done) {
  if (*done) return;
  const int n = g.n;
  const long long* in_offsets = g.in_offsets;
  const int* sources = g.sources;
  const int v = blockIdx.x * blockDim.x + threadIdx.x;
  double change = 0.0;
  if (v < n) {
    float c = 0.0f;
    for (long long e = in_offsets[v]; e < in_offsets[v + 1]; ++e) {
      const int u = sources[e];
      c += R[u] * inv_degree[u];
    }
    const float r = c0 + alpha * c;
    change = fabs(static_cast<double>(r) - static_cast<double>(R[v]));
    Rnew[v] = r;
  }
  fold_change(change, delta);
}
