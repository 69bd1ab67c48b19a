// Control blocks the host allocates as int32 arrays and the kernels read and
// write. dynpr.designs.CLASS_PLAN and ITERATION_STATE mirror these structs
// field by field (tests/test_designs.py parses this header and compares), so
// the host indexes them by name, not by number.
#pragma once
#include "common.cuh"

namespace dynpr {

// Lanes per vertex of the default's in-degree classes, from
// dynpr.designs.CLASS_LANES (define DYNPR_CLASS_LANES): a thread, a sub-warp,
// a warp, a block. The kernels' code paths assume that shape.
#ifndef DYNPR_CLASS_LANES
#error "compile with -DDYNPR_CLASS_LANES=<lanes of each class> (dynpr.designs.nvrtc_defines)"
#endif
__host__ __device__ constexpr int class_lanes(int k) {
  constexpr int lanes[] = {DYNPR_CLASS_LANES};
  return lanes[k];
}
constexpr int kMaxClasses = 4;
static_assert(class_lanes(0) == 1 && class_lanes(1) < 32 && 32 % class_lanes(1) == 0 && class_lanes(2) == 32 &&
                  class_lanes(3) == kBlock,
              "classes are a thread, a sub-warp, a warp and a block");

// Written by degree_classes: vertices per class, the first work unit of each
// class in the fused launch (heaviest class first), the units in all, and the
// ticket that elects the classification's last block.
struct ClassPlan {
  int count[kMaxClasses];
  int first[kMaxClasses];
  int total;
  int ticket;
};

// The iteration loop's state on the device: iterations done, the stop flag
// every later launch checks, whether the last change met the tolerance (0
// when the run stopped at the cap), the ticket that elects an iteration's
// last block, the counter handing out work units, and whether DF/DF-P
// iterate in pull mode (rank_vertex.cuh, dynamic_vertex).
struct IterationState {
  int iterations;
  int done;
  int converged;
  unsigned int ticket;
  int work;
  int pull;
};

static_assert(sizeof(ClassPlan) == (2 * kMaxClasses + 2) * sizeof(int), "ClassPlan is an int32 array");
static_assert(sizeof(IterationState) == 6 * sizeof(int), "IterationState is an int32 array");

}  // namespace dynpr
