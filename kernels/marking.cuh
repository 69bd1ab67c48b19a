// DF/DF-P's initial marking of the affected set and the starting
// contributions it may sign, for the default engine (pagerank.cu).
#pragma once
#include "common.cuh"
#include "layouts.cuh"
#include "rank_vertex.cuh"

namespace dynpr {

// ORs the bits of x into *c, atomically (the sign bit alone for x = -0).
__device__ __forceinline__ void atomic_or_bits(Contribution* c, Contribution x) {
  if constexpr (sizeof(Contribution) == 8) {
    atomicOr(reinterpret_cast<unsigned long long*>(c), static_cast<unsigned long long>(__double_as_longlong(x)));
  } else {
    atomicOr(reinterpret_cast<unsigned*>(c), __float_as_uint(x));
  }
}

// The starting contribution C[v] = R[v] / d[v], into C and C_other (the
// dynamic step copies nothing where the two buffers agree). With `or_bits`, C
// was zeroed and gets it by an atomic OR of its bits, so that the sign bit a
// batch source ORs in during the same launch (announce_source) holds
// whichever comes first.
__device__ __forceinline__ void start_contribution(int v, const double* R, const double* inv_degree,
                                                   Contribution* C, Contribution* C_other, bool or_bits) {
  const Contribution x = R[v] * inv_degree[v];
  C_other[v] = x;
  if (or_bits) {
    atomic_or_bits(C + v, x);
  } else {
    C[v] = x;
  }
}

// Batch edge i of DF/DF-P's initial marking where they pull from the first
// iteration (a relabelled graph, or blocks that keep their units), SIGN: its
// source announces itself as expanded in the sign of its starting
// contribution C (which its out-neighbours, itself included through its
// self-loop, read in their first gather: what marking them does). Without
// SIGN (DT's search in the solve) the source is flagged affected instead, a
// seed of the search (dt_bfs.cu). Either way the target of a deletion is
// marked affected. With `renamed` the batch has the original ids, which
// new_id renames (else new_id is not read).
template <bool SIGN>
__device__ __forceinline__ void announce_source(long long i, const BatchArgs& batch, Contribution* C,
                                                unsigned char* dv) {
  const int num_del = batch.num_del;
  int source = i < num_del ? batch.del_src[i] : batch.ins_src[i - num_del];
  source = batch.renamed ? batch.new_id[source] : source;
  if constexpr (SIGN) {
    atomic_or_bits(C + source, Contribution(-0.0));
  } else {
    dv[source] = kAffected;
  }
  if (i < num_del) dv[batch.renamed ? batch.new_id[batch.del_dst[i]] : batch.del_dst[i]] = kAffected;
}

}  // namespace dynpr

// Initial marking and the first expansion in one launch, for the fused
// dynamic step: a warp per batch edge marks every out-neighbour (new graph)
// of the edge's source, which is what dn[source] = 1 followed by the
// expansion does, and the target of a deletion. A source is walked once: the
// first warp to set ever[source] takes it (each source is affected anyway,
// through its self-loop): hubs are the sources of thousands of batch edges.
// The out-edges walked are push work like an iteration's: the last block
// starts the run in pull mode when they exceed pull_edges. The batch is in
// the graph's ids (not renamed).
extern "C" __global__ void __launch_bounds__(dynpr::kBlock) mark_frontier(
    const __grid_constant__ dynpr::BatchArgs batch, const __grid_constant__ dynpr::GraphArgs g,
    const __grid_constant__ dynpr::FrontierBuffers f, double pull_edges, double* delta, dynpr::IterationState* state) {
  const long long i = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const int lane = threadIdx.x & 31;
  const int num_del = batch.num_del;
  double walked = 0.0;
  if (i < num_del + batch.num_ins) {
    const int u = i < num_del ? batch.del_src[i] : batch.ins_src[i - num_del];
    if (i < num_del && lane == 0) f.dv[batch.del_dst[i]] = dynpr::kAffected;
    int first = 0;
    if (lane == 0) first = !f.ever[u] && !dynpr::atomic_or_byte(f.ever, u, 1);
    if (__shfl_sync(0xffffffffu, first, 0)) {
      const long long begin = g.out_offsets[u], end = g.out_offsets[u + 1];
      for (long long e = begin + lane; e < end; e += 32) f.dv[g.targets[e]] = dynpr::kAffected;
      if (lane == 0) walked = static_cast<double>(end - begin);
    }
  }
  walked = dynpr::block_sum(walked);
  if (threadIdx.x != 0) return;
  if (walked > 0.0) atomicAdd(delta + 1, walked);
  __threadfence();
  if (atomicAdd(&state->ticket, 1u) != gridDim.x - 1) return;
  __threadfence();
  const double work = __longlong_as_double(atomicExch(reinterpret_cast<unsigned long long*>(delta + 1), 0ull));
  if (work > pull_edges) state->pull = 1;
  state->ticket = 0;
}

// DF/DF-P's initial marking where they pull from the first iteration, in a
// launch of its own after the starting contributions: announce_source for
// every batch edge.
extern "C" __global__ void mark_sources(const __grid_constant__ dynpr::BatchArgs batch, dynpr::Contribution* C,
                                        unsigned char* dv) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < batch.num_del + batch.num_ins) dynpr::announce_source<true>(i, batch, C, dv);
}
