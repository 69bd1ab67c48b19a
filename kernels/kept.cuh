// Work units kept by one block for a whole solve (rank_persistent on graphs
// of at most one unit per block), with their rows staged in shared memory.
#pragma once
#include "classes.cuh"
#include "common.cuh"
#include "layouts.cuh"
#include "rank_vertex.cuh"
#include "units.cuh"

namespace dynpr {

// A kept unit: its class, each thread's vertex and that vertex's in-edge row,
// in `sources`. The rows are copied once into the block's shared memory where
// they fit (`capacity` ints; else the graph's in-CSR is read), so an
// iteration's chain of dependent loads is the contributions alone, not class
// plan, vertex id, offsets and sources first. A row starts at the same
// position mod 4 as in the in-CSR, which keeps the warp and block classes'
// int4 reads, and so their order of additions (gather).
struct KeptUnit {
  int k, v;
  bool active;
  Row row;
  const int* sources;
};

__device__ __forceinline__ KeptUnit keep_unit(int u, const int* ids, int n, const ClassPlan* plan,
                                              const long long* in_offsets, const int* sources, int* staged,
                                              int capacity) {
  KeptUnit unit;
  unit.k = unit_class(u, plan);
  const int lanes = class_lanes(unit.k), lane = threadIdx.x % lanes;
  const long long first_item = static_cast<long long>(u - plan->first[unit.k]) * kBlock;
  const long long item = lanes == kBlock ? first_item / kBlock : (first_item + threadIdx.x) / lanes;
  unit.v = class_vertex<true>(item, ids + static_cast<long long>(unit.k) * n, plan->count[unit.k], in_offsets, 0, 0,
                              unit.active);
  const Row row = unit.active ? Row{in_offsets[unit.v], in_offsets[unit.v + 1]} : Row{};
  const long long degree = row.end - row.begin;
  long long total;  // each group's share: its row and up to 3 ints of alignment
  long long base = block_exclusive_sum(lane == 0 ? degree + 3 : 0, total);
  if (lanes == kBlock) base = 0;
  else if (lanes > 1) base = __shfl_sync(0xffffffffu, base, threadIdx.x % 32 / lanes * lanes);
  if (total > capacity) {  // uniform over the block
    unit.row = row;
    unit.sources = sources;
    return unit;
  }
  const long long local = base + ((row.begin - base) & 3);
  for (long long e = lane; e < degree; e += lanes) staged[local + e] = sources[row.begin + e];
  __syncthreads();
  unit.row = Row{local, local + degree};
  unit.sources = staged;
  return unit;
}

// One iteration of a kept unit; its gathers take their edges in batches
// (gather's BATCHED), whose ids come from shared memory.
template <int A>
__device__ __forceinline__ double kept_step(const KeptUnit& unit, const RankArgs& a, const Frontier& fr, bool pull,
                                            double& edges) {
  return with_class(unit.k, [&](auto c) {
    return step_vertex<decltype(c)::lanes, A, true>(unit.active, unit.v, a, fr, pull, edges, unit.row);
  });
}

// One level of DT's reachability over the vertex v of G lanes, bottom-up: v, not yet
// reached, is reached when an in-neighbour was (its flag in dv, read from the L2 as
// other blocks set theirs during the level; a flag read before it was set only leaves
// v to the next level). Rows are taken kGatherBatch edges a lane at a time, so the
// loads of a round are in flight together. Returns whether this thread reached v.
template <int G>
__device__ __forceinline__ bool reach_vertex(bool active, int v, Row row, const int* sources, unsigned char* dv) {
  bool found = false;
  if (active && !__ldcg(dv + v)) {
    for (long long first = row.begin + threadIdx.x % G; first < row.end && !found; first += kGatherBatch * G) {
#pragma unroll
      for (int j = 0; j < kGatherBatch; ++j) {
        const long long e = first + j * G;
        if (e < row.end) found |= __ldcg(dv + sources[e]) != 0;
      }
    }
  }
  found = group_any<G>(found);
  if (found && (G == kBlock ? threadIdx.x == 0 : threadIdx.x % G == 0)) {
    dv[v] = kAffected;
    return true;
  }
  return false;
}

// reach_vertex over a kept unit (its rows in shared memory where they fit).
__device__ __forceinline__ bool kept_reach(const KeptUnit& unit, unsigned char* dv) {
  return with_class(unit.k, [&](auto c) {
    return reach_vertex<decltype(c)::lanes>(unit.active, unit.v, unit.row, unit.sources, dv);
  });
}

}  // namespace dynpr
