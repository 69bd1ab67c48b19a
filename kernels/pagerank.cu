// The default GPU PageRank engine's entry points (dynpr.gpu.pagerank, variant
// "classes"), for Static, ND, DT, DF and DF-P as the paper "Efficient GPU
// Implementation of Static and Incrementally Expanding DF-P PageRank for
// Dynamic Graphs" defines them (Alg. 1-5): vertices in four in-degree classes
// (classes.cuh) gathering precomputed contributions R[u]/d[u], one launch per
// iteration or per solve that also ends the iteration on the device
// (units.cuh, kept.cuh), DF/DF-P's initial marking (marking.cuh) and the
// hub-first relabelling of large graphs (relabel.cuh). DT's BFS is in
// dt_bfs.cu. Launches take the parameter structs of layouts.cuh; the rank
// kernels are templated on the approach code A (layouts.cuh).
#include "classes.cuh"
#include "common.cuh"
#include "kept.cuh"
#include "layouts.cuh"
#include "marking.cuh"
#include "rank_vertex.cuh"
#include "relabel.cuh"
#include "units.cuh"

using namespace dynpr;

// Vertex classes in one launch (classify_chunk, a chunk per block, then
// lay_out_units_if_last). With `contributions` it also writes the starting
// contributions C = R / d into r.C[0] and r.C[1] from r.R[0] (a launch less).
extern "C" __global__ void __launch_bounds__(kBlock) degree_classes(const __grid_constant__ GraphArgs g,
    const __grid_constant__ PlanArgs p, int num_classes, const __grid_constant__ RankBuffers r, int contributions) {
  __shared__ ClassifyShared shared;
  const int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (contributions && v < g.n) start_contribution(v, r.R[0], g.inv_degree, r.C[0], r.C[1], false);
  classify_chunk(blockIdx.x * kBlock, g.in_offsets, g.n, p.bounds, num_classes, p.plan, p.ids, shared);
  if (threadIdx.x == 0 && num_classes == kMaxClasses) lay_out_units_if_last(p.plan, gridDim.x);
}

// The starting contributions alone (start_contribution), where no classes are listed.
extern "C" __global__ void start_contributions(const __grid_constant__ GraphArgs g,
    const __grid_constant__ RankBuffers r) {
  const int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v < g.n) start_contribution(v, r.R[0], g.inv_degree, r.C[0], r.C[1], false);
}

// Keeps the device busy for `nanoseconds` before a timed run while the host enqueues the
// run's launches, so that the run's events time the device's work back to back rather than
// the device waiting for each of Python's launches.
extern "C" __global__ void hold(long long nanoseconds) {
  long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    __nanosleep(1000);
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < nanoseconds);
}

// The iteration's bookkeeping done by the last block to finish: count it,
// stop when the change (delta[0]) is <= tau or at the cap, turn DF/DF-P to
// pull mode once the push work of an iteration (delta[1], in-edges gathered
// plus out-edges marked) exceeds pull_edges, and reset the change, the work,
// the ticket and the work counter. Called by thread 0 after its atomics.
__device__ __forceinline__ void finish_by_last_block(double* delta, IterationState* state, const SolveOptions& o) {
  __threadfence();  // this block's atomics are visible before its ticket
  if (atomicAdd(&state->ticket, 1u) != gridDim.x - 1) return;
  __threadfence();
  unsigned long long* slots = reinterpret_cast<unsigned long long*>(delta);
  const double change = __longlong_as_double(atomicExch(slots, 0ull));
  if (__longlong_as_double(atomicExch(slots + 1, 0ull)) > o.pull_edges) state->pull = 1;
  state->ticket = 0;
  state->work = 0;
  state->iterations += 1;
  state->converged = change <= o.tau;
  if (state->converged || state->iterations >= o.max_iterations) state->done = 1;
}

// The rank step's arguments for iteration buffers `read` -> `write`; sources
// may be a kept unit's staged rows.
__device__ __forceinline__ RankArgs rank_args(const GraphArgs& g, const int* sources, const RankBuffers& r, int read,
                                              unsigned char* dv, const SolveOptions& o) {
  // Ternaries, not r.R[read]: a parameter array indexed at run time is copied to local memory.
  return RankArgs{g.in_offsets, sources, g.inv_degree, read ? r.R[1] : r.R[0], read ? r.C[1] : r.C[0],
                  read ? r.R[0] : r.R[1], read ? r.C[0] : r.C[1], dv, nullptr, o.c0, o.alpha, o.tau_f, o.tau_p,
                  o.teleport};
}

