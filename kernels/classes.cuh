// The default's in-degree classes: sorting vertices into class lists, laying
// out the work units of a class-listed launch, and the one dispatch from a
// class index to its lanes per vertex.
#pragma once
#include "common.cuh"
#include "layouts.cuh"

namespace dynpr {

// A class as a type, its index and lanes per vertex constants, so that a generic
// lambda indexes the plan and picks its gather at compile time.
template <int K>
struct Class {
  static constexpr int index = K;
  static constexpr int lanes = class_lanes(K);
};

// f(Class<k>{}): the class dispatcher every class-listed path goes through; k
// must be uniform over the group that calls.
template <typename F>
__device__ __forceinline__ auto with_class(int k, F f) {
  switch (k) {
    case 0:
      return f(Class<0>{});
    case 1:
      return f(Class<1>{});
    case 2:
      return f(Class<2>{});
    default:
      return f(Class<3>{});
  }
}

// Block-local class counts of classify_chunk.
struct ClassifyShared {
  int local[kMaxClasses];
  int base[kMaxClasses];
};

// Sort the vertex ids of one chunk, [first, first + kBlock), into degree
// classes: class k holds deg in (bounds[k-1], bounds[k]] (bounds[-1] = -1)
// and goes to ids[k * n + ...]. Positions come from block-local shared
// atomics and one global atomic per class and chunk, so a class list is in
// no particular order; that changes no rank, since each vertex's sum depends
// only on its class's kernel. The plan's counts start zeroed. Called by the
// whole block.
__device__ __forceinline__ void classify_chunk(int first, const long long* offsets, int n, const long long* bounds,
                                               int num_classes, ClassPlan* plan, int* ids, ClassifyShared& shared) {
  const int v = first + threadIdx.x;
  if (threadIdx.x < kMaxClasses) shared.local[threadIdx.x] = 0;
  __syncthreads();
  int k = 0, pos = 0;
  if (v < n) {
    const long long d = offsets[v + 1] - offsets[v];
    while (k < num_classes - 1 && d > bounds[k]) ++k;
    pos = atomicAdd(&shared.local[k], 1);
  }
  __syncthreads();
  if (threadIdx.x < num_classes)
    shared.base[threadIdx.x] = atomicAdd(&plan->count[threadIdx.x], shared.local[threadIdx.x]);
  __syncthreads();
  if (v < n) ids[static_cast<long long>(k) * n + shared.base[k] + pos] = v;
}

// The first work unit of each class (`first`) and the units in all, from the
// vertices per class: class k of class_lanes(k) lanes takes ceil(count * lanes /
// kBlock) blocks, heaviest class first, so that the long block-per-hub work
// starts early instead of forming the launch's tail.
__device__ __forceinline__ int lay_out_units(const volatile int* counts, int* first) {
  int next = 0;
  for (int c = kMaxClasses - 1; c >= 0; --c) {
    first[c] = next;
    const int lanes = class_lanes(c);
    next += lanes == kBlock ? counts[c] : (counts[c] * lanes + kBlock - 1) / kBlock;
  }
  return next;
}

// With the default's four classes, the last of `blocks` classifying blocks to
// get here lays out the units of the fused launches, so that no host read is
// needed to size them. Called by thread 0 after the block's classify_chunk calls.
__device__ __forceinline__ void lay_out_units_if_last(ClassPlan* plan, unsigned blocks) {
  __threadfence();  // this block's counts are visible before its ticket
  if (atomicAdd(reinterpret_cast<unsigned*>(&plan->ticket), 1u) != blocks - 1) return;
  __threadfence();
  plan->total = lay_out_units(plan->count, plan->first);
}

// The class of work unit u of a class-listed launch (units of the heaviest class first).
__device__ __forceinline__ int unit_class(int u, const ClassPlan* plan) {
  return u >= plan->first[0] ? 0 : u >= plan->first[1] ? 1 : u >= plan->first[2] ? 2 : 3;
}

// This thread's item of a unit of G lanes per vertex whose first item is
// `first_item` (the unit's offset in its class times kBlock): a vertex per
// thread, per G-lane group, or per block.
template <int G>
__device__ __forceinline__ long long unit_item(long long first_item) {
  return G == kBlock ? first_item / kBlock : (first_item + threadIdx.x) / G;
}

}  // namespace dynpr
