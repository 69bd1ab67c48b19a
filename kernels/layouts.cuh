// What kernels and host share: the control blocks the host allocates as int32
// arrays (ClassPlan, IterationState), the default engine's kernel parameter
// structs, passed by value, and the approach code its rank kernels are
// templated on. dynpr.designs mirrors every struct here field by field
// (CLASS_PLAN, ITERATION_STATE, KERNEL_STRUCTS; tests/test_designs.py parses
// this header and compares), so the host fills and indexes them by name.
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

// The stored contributions C[u] = R[u]/d[u] that the default's gathers read:
// double, or float in the module built for a variant whose `contribution` is
// float32 (dynpr.designs.CONTRIBUTION_TYPES, define DYNPR_CONTRIBUTION), which
// halves the bytes a gather moves. Only the store rounds: sums, ranks and the
// convergence test stay double.
#ifndef DYNPR_CONTRIBUTION
#error "compile with -DDYNPR_CONTRIBUTION=double|float (dynpr.designs.nvrtc_defines)"
#endif
using Contribution = DYNPR_CONTRIBUTION;
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

// The approach a rank kernel computes, one template parameter: dynpr.designs
// ApproachFlags summed (affected + frontier + prune), so 0 is Static and ND,
// 1 DT, 2 DF, 3 DF-P.
__host__ __device__ constexpr bool affected(int approach) { return approach >= 1; }
__host__ __device__ constexpr bool frontier(int approach) { return approach >= 2; }
__host__ __device__ constexpr bool prune(int approach) { return approach == 3; }

// Kernel parameters, one struct per launch family. Pointers are device
// addresses (uint64 on the host), fields ordered widest first so that the
// host's aligned NumPy dtype has the same layout. The default engine's
// kernels and DT's search take them as `const __grid_constant__` (sm_70 and
// later): they stay in the parameter space, read where a field is needed,
// where a plain parameter handed on by reference is first copied into values
// the kernel keeps live, which cost the whole-solve kernels registers and
// spills. The baselines' kernels read fields directly and take them plainly,
// where the qualifier only moved registers (docs/dynamic.md, "Kernel structure").

// The graph a launch ranks: in-CSR, 1/out-degree, out-CSR (DF/DF-P's push).
struct GraphArgs {
  const long long* in_offsets;
  const int* sources;
  const double* inv_degree;
  const long long* out_offsets;
  const int* targets;
  int n;
};

// Rank and contribution buffers. rank_fused reads [0] and writes [1] (the
// host swaps them every iteration); iteration i of rank_persistent reads
// [i % 2] and writes the other.
struct RankBuffers {
  double* R[2];
  Contribution* C[2];
};

// Affected flags, the two expansion buffers (read [0], written [1] by
// rank_fused, swapped like RankBuffers) and the ever-affected flags.
struct FrontierBuffers {
  unsigned char* dv;
  unsigned char* dx[2];
  unsigned char* ever;
};

// Class lists (degree_classes' ids, one row of n per class), their plan and
// the classes' in-degree bounds; ids and plan unused without lists.
struct PlanArgs {
  int* ids;
  ClassPlan* plan;
  const long long* bounds;
};

// PageRankOptions as the kernels use them (c0 = (1 - alpha) / n). teleport:
// personalized PageRank's term (1 - alpha) p_v of each vertex (in the ids the
// run iterates on), or null for the uniform c0, so that run reads no array
// (rank_vertex.cuh, teleport_term; the default engine's kernels only).
struct SolveOptions {
  const double* teleport;
  double c0;
  double alpha;
  double tau_f;
  double tau_p;
  double tau;
  double pull_edges;
  int max_iterations;
};

// A batch's edges, and new_id where the graph is relabelled (renamed).
struct BatchArgs {
  const int* del_src;
  const int* del_dst;
  const int* ins_src;
  const int* new_id;
  int num_del;
  int num_ins;
  int renamed;
};

// The whole-solve launch's rings (change and push-work slots, work counters,
// barrier counters), its state, the kept rows' shared capacity (ints) and
// whether the launch prepares itself (classify).
struct SolveScratch {
  double* slots;
  int* work;
  unsigned long long* arrivals;
  IterationState* state;
  int capacity;
  int classify;
};

// One degree class of the baselines' class-per-launch kernels: its vertex ids
// and their count (unlisted kernels walk vertices 0..count and keep those
// whose degree is in (lo, hi]; the thread/block pairs of the partitioned
// design read hi and lo respectively, the degree switch).
struct ClassRange {
  const int* ids;
  long long lo;
  long long hi;
  int count;
};

// The relabelling's original and relabelled in-CSR: new_sources row i is
// sources row order[i] renamed through rank.
struct RelabelArgs {
  const long long* order;
  const int* rank;
  const long long* in_offsets;
  const int* sources;
  const long long* new_offsets;
  int* new_sources;
  int n;
};

static_assert(sizeof(ClassPlan) == (2 * kMaxClasses + 2) * sizeof(int), "ClassPlan is an int32 array");
static_assert(sizeof(IterationState) == 6 * sizeof(int), "IterationState is an int32 array");

}  // namespace dynpr