// One iteration per launch (variant "classes" on larger graphs): the sweep,
// then the last block to finish ends the iteration, so an iteration is one
// kernel, replayed from CUDA graphs. Launches after `done` return at once.
// The block's largest change and push work (none in pull mode, which is
// uniform over the grid) go to delta before. Reads r[0] and f.dx[0], writes
// r[1] and f.dx[1].
template <bool LISTED, int A>
__global__ void __launch_bounds__(kBlock) rank_fused(const __grid_constant__ GraphArgs g,
    const __grid_constant__ PlanArgs p, const __grid_constant__ RankBuffers r,
    const __grid_constant__ FrontierBuffers f, const __grid_constant__ SolveOptions o, double* delta,
    IterationState* state) {
  __shared__ SweepShared<LISTED> shared;
  if (state->done) return;
  const bool pull = frontier(A) && state->pull;
  const Frontier fr{g.out_offsets, g.targets, f.dx[0], f.dx[1], f.ever};
  const RankArgs a = rank_args(g, g.sources, r, 0, f.dv, o);
  double change = 0.0, edges = 0.0;
  sweep<LISTED, A>(p.ids, g.n, p.plan, p.bounds, a, fr, pull, &state->work, change, edges, shared);
  change = block_max(change);
  if (frontier(A) && !pull) edges = block_sum(edges);
  if (threadIdx.x == 0) {
    if (change > 0.0) atomic_max_nonneg(delta, change);
    if (frontier(A) && edges > 0.0) atomicAdd(delta + 1, edges);
    finish_by_last_block(delta, state, o);
  }
}

// rank_persistent's shared memory: the sweep's, and where the launch
// prepares itself (KEEP with LISTED) the classification's and its own plan.
template <bool KEEP, bool LISTED>
struct SolveShared {
  SweepShared<LISTED> sweep;
};
template <>
struct SolveShared<true, true> {
  SweepShared<true> sweep;
  ClassifyShared classify;
  ClassPlan plan;
};

