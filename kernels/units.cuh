// One iteration's rank step over the work units of a fused launch: the vertex
// step of each approach, the unit counter, and the two ways of finding a
// unit's vertices (class lists, or chunks sorted into classes in shared memory).
#pragma once
#include "classes.cuh"
#include "common.cuh"
#include "layouts.cuh"
#include "rank_vertex.cuh"

namespace dynpr {

// One vertex of the fused launches for approach A (layouts.cuh): Static/ND
// through rank_vertex, DT, DF and DF-P through dynamic_vertex (push or pull
// mode, see there). v's in-edges are `row`; BATCHED: see gather.
template <int G, int A, bool BATCHED = false>
__device__ __forceinline__ double step_vertex(bool active, int v, const RankArgs& a, const Frontier& fr, bool pull,
                                              double& edges, Row row) {
  if constexpr (affected(A)) {
    return dynamic_vertex<G, frontier(A), prune(A), BATCHED>(active, v, a, fr, pull, edges, row);
  } else {
    return rank_vertex<G, false, false, false, true, BATCHED>(active, v, a, row);
  }
}

// step_vertex over v's row of the graph's in-CSR.
template <int G, int A>
__device__ __forceinline__ double step_vertex(bool active, int v, const RankArgs& a, const Frontier& fr, bool pull,
                                              double& edges) {
  return step_vertex<G, A>(active, v, a, fr, pull, edges, in_row(a, v, active));
}

// A sweep's shared memory: the double-buffered next unit (for_each_unit) and,
// without class lists, a chunk's vertices per class (chunk_unit).
template <bool LISTED>
struct SweepShared {
  int next[2];
};
template <>
struct SweepShared<false> {
  int next[2];
  int listed[kMaxClasses - 1][kBlock];
  int listed_count[kMaxClasses - 1];
};

// Work units ("virtual blocks") of the fused kernels are handed out by a
// counter, so their grid has a fixed size known on the host (about one
// resident wave) whatever the work: block b takes unit b first, then units
// gridDim.x + atomicAdd(counter). The next unit is fetched while the current
// one runs (double-buffered in `next`, so no thread reads a slot being
// rewritten), and the __syncthreads at the end of each unit also separates
// the shared scratch of consecutive units' reductions.
template <typename Unit>
__device__ __forceinline__ void for_each_unit(int total, int* counter, int* next, Unit unit) {
  int parity = 0;
  for (int u = blockIdx.x; u < total; parity ^= 1) {
    if (threadIdx.x == 0) next[parity] = gridDim.x + atomicAdd(counter, 1);
    unit(u);
    __syncthreads();
    u = next[parity];
  }
}

// One unit of the chunked scheme: kBlock consecutive vertices, each thread
// reading its vertex's in-degree and computing it itself (class 0) or listing
// it in shared memory for the block's sub-warp groups, its warps or the whole
// block (classes 1-3), which then work through those lists: the lanes of
// the listed classes without lists made beforehand. Must be called by
// the whole block.
template <int A>
__device__ __forceinline__ void chunk_unit(int u, int n, const long long* bounds, const RankArgs& a,
                                           const Frontier& fr, bool pull, double& change, double& edges,
                                           SweepShared<false>& shared) {
  if (threadIdx.x < kMaxClasses - 1) shared.listed_count[threadIdx.x] = 0;
  __syncthreads();
  const int v = u * kBlock + threadIdx.x;
  bool own = false;
  if (v < n) {
    const long long d = a.in_offsets[v + 1] - a.in_offsets[v];
    own = d <= bounds[0];
    if (!own) {
      const int k = d <= bounds[1] ? 0 : d <= bounds[2] ? 1 : 2;
      shared.listed[k][atomicAdd(&shared.listed_count[k], 1)] = v;
    }
  }
  __syncthreads();
  change = fmax(change, step_vertex<1, A>(own, v, a, fr, pull, edges));
  // Loop bounds are uniform over the block, so every lane of a warp calls.
  const int count8 = shared.listed_count[0], count32 = shared.listed_count[1], count_block = shared.listed_count[2];
  constexpr int kSub = class_lanes(1);
  const int warp = threadIdx.x / 32;
  for (int i = threadIdx.x / kSub; i - static_cast<int>(threadIdx.x / kSub) < count8; i += kBlock / kSub) {
    const bool active = i < count8;
    change = fmax(change, step_vertex<kSub, A>(active, active ? shared.listed[0][i] : 0, a, fr, pull, edges));
  }
  for (int i = warp; i - warp < count32; i += kBlock / 32) {
    const bool active = i < count32;
    change = fmax(change, step_vertex<32, A>(active, active ? shared.listed[1][i] : 0, a, fr, pull, edges));
  }
  for (int i = 0; i < count_block; ++i) {
    change = fmax(change, step_vertex<kBlock, A>(true, shared.listed[2][i], a, fr, pull, edges));
    __syncthreads();  // block_sum's scratch is reused by the next hub
  }
}

// One iteration's rank step over every vertex, by the blocks of the launch:
// with class lists (LISTED) every degree class of the default variant, over
// the lists of degree_classes: class k (lanes 1, 8, 32, kBlock) has count[k]
// vertex ids at ids[k * n, ...) and the units from first[k] on, heaviest
// class first, so that the long block-per-hub work starts early instead of
// forming the launch's tail (degree_classes wrote the plan on the device);
// without lists (partition level "none") chunk_unit over all vertices, the
// same classes chosen by degree inside the launch. Every vertex gets the
// same lanes and arithmetic either way, so the same ranks, bit for bit.
// DT, DF and DF-P go through dynamic_vertex: DF and DF-P run Alg. 5's
// expansion inside the sweep (pushing marks, or pulling when `pull`).
template <bool LISTED, int A>
__device__ __forceinline__ void sweep(const int* ids, int n, const ClassPlan* plan, const long long* bounds,
                                      const RankArgs& a, const Frontier& fr, bool pull, int* work, double& change,
                                      double& edges, SweepShared<LISTED>& shared) {
  if constexpr (!LISTED) {
    for_each_unit((n + kBlock - 1) / kBlock, work, shared.next, [&](int u) {
      chunk_unit<A>(u, n, bounds, a, fr, pull, change, edges, shared);
    });
  } else {
    for_each_unit(plan->total, work, shared.next, [&](int u) {
      const int k = unit_class(u, plan);  // uniform over the block: every thread takes the same branch
      const int* class_ids = ids + static_cast<long long>(k) * n;
      const long long first_item = static_cast<long long>(u - plan->first[k]) * kBlock;
      with_class(k, [&](auto c) {
        constexpr int G = decltype(c)::lanes;
        bool active;
        const int v = class_vertex<true>(unit_item<G>(first_item), class_ids, plan->count[decltype(c)::index],
                                         a.in_offsets, 0, 0, active);
        change = fmax(change, step_vertex<G, A>(active, v, a, fr, pull, edges));
      });
    });
  }
}

}  // namespace dynpr
