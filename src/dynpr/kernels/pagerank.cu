// The default GPU PageRank engine's kernels (dynpr.gpu.pagerank, variant
// "classes"), for Static, ND, DT, DF and DF-P as the paper "Efficient GPU
// Implementation of Static and Incrementally Expanding DF-P PageRank for
// Dynamic Graphs" defines them (Alg. 1-5): vertices in four in-degree classes
// (a thread, a sub-warp, a warp or a block per vertex) gathering precomputed
// contributions R[u]/d[u], one launch per iteration that also ends the
// iteration on the device, the initial marking of DF/DF-P, and the hub-first
// relabelling of large graphs. DT's BFS is in dt_bfs.cu; the designs this one
// is measured against in baselines.cu.
#include "common.cuh"
#include "layouts.cuh"
#include "rank_vertex.cuh"

using dynpr::ClassPlan;
using dynpr::Frontier;
using dynpr::RankArgs;
using dynpr::Row;
using dynpr::class_lanes;
using dynpr::IterationState;
using dynpr::kBlock;
using dynpr::kMaxClasses;
using dynpr::rank_vertex;

// ---- degree classes ---------------------------------------------------------

// Sort the vertex ids of one chunk, [first, first + kBlock), into degree
// classes: class k holds deg in (bounds[k-1], bounds[k]] (bounds[-1] = -1)
// and goes to ids[k * n + ...]. Positions come from block-local shared
// atomics and one global atomic per class and chunk, so a class list is in
// no particular order; that changes no rank, since each vertex's sum depends
// only on its class's kernel. The plan's counts start zeroed. Called by the
// whole block.
__device__ __forceinline__ void classify_chunk(int first, const long long* offsets, int n, const long long* bounds,
                                               int num_classes, ClassPlan* plan, int* ids) {
  __shared__ int local[kMaxClasses], base[kMaxClasses];
  const int v = first + threadIdx.x;
  if (threadIdx.x < kMaxClasses) local[threadIdx.x] = 0;
  __syncthreads();
  int k = 0, pos = 0;
  if (v < n) {
    const long long d = offsets[v + 1] - offsets[v];
    while (k < num_classes - 1 && d > bounds[k]) ++k;
    pos = atomicAdd(&local[k], 1);
  }
  __syncthreads();
  if (threadIdx.x < num_classes) base[threadIdx.x] = atomicAdd(&plan->count[threadIdx.x], local[threadIdx.x]);
  __syncthreads();
  if (v < n) ids[static_cast<long long>(k) * n + base[k] + pos] = v;
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
// get here lays out the units of the fused launch (rank_fused,
// rank_persistent), so that no host read is needed to size it. Called by
// thread 0 after the block's classify_chunk calls.
__device__ __forceinline__ void lay_out_units_if_last(ClassPlan* plan, unsigned blocks) {
  __threadfence();  // this block's counts are visible before its ticket
  if (atomicAdd(reinterpret_cast<unsigned*>(&plan->ticket), 1u) != blocks - 1) return;
  __threadfence();
  plan->total = lay_out_units(plan->count, plan->first);
}

// The starting contribution C[v] = R[v] / d[v], into C and C_other (the
// dynamic step copies nothing where the two buffers agree). With `or_bits`, C
// was zeroed and gets it by an atomic OR of its bits, so that the sign bit a
// batch source ORs in during the same launch (announce_source) holds
// whichever comes first.
__device__ __forceinline__ void start_contribution(int v, const double* R, const double* inv_degree, double* C,
                                                   double* C_other, bool or_bits) {
  const double x = R[v] * inv_degree[v];
  C_other[v] = x;
  if (or_bits) {
    atomicOr(reinterpret_cast<unsigned long long*>(C + v), static_cast<unsigned long long>(__double_as_longlong(x)));
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
__device__ __forceinline__ void announce_source(long long i, const int* del_src, const int* del_dst, int num_del,
                                                const int* ins_src, int renamed, const int* new_id, double* C,
                                                unsigned char* dv) {
  int source = i < num_del ? del_src[i] : ins_src[i - num_del];
  source = renamed ? new_id[source] : source;
  if constexpr (SIGN) {
    atomicOr(reinterpret_cast<unsigned long long*>(C + source), 1ull << 63);
  } else {
    dv[source] = dynpr::kAffected;
  }
  if (i < num_del) dv[renamed ? new_id[del_dst[i]] : del_dst[i]] = dynpr::kAffected;
}

// Vertex classes in one launch (classify_chunk, a chunk per block, then
// lay_out_units_if_last). With `contributions` it also writes the starting
// contributions C = R / d into C and C_other (a launch less).
extern "C" __global__ void __launch_bounds__(kBlock) degree_classes(
    const long long* offsets, int n, const long long* bounds, int num_classes, ClassPlan* plan, int* ids,
    int contributions, const double* R, const double* inv_degree, double* C, double* C_other) {
  const int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (contributions && v < n) start_contribution(v, R, inv_degree, C, C_other, false);
  classify_chunk(blockIdx.x * kBlock, offsets, n, bounds, num_classes, plan, ids);
  if (threadIdx.x == 0 && num_classes == kMaxClasses) lay_out_units_if_last(plan, gridDim.x);
}

// ---- marking DF/DF-P's affected set -------------------------------------------

// Initial marking and the first expansion in one launch, for the fused
// dynamic step: a warp per batch edge marks every out-neighbour (new graph)
// of the edge's source, which is what dn[source] = 1 followed by the
// expansion does, and the target of a deletion. A source is walked once: the
// first warp to set ever[source] takes it (each source is affected anyway,
// through its self-loop), where walking it once per batch edge cost 16 ms on
// R-MAT scale 21 at fraction 0.1, whose hubs are the sources of thousands of
// batch edges. The out-edges walked are push work like an iteration's: the
// last block starts the run in pull mode when they exceed pull_edges.
extern "C" __global__ void __launch_bounds__(kBlock) mark_frontier(
    const int* del_src, const int* del_dst, int num_del, const int* ins_src, int num_ins,
    const long long* offsets, const int* targets, unsigned char* dv, unsigned char* ever, double pull_edges,
    double* delta, IterationState* state) {
  const long long i = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const int lane = threadIdx.x & 31;
  double walked = 0.0;
  if (i < num_del + num_ins) {
    const int u = i < num_del ? del_src[i] : ins_src[i - num_del];
    if (i < num_del && lane == 0) dv[del_dst[i]] = dynpr::kAffected;
    int first = 0;
    if (lane == 0) first = !ever[u] && !dynpr::atomic_or_byte(ever, u, 1);
    if (__shfl_sync(0xffffffffu, first, 0)) {
      const long long begin = offsets[u], end = offsets[u + 1];
      for (long long e = begin + lane; e < end; e += 32) dv[targets[e]] = dynpr::kAffected;
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
extern "C" __global__ void mark_sources(const int* del_src, const int* del_dst, int num_del, const int* ins_src,
                                        int num_ins, int renamed, const int* new_id, double* C, unsigned char* dv) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < num_del + num_ins) announce_source<true>(i, del_src, del_dst, num_del, ins_src, renamed, new_id, C, dv);
}

// The iteration's bookkeeping (see finish_iteration) done by the last block
// to finish: count it, stop when the change (delta[0]) is <= tau or at the
// cap, turn DF/DF-P to pull mode once the push work of an iteration (delta[1],
// in-edges gathered plus out-edges marked) exceeds pull_edges, and reset the
// change, the work, the ticket and the work counter. Called by thread 0 after
// its atomics.
__device__ __forceinline__ void finish_by_last_block(double* delta, IterationState* state, double tau,
                                                     int max_iterations, double pull_edges) {
  __threadfence();  // this block's atomics are visible before its ticket
  if (atomicAdd(&state->ticket, 1u) != gridDim.x - 1) return;
  __threadfence();
  unsigned long long* slots = reinterpret_cast<unsigned long long*>(delta);
  const double change = __longlong_as_double(atomicExch(slots, 0ull));
  if (__longlong_as_double(atomicExch(slots + 1, 0ull)) > pull_edges) state->pull = 1;
  state->ticket = 0;
  state->work = 0;
  state->iterations += 1;
  state->converged = change <= tau;
  if (state->converged || state->iterations >= max_iterations) state->done = 1;
}

// One vertex of the fused launches: Static/ND through rank_vertex, DT, DF and
// DF-P through dynamic_vertex (push or pull mode, see there).
// v's in-edges are `row` (read from in_offsets when not given); BATCHED: see gather.
template <int G, bool AFFECTED, bool FRONTIER, bool PRUNE, bool BATCHED = false>
__device__ __forceinline__ double step_vertex(bool active, int v, const RankArgs& a, const Frontier& fr, bool pull,
                                              double& edges, Row row) {
  if constexpr (AFFECTED) {
    return dynpr::dynamic_vertex<G, FRONTIER, PRUNE, BATCHED>(active, v, a, fr, pull, edges, row);
  } else {
    return rank_vertex<G, false, false, false, true, BATCHED>(active, v, a, row);
  }
}

template <int G, bool AFFECTED, bool FRONTIER, bool PRUNE>
__device__ __forceinline__ double step_vertex(bool active, int v, const RankArgs& a, const Frontier& fr, bool pull,
                                              double& edges) {
  return step_vertex<G, AFFECTED, FRONTIER, PRUNE>(active, v, a, fr, pull, edges, dynpr::in_row(a, v, active));
}

// The end of a fused launch: the block's largest change and push work (none
// in pull mode, which is uniform over the grid) to delta, then the last block
// ends the iteration.
template <bool FRONTIER>
__device__ __forceinline__ void end_block(double change, double edges, bool pull, double* delta,
                                          IterationState* state, double tau, int max_iterations, double pull_edges) {
  change = dynpr::block_max(change);
  if (FRONTIER && !pull) edges = dynpr::block_sum(edges);
  if (threadIdx.x == 0) {
    if (change > 0.0) dynpr::atomic_max_nonneg(delta, change);
    if (FRONTIER && edges > 0.0) atomicAdd(delta + 1, edges);
    finish_by_last_block(delta, state, tau, max_iterations, pull_edges);
  }
}

// Work units ("virtual blocks") of the fused kernels are handed out by a
// counter, so their grid has a fixed size known on the host (about one
// resident wave) whatever the work: block b takes unit b first, then units
// gridDim.x + atomicAdd(counter). The next unit is fetched while the current
// one runs (double-buffered, so no thread reads a slot being rewritten), and
// the __syncthreads at the end of each unit also separates the shared
// scratch of consecutive units' reductions.
template <typename Unit>
__device__ __forceinline__ void for_each_unit(int total, int* counter, Unit unit) {
  __shared__ int next[2];
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
template <bool AFFECTED, bool FRONTIER, bool PRUNE>
__device__ __forceinline__ void chunk_unit(int u, int n, const long long* bounds, const RankArgs& a,
                                           const Frontier& fr, bool pull, double& change, double& edges) {
  __shared__ int listed[kMaxClasses - 1][kBlock];
  __shared__ int listed_count[kMaxClasses - 1];
  if (threadIdx.x < kMaxClasses - 1) listed_count[threadIdx.x] = 0;
  __syncthreads();
  const int v = u * kBlock + threadIdx.x;
  bool own = false;
  if (v < n) {
    const long long d = a.in_offsets[v + 1] - a.in_offsets[v];
    own = d <= bounds[0];
    if (!own) {
      const int k = d <= bounds[1] ? 0 : d <= bounds[2] ? 1 : 2;
      listed[k][atomicAdd(&listed_count[k], 1)] = v;
    }
  }
  __syncthreads();
  change = fmax(change, step_vertex<1, AFFECTED, FRONTIER, PRUNE>(own, v, a, fr, pull, edges));
  // Loop bounds are uniform over the block, so every lane of a warp calls.
  const int count8 = listed_count[0], count32 = listed_count[1], count_block = listed_count[2];
  constexpr int kSub = class_lanes(1);
  const int warp = threadIdx.x / 32;
  for (int i = threadIdx.x / kSub; i - static_cast<int>(threadIdx.x / kSub) < count8; i += kBlock / kSub) {
    const bool active = i < count8;
    change = fmax(change, step_vertex<kSub, AFFECTED, FRONTIER, PRUNE>(active, active ? listed[0][i] : 0, a, fr,
                                                                      pull, edges));
  }
  for (int i = warp; i - warp < count32; i += kBlock / 32) {
    const bool active = i < count32;
    change = fmax(change, step_vertex<32, AFFECTED, FRONTIER, PRUNE>(active, active ? listed[1][i] : 0, a, fr, pull,
                                                                    edges));
  }
  for (int i = 0; i < count_block; ++i) {
    change = fmax(change, step_vertex<kBlock, AFFECTED, FRONTIER, PRUNE>(true, listed[2][i], a, fr, pull, edges));
    __syncthreads();  // block_sum's scratch is reused by the next hub
  }
}

// The class of work unit u of a class-listed launch (units of the heaviest class first).
__device__ __forceinline__ int unit_class(int u, const ClassPlan* plan) {
  return u >= plan->first[0] ? 0 : u >= plan->first[1] ? 1 : u >= plan->first[2] ? 2 : 3;
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
template <bool LISTED, bool AFFECTED, bool FRONTIER, bool PRUNE>
__device__ __forceinline__ void sweep(const int* ids, int n, const ClassPlan* plan, const long long* bounds,
                                      const RankArgs& a, const Frontier& fr, bool pull, int* work, double& change,
                                      double& edges) {
  if constexpr (!LISTED) {
    for_each_unit((n + kBlock - 1) / kBlock, work, [&](int u) {
      chunk_unit<AFFECTED, FRONTIER, PRUNE>(u, n, bounds, a, fr, pull, change, edges);
    });
    return;
  }
  for_each_unit(plan->total, work, [&](int u) {
    const int k = unit_class(u, plan);  // uniform over the block: every thread takes the same branch
    const int* class_ids = ids + static_cast<long long>(k) * n;
    const long long first_item = static_cast<long long>(u - plan->first[k]) * kBlock;
    const long long* in_offsets = a.in_offsets;
    bool active;
    int v;
    switch (k) {
      case 0:
        v = dynpr::class_vertex<true>(first_item + threadIdx.x, class_ids, plan->count[0], in_offsets, 0, 0, active);
        change = fmax(change, step_vertex<class_lanes(0), AFFECTED, FRONTIER, PRUNE>(active, v, a, fr, pull, edges));
        break;
      case 1:
        v = dynpr::class_vertex<true>((first_item + threadIdx.x) / class_lanes(1), class_ids, plan->count[1],
                                      in_offsets, 0, 0, active);
        change = fmax(change, step_vertex<class_lanes(1), AFFECTED, FRONTIER, PRUNE>(active, v, a, fr, pull, edges));
        break;
      case 2:
        v = dynpr::class_vertex<true>((first_item + threadIdx.x) / class_lanes(2), class_ids, plan->count[2],
                                      in_offsets, 0, 0, active);
        change = fmax(change, step_vertex<class_lanes(2), AFFECTED, FRONTIER, PRUNE>(active, v, a, fr, pull, edges));
        break;
      default:
        v = dynpr::class_vertex<true>(first_item / kBlock, class_ids, plan->count[3], in_offsets, 0, 0, active);
        change = fmax(change, step_vertex<kBlock, AFFECTED, FRONTIER, PRUNE>(active, v, a, fr, pull, edges));
    }
  });
}

// One iteration per launch (variant "classes" on larger graphs): the sweep,
// then the last block to finish ends the iteration, so an iteration is one
// kernel, replayed from CUDA graphs. Launches after `done` return at once.
// ids and plan are unused without lists, bounds with them; the frontier
// arguments of approaches without a frontier may be any pointers.
template <bool LISTED, bool AFFECTED, bool FRONTIER, bool PRUNE>
__global__ void __launch_bounds__(kBlock) rank_fused(
    const int* ids, int n, const ClassPlan* plan, const long long* bounds, const long long* in_offsets,
    const int* sources, const double* inv_degree, const double* R, const double* C, double* Rnew, double* Cnew,
    unsigned char* dv, double c0, double alpha, double tau_f, double tau_p, const long long* out_offsets,
    const int* targets, unsigned char* dx_in, unsigned char* dx_out, unsigned char* ever, double* delta,
    IterationState* state, double tau, int max_iterations, double pull_edges) {
  if (state->done) return;
  const bool pull = FRONTIER && state->pull;
  const Frontier fr{out_offsets, targets, dx_in, dx_out, ever};
  const RankArgs a{in_offsets, sources, inv_degree, R, C, Rnew, Cnew, dv, nullptr, c0, alpha, tau_f, tau_p};
  double change = 0.0, edges = 0.0;
  sweep<LISTED, AFFECTED, FRONTIER, PRUNE>(ids, n, plan, bounds, a, fr, pull, &state->work, change, edges);
  end_block<FRONTIER>(change, edges, pull, delta, state, tau, max_iterations, pull_edges);
}

// A work unit kept by one block for a whole solve (rank_persistent on graphs of
// at most one unit per block): its class, each thread's vertex and that
// vertex's in-edge row, in `sources`. The rows are copied once into the
// block's shared memory where they fit (`capacity` ints; else the graph's
// in-CSR is read), so an iteration's chain of dependent loads is the
// contributions alone, not class plan, vertex id, offsets and sources first.
// A row starts at the same position mod 4 as in the in-CSR, which keeps the
// warp and block classes' int4 reads, and so their order of additions (gather).
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
  unit.v = dynpr::class_vertex<true>(item, ids + static_cast<long long>(unit.k) * n, plan->count[unit.k], in_offsets,
                                     0, 0, unit.active);
  const Row row = unit.active ? Row{in_offsets[unit.v], in_offsets[unit.v + 1]} : Row{};
  const long long degree = row.end - row.begin;
  long long total;  // each group's share: its row and up to 3 ints of alignment
  long long base = dynpr::block_exclusive_sum(lane == 0 ? degree + 3 : 0, total);
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
template <bool AFFECTED, bool FRONTIER, bool PRUNE>
__device__ __forceinline__ double kept_step(const KeptUnit& unit, const RankArgs& a, const Frontier& fr, bool pull,
                                            double& edges) {
  switch (unit.k) {
    case 0:
      return step_vertex<class_lanes(0), AFFECTED, FRONTIER, PRUNE, true>(unit.active, unit.v, a, fr, pull, edges,
                                                                          unit.row);
    case 1:
      return step_vertex<class_lanes(1), AFFECTED, FRONTIER, PRUNE, true>(unit.active, unit.v, a, fr, pull, edges,
                                                                          unit.row);
    case 2:
      return step_vertex<class_lanes(2), AFFECTED, FRONTIER, PRUNE, true>(unit.active, unit.v, a, fr, pull, edges,
                                                                          unit.row);
    default:
      return step_vertex<kBlock, AFFECTED, FRONTIER, PRUNE, true>(unit.active, unit.v, a, fr, pull, edges, unit.row);
  }
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
    for (long long first = row.begin + threadIdx.x % G; first < row.end && !found; first += dynpr::kGatherBatch * G) {
#pragma unroll
      for (int j = 0; j < dynpr::kGatherBatch; ++j) {
        const long long e = first + j * G;
        if (e < row.end) found |= __ldcg(dv + sources[e]) != 0;
      }
    }
  }
  found = dynpr::group_any<G>(found);
  if (found && (G == kBlock ? threadIdx.x == 0 : threadIdx.x % G == 0)) {
    dv[v] = dynpr::kAffected;
    return true;
  }
  return false;
}

// reach_vertex over a kept unit (its rows in shared memory where they fit).
__device__ __forceinline__ bool kept_reach(const KeptUnit& unit, unsigned char* dv) {
  switch (unit.k) {
    case 0:
      return reach_vertex<class_lanes(0)>(unit.active, unit.v, unit.row, unit.sources, dv);
    case 1:
      return reach_vertex<class_lanes(1)>(unit.active, unit.v, unit.row, unit.sources, dv);
    case 2:
      return reach_vertex<class_lanes(2)>(unit.active, unit.v, unit.row, unit.sources, dv);
    default:
      return reach_vertex<kBlock>(unit.active, unit.v, unit.row, unit.sources, dv);
  }
}

// A whole solve in one cooperative launch (small graphs, where an iteration
// costs about a launch and a few dependent loads: the variant
// "classes_persistent", and "classes" below dynpr.designs.PERSISTENT_EDGES).
// The grid is every block the device holds at once. Iteration i sweeps
// buffer i % 2 into the other; slot j = (L + i) % 3 of `slots` (two doubles)
// and counter j of `work` and of `arrivals` serve it (L: DT's search levels
// before it, else 0), and slot and counters (j + 1) % 3 are cleared during
// iteration i, when every block has read them last (before the barrier
// ending the step before). Every block takes the same
// decision (stop, turn to pull) from the same values, so no block waits on
// another's word.
// - Kept units: with KEEP, class lists and at most one unit per block, block b
//   keeps unit b for the whole solve (keep_unit; `staged`: dynamic shared
//   memory of `capacity` ints), the blocks without a unit leave at once, and
//   a barrier of the units' blocks alone ends an iteration and tells every
//   block whether any vertex changed by more than tau (grid_barrier_or).
// - Prologue (`classify`, set where the host found the units kept): what
//   degree_classes and mark_sources (DF/DF-P; none for Static and ND) do in
//   launches of their own elsewhere, then a barrier of every block (counter
//   3); each block lays the units out from the counts itself (no last block
//   to wait for). Launches and events less per solve. DT's batch edges flag
//   its search's seeds instead, and its search (dt_reachable elsewhere) runs
//   over the kept rows, bottom-up (kept_reach), before the iterations.
// - Swept units: otherwise every block takes units from the counter (sweep),
//   folds its largest change into the slot and a grid-wide sync ends the
//   iteration.
// DF/DF-P in push mode add their push work to the slot's second double
// before the barrier and read it after it (turn to pull). slots, work,
// arrivals (four counters) and the state start zeroed (the state's pull flag
// may be set by mark_frontier); the state gets the iterations, converged and
// done.
// KEEP (with LISTED) compiles the kept path in, for graphs whose units the
// host counts no more than the blocks (dynpr.gpu.classes.ClassRanks); its
// launch bounds keep the dynamic approaches' registers from spilling there
// (ptxas's own choice spills) and give Static and ND the 64 registers of
// four blocks per multiprocessor that their batched gathers take. Without
// KEEP the kernel is the swept one alone: Static, ND and DT over class lists
// at 40 registers and six blocks per multiprocessor, DF, DF-P and unlisted DT
// (which would spill at 40) at most 64 and four. Stated, because NVRTC's own
// choice differs from nvcc's and went to 32 registers and eight blocks, whose
// wider grid-wide sync made web-NotreDame's Static 15% slower; DT at six
// rather than four computes up to 12% faster (docs/dynamic.md).
template <bool KEEP, bool LISTED, bool AFFECTED, bool FRONTIER, bool PRUNE>
__global__ void __launch_bounds__(kBlock, KEEP ? (AFFECTED ? 3 : 4) : ((FRONTIER || (AFFECTED && !LISTED)) ? 4 : 6))
    rank_persistent(
    int* ids, int n, ClassPlan* plan, const long long* bounds, const long long* in_offsets,
    const int* sources, const double* inv_degree, double* R0, double* C0, double* R1, double* C1, unsigned char* dv,
    double c0, double alpha, double tau_f, double tau_p, const long long* out_offsets, const int* targets,
    unsigned char* dx0, unsigned char* dx1, unsigned char* ever, double* slots, int* work,
    unsigned long long* arrivals, int capacity, int classify, const int* del_src, const int* del_dst, int num_del,
    const int* ins_src, int num_ins, int renamed, const int* new_id, IterationState* state, double tau,
    int max_iterations, double pull_edges) {
  extern __shared__ int staged[];
  if (KEEP && LISTED && classify) {
    // What degree_classes and mark_sources do in launches of their own elsewhere, then a
    // barrier of every block (counter 3) before the counts and contributions are read.
    const int edges = num_del + num_ins;  // none for Static and ND
    for (int first = blockIdx.x * kBlock; first < n; first += gridDim.x * kBlock) {
      if (first + threadIdx.x < n) start_contribution(first + threadIdx.x, R0, inv_degree, C0, C1, FRONTIER && edges);
      classify_chunk(first, in_offsets, n, bounds, kMaxClasses, plan, ids);
    }
    for (long long i = blockIdx.x * kBlock + threadIdx.x; i < edges; i += gridDim.x * kBlock)
      announce_source<FRONTIER>(i, del_src, del_dst, num_del, ins_src, renamed, new_id, C0, dv);
    dynpr::grid_barrier_or(&arrivals[3], gridDim.x, false);
    __shared__ ClassPlan own;  // every block lays the units out itself: no last block to wait for
    if (threadIdx.x == 0) {
      for (int c = 0; c < kMaxClasses; ++c) own.count[c] = __ldcg(&plan->count[c]);
      own.total = lay_out_units(own.count, own.first);
    }
    __syncthreads();
    plan = &own;
  }
  const int total = KEEP && LISTED ? plan->total : 0;
  const bool kept = total > 0 && total <= static_cast<int>(gridDim.x);  // uniform over the grid
  if (kept && static_cast<int>(blockIdx.x) >= total) return;
  KeptUnit unit{};
  if (kept) unit = keep_unit(blockIdx.x, ids, n, plan, in_offsets, sources, staged, capacity);
  // DT's reachability where the launch prepared itself (its seeds flagged above): levels of
  // kept_reach, each ended by the units' barrier, until one reaches nothing. They take the
  // barrier counters of the ring first; the iterations go on from there.
  int levels = 0;
  if constexpr (KEEP && AFFECTED && !FRONTIER) {
    for (bool reached = kept && classify; reached; ++levels) {
      if (blockIdx.x == 0 && threadIdx.x == 0) arrivals[(levels + 1) % 3] = 0;
      reached = dynpr::grid_barrier_or(&arrivals[levels % 3], total, kept_reach(unit, dv));
    }
  }
  bool pull = FRONTIER && state->pull;
  bool marks = !pull;  // whether dx holds marks pushed by the iteration before (none before a pull)
  for (int i = 0;; ++i) {
    const int b = i & 1, slot = (levels + i) % 3;
    if (blockIdx.x == 0 && threadIdx.x == 0) {
      const int next = (levels + i + 1) % 3;
      work[next] = 0;
      slots[2 * next] = slots[2 * next + 1] = 0.0;
      arrivals[next] = 0;
    }
    const Frontier fr{out_offsets, targets, marks ? (b ? dx1 : dx0) : nullptr, b ? dx0 : dx1, ever};
    double change = 0.0, edges = 0.0;
    if (kept) {
      const RankArgs a{in_offsets, unit.sources, inv_degree, b ? R1 : R0, b ? C1 : C0, b ? R0 : R1, b ? C0 : C1,
                       dv, nullptr, c0, alpha, tau_f, tau_p};
      change = kept_step<AFFECTED, FRONTIER, PRUNE>(unit, a, fr, pull, edges);
    } else {
      const RankArgs a{in_offsets, sources, inv_degree, b ? R1 : R0, b ? C1 : C0, b ? R0 : R1, b ? C0 : C1,
                       dv, nullptr, c0, alpha, tau_f, tau_p};
      sweep<LISTED, AFFECTED, FRONTIER, PRUNE>(ids, n, plan, bounds, a, fr, pull, &work[slot], change, edges);
    }
    const bool push = FRONTIER && !pull;  // pull: uniform, and no push work to count
    marks = push;
    if (push) {
      edges = dynpr::block_sum(edges);
      if (threadIdx.x == 0 && edges > 0.0) atomicAdd(&slots[2 * slot + 1], edges);
    }
    bool converged;
    if (kept) {
      converged = !dynpr::grid_barrier_or(&arrivals[slot], total, change > tau);
    } else {
      change = dynpr::block_max(change);
      if (threadIdx.x == 0 && change > 0.0) dynpr::atomic_max_nonneg(&slots[2 * slot], change);
      cooperative_groups::this_grid().sync();
      converged = __ldcg(&slots[2 * slot]) <= tau;
    }
    if (push && __ldcg(&slots[2 * slot + 1]) > pull_edges) pull = true;
    if (converged || i + 1 >= max_iterations) {
      if (blockIdx.x == 0 && threadIdx.x == 0) {
        state->iterations = i + 1;
        state->converged = converged;
        state->pull = pull;
        state->done = 1;
      }
      return;
    }
  }
}


// The starting contributions alone (start_contribution), where no classes are listed.
extern "C" __global__ void contributions(const double* R, const double* inv_degree, int n, double* C,
                                         double* C_other) {
  const int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v < n) start_contribution(v, R, inv_degree, C, C_other, false);
}

// Keeps the device busy for `nanoseconds` before a timed run while the host enqueues the
// run's launches, so that the run's events time the device's work back to back rather than
// the device waiting for each of Python's launches (tens of microseconds on a small graph).
extern "C" __global__ void hold(long long nanoseconds) {
  long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    __nanosleep(1000);
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < nanoseconds);
}

// ---- locality relabelling (Static/ND on graphs whose contributions overflow the L2) --

// Vertex i of the relabelled graph is vertex order[i]: rank[order[i]] = i,
// and its in-degree (into degree[i], scanned into the new in-offsets on the
// host side), 1/d and starting rank move with it.
extern "C" __global__ void relabel_vertices(const long long* order, int n, const long long* in_offsets,
                                            const double* inv_degree, const double* start, int* rank,
                                            long long* degree, double* new_inv_degree, double* new_start) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const int v = static_cast<int>(order[i]);
  rank[v] = i;
  degree[i] = in_offsets[v + 1] - in_offsets[v];
  new_inv_degree[i] = inv_degree[v];
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
extern "C" __global__ void __launch_bounds__(kBlock) relabel_rows(
    const long long* order, int n, const long long* in_offsets, const int* sources, const int* rank,
    const long long* new_offsets, int* new_sources, long long limit) {
  const long long i = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) >> 3;
  if (i >= n) return;
  const long long begin = new_offsets[i], d = new_offsets[i + 1] - begin;
  if (d > limit) return;
  const long long old = in_offsets[order[i]];
  for (long long e = threadIdx.x & 7; e < d; e += 8) new_sources[begin + e] = rank[sources[old + e]];
}

// The rows longer than `limit` (new ids rows[0..count)), cut into chunks of
// `chunk` edges, a block per chunk: last[j] = the chunks of rows[0..j]
// (inclusive scan), so block b copies chunk b - last[j-1] of the row j with
// last[j-1] <= b < last[j].
extern "C" __global__ void __launch_bounds__(kBlock) relabel_long_rows(
    const long long* order, const long long* rows, const long long* last, int count, long long chunk,
    const long long* in_offsets, const int* sources, const int* rank, const long long* new_offsets,
    int* new_sources) {
  const long long b = blockIdx.x;
  int lo = 0, hi = count - 1;
  while (lo < hi) {  // the first j with last[j] > b
    const int mid = (lo + hi) / 2;
    if (last[mid] > b) hi = mid;
    else lo = mid + 1;
  }
  const long long i = rows[lo], first = (b - (lo ? last[lo - 1] : 0)) * chunk;
  const long long begin = new_offsets[i], end = min(new_offsets[i + 1] - begin, first + chunk);
  const long long old = in_offsets[order[i]];
  for (long long e = first + threadIdx.x; e < end; e += kBlock) new_sources[begin + e] = rank[sources[old + e]];
}