// A whole solve in one cooperative launch (small graphs, where an iteration
// costs about a launch and a few dependent loads: the variant
// "classes_persistent", and "classes" below dynpr.designs.PERSISTENT_EDGES).
// The grid is every block the device holds at once. Iteration i sweeps
// buffer i % 2 into the other; slot j = (L + i) % 3 of `slots` (two doubles)
// and counter j of `work` and of `arrivals` serve it (L: DT's search levels
// before it, else 0), and slot and counters (j + 1) % 3 are cleared during
// iteration i, when every block has read them last (before the barrier
// ending the step before). Every block takes the same decision (stop, turn
// to pull) from the same values, so no block waits on another's word.
// - Kept units: with KEEP, class lists and at most one unit per block, block b
//   keeps unit b for the whole solve (keep_unit; `staged`: dynamic shared
//   memory of s.capacity ints), the blocks without a unit leave at once, and
//   a barrier of the units' blocks alone ends an iteration and tells every
//   block whether any vertex changed by more than tau (grid_barrier_or).
// - Prologue (s.classify, set where the host found the units kept): what
//   degree_classes and mark_sources (DF/DF-P; none for Static and ND) do in
//   launches of their own elsewhere, then a barrier of every block (counter
//   3, the fourth of `arrivals`); each block lays the units out from the
//   counts itself (no last block to wait for). DT's batch edges flag its
//   search's seeds instead, and its search runs over the kept rows,
//   bottom-up (kept_reach), before the iterations.
// - Swept units: otherwise every block takes units from the counter (sweep),
//   folds its largest change into the slot and a grid-wide sync ends the
//   iteration.
// DF/DF-P in push mode add their push work to the slot's second double
// before the barrier and read it after it (turn to pull). slots, work,
// arrivals and the state start zeroed (the state's pull flag may be set by
// mark_frontier); the state gets the iterations, converged and done.
// Launch bounds: stated, because NVRTC's own choice (fewer registers, more
// blocks) spills or widens the grid-wide sync; the kept path's keep the
// dynamic approaches' registers from spilling, the swept one gives Static, ND
// and listed DT six blocks per multiprocessor and the rest four
// (docs/dynamic.md, "Kernel structure").
template <bool KEEP, bool LISTED, int A>
__global__ void __launch_bounds__(kBlock, KEEP ? (affected(A) ? 3 : 4)
                                               : ((frontier(A) || (affected(A) && !LISTED)) ? 4 : 6))
    rank_persistent(const __grid_constant__ GraphArgs g, const __grid_constant__ PlanArgs p,
                    const __grid_constant__ RankBuffers r, const __grid_constant__ FrontierBuffers f,
                    const __grid_constant__ SolveOptions o, const __grid_constant__ SolveScratch s,
                    const __grid_constant__ BatchArgs batch) {
  extern __shared__ int staged[];
  __shared__ SolveShared<KEEP, LISTED> shared;
  const ClassPlan* plan = p.plan;
  if constexpr (KEEP && LISTED) {
    if (s.classify) {
      const int edges = batch.num_del + batch.num_ins;  // none for Static and ND
      for (int first = blockIdx.x * kBlock; first < g.n; first += gridDim.x * kBlock) {
        if (first + threadIdx.x < g.n)
          start_contribution(first + threadIdx.x, r.R[0], g.inv_degree, r.C[0], r.C[1], frontier(A) && edges);
        classify_chunk(first, g.in_offsets, g.n, p.bounds, kMaxClasses, p.plan, p.ids, shared.classify);
      }
      for (long long i = blockIdx.x * kBlock + threadIdx.x; i < edges; i += gridDim.x * kBlock)
        announce_source<frontier(A)>(i, batch, r.C[0], f.dv);
      grid_barrier_or(&s.arrivals[3], gridDim.x, false);
      if (threadIdx.x == 0) {  // every block lays the units out itself: no last block to wait for
        for (int c = 0; c < kMaxClasses; ++c) shared.plan.count[c] = __ldcg(&p.plan->count[c]);
        shared.plan.total = lay_out_units(shared.plan.count, shared.plan.first);
      }
      __syncthreads();
      plan = &shared.plan;
    }
  }
  const int total = KEEP && LISTED ? plan->total : 0;
  const bool kept = total > 0 && total <= static_cast<int>(gridDim.x);  // uniform over the grid
  if (kept && static_cast<int>(blockIdx.x) >= total) return;
  KeptUnit unit{};
  if (kept) unit = keep_unit(blockIdx.x, p.ids, g.n, plan, g.in_offsets, g.sources, staged, s.capacity);
  // DT's reachability where the launch prepared itself (its seeds flagged above): levels of
  // kept_reach, each ended by the units' barrier, until one reaches nothing. They take the
  // barrier counters of the ring first; the iterations go on from there.
  int levels = 0;
  if constexpr (KEEP && affected(A) && !frontier(A)) {
    for (bool reached = kept && s.classify; reached; ++levels) {
      if (blockIdx.x == 0 && threadIdx.x == 0) s.arrivals[(levels + 1) % 3] = 0;
      reached = grid_barrier_or(&s.arrivals[levels % 3], total, kept_reach(unit, f.dv));
    }
  }
  bool pull = frontier(A) && s.state->pull;
  bool marks = !pull;  // whether dx holds marks pushed by the iteration before (none before a pull)
  for (int i = 0;; ++i) {
    const int b = i & 1, slot = (levels + i) % 3;
    if (blockIdx.x == 0 && threadIdx.x == 0) {
      const int next = (levels + i + 1) % 3;
      s.work[next] = 0;
      s.slots[2 * next] = s.slots[2 * next + 1] = 0.0;
      s.arrivals[next] = 0;
    }
    const Frontier fr{g.out_offsets, g.targets, marks ? (b ? f.dx[1] : f.dx[0]) : nullptr, b ? f.dx[0] : f.dx[1],
                      f.ever};
    double change = 0.0, edges = 0.0;
    if (kept) {
      change = kept_step<A>(unit, rank_args(g, unit.sources, r, b, f.dv, o), fr, pull, edges);
    } else {
      sweep<LISTED, A>(p.ids, g.n, plan, p.bounds, rank_args(g, g.sources, r, b, f.dv, o), fr, pull, &s.work[slot],
                       change, edges, shared.sweep);
    }
    const bool push = frontier(A) && !pull;  // pull: uniform, and no push work to count
    marks = push;
    if (push) {
      edges = block_sum(edges);
      if (threadIdx.x == 0 && edges > 0.0) atomicAdd(&s.slots[2 * slot + 1], edges);
    }
    bool converged;
    if (kept) {
      converged = !grid_barrier_or(&s.arrivals[slot], total, change > o.tau);
    } else {
      change = block_max(change);
      if (threadIdx.x == 0 && change > 0.0) atomic_max_nonneg(&s.slots[2 * slot], change);
      cooperative_groups::this_grid().sync();
      converged = __ldcg(&s.slots[2 * slot]) <= o.tau;
    }
    if (push && __ldcg(&s.slots[2 * slot + 1]) > o.pull_edges) pull = true;
    if (converged || i + 1 >= o.max_iterations) {
      if (blockIdx.x == 0 && threadIdx.x == 0) {
        s.state->iterations = i + 1;
        s.state->converged = converged;
        s.state->pull = pull;
        s.state->done = 1;
      }
      return;
    }
  }
}
