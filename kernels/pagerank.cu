// PageRank kernels for Static, ND, DT, DF and DF-P (seed 003, Alg. 1-5).
//
// Conventions: vertex ids int, CSR offsets long long, ranks double, flags
// unsigned char. A "listed" kernel walks a partition's vertex ids; an
// unlisted one walks all vertices and keeps only those whose degree belongs
// to it (seed 003's "Don't partition" level). Every vertex is handled by
// exactly one of a thread/block kernel pair, so each rank is written once.
#include "common.cuh"

using dynpr::kBlock;

// ---- partitioning by degree (Alg. 4) --------------------------------------

// flag[v] = 1 when deg(v) <= degree_switch (the thread-per-vertex set).
extern "C" __global__ void degree_flag(const long long* offsets, int n, int degree_switch, int* flag) {
  const int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v < n) flag[v] = (offsets[v + 1] - offsets[v]) <= degree_switch;
}

// Scatter vertex ids low-degree first. low_scan is the inclusive scan of the
// flags, so the exclusive position of a low vertex is low_scan[v] - 1 and the
// position of a high vertex among the high ones is v - low_scan[v] (the
// second scan of Alg. 4 follows from the first).
extern "C" __global__ void partition_scatter(const long long* offsets, int n, int degree_switch,
                                             const int* low_scan, int* ids) {
  const int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= n) return;
  const int num_low = low_scan[n - 1];
  if ((offsets[v + 1] - offsets[v]) <= degree_switch) ids[low_scan[v] - 1] = v;
  else ids[num_low + v - low_scan[v]] = v;
}

// ---- rank update (Alg. 3) -------------------------------------------------

// inv_degree[u] = 1/d[u] (d = out-degree), precomputed like the CPU twin's
// pull-matrix weights so both sides multiply the same doubles.
// Finish vertex v given c = sum over in-neighbours u of R[u]/d[u]; returns
// |r - R[v]|. DF-P uses the closed form of Eq. 2-3 (c includes the
// self-loop's term, which the closed form takes out again).
// With PRC the contribution r/d[v] of the next iteration is written too
// (seed 001's precomputed contributions), so gathers read one double per edge.
// With PUSH (the fused dynamic step) the expansion decision goes to *expand
// instead of dn[v], and the caller marks v's out-neighbours itself; DF (no
// PRUNE) then expands a vertex once, recorded in bit 1 of dv[v]: its affected
// set only grows, so a second expansion would mark nothing new (the CPU
// twin's `expanded`).
template <bool FRONTIER, bool PRUNE, bool PRC = false, bool PUSH = false>
__device__ __forceinline__ double finish_vertex(int v, double c, const double* inv_degree, const double* R,
                                                double* Rnew, unsigned char* dv, unsigned char* dn,
                                                double c0, double alpha, double tau_f, double tau_p,
                                                double* Cnew = nullptr, int* expand = nullptr) {
  const double rv = R[v];
  double r;
  if (PRUNE) {
    const double inv = inv_degree[v];
    r = (c0 + alpha * (c - rv * inv)) / (1.0 - alpha * inv);
  } else {
    r = c0 + alpha * c;
  }
  const double dr = fabs(r - rv);
  if (FRONTIER) {
    const double rel = dr / fmax(r, rv);
    if (PRUNE && rel <= tau_p) dv[v] = 0;  // pruned: v still takes r this iteration
    if (rel > tau_f) {                     // its out-neighbours get expanded
      if (!PUSH) {
        dn[v] = 1;
      } else if (PRUNE || !(dv[v] & 2)) {
        *expand = 1;
        if (!PRUNE) dv[v] |= 2;
      }
    }
  }
  Rnew[v] = r;
  if (PRC) Cnew[v] = r * inv_degree[v];
  return dr;
}

// One thread per vertex. AFFECTED: only vertices with dv set are computed,
// the rest copy R to Rnew. The block's largest change goes to *delta.
template <bool LISTED, bool AFFECTED, bool FRONTIER, bool PRUNE>
__global__ void __launch_bounds__(kBlock) rank_thread(
    const int* ids, int count, const long long* in_offsets, const int* sources, const double* inv_degree,
    const double* R, double* Rnew, unsigned char* dv, unsigned char* dn, int degree_switch,
    double c0, double alpha, double tau_f, double tau_p, double* delta) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  double change = 0.0;
  if (i < count) {
    const int v = LISTED ? ids[i] : i;
    const long long begin = in_offsets[v], end = in_offsets[v + 1];
    if (LISTED || end - begin <= degree_switch) {
      if (AFFECTED && !dv[v]) {
        Rnew[v] = R[v];
      } else {
        double c = 0.0;
        for (long long e = begin; e < end; ++e) {
          const int u = sources[e];
          c += R[u] * inv_degree[u];
        }
        change = finish_vertex<FRONTIER, PRUNE>(v, c, inv_degree, R, Rnew, dv, dn, c0, alpha, tau_f, tau_p);
      }
    }
  }
  change = dynpr::block_max(change);
  if (threadIdx.x == 0 && change > 0.0) dynpr::atomic_max_nonneg(delta, change);
}

// One block per vertex: threads sum in-neighbour contributions strided, a
// block reduction combines them, thread 0 finishes the vertex.
template <bool LISTED, bool AFFECTED, bool FRONTIER, bool PRUNE>
__global__ void __launch_bounds__(kBlock) rank_block(
    const int* ids, int count, const long long* in_offsets, const int* sources, const double* inv_degree,
    const double* R, double* Rnew, unsigned char* dv, unsigned char* dn, int degree_switch,
    double c0, double alpha, double tau_f, double tau_p, double* delta) {
  const int i = blockIdx.x;
  if (i >= count) return;
  const int v = LISTED ? ids[i] : i;
  const long long begin = in_offsets[v], end = in_offsets[v + 1];
  // v is uniform over the block, so these returns never split a block.
  if (!LISTED && end - begin <= degree_switch) return;
  if (AFFECTED && !dv[v]) {
    if (threadIdx.x == 0) Rnew[v] = R[v];
    return;
  }
  double c = 0.0;
  for (long long e = begin + threadIdx.x; e < end; e += blockDim.x) {
    const int u = sources[e];
    c += R[u] * inv_degree[u];
  }
  c = dynpr::block_sum(c);
  if (threadIdx.x == 0) {
    const double change =
        finish_vertex<FRONTIER, PRUNE>(v, c, inv_degree, R, Rnew, dv, dn, c0, alpha, tau_f, tau_p);
    if (change > 0.0) dynpr::atomic_max_nonneg(delta, change);
  }
}

// ---- marking affected vertices (Alg. 5) -----------------------------------

// dn[u] = 1 for the source of every deletion and insertion; dv[v] = 1 for the
// target of every deletion. ever[] records every vertex ever marked in dv.
extern "C" __global__ void mark_initial(const int* del_src, const int* del_dst, int num_del, const int* ins_src,
                                        int num_ins, unsigned char* dv, unsigned char* dn, unsigned char* ever) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < num_del) {
    dn[del_src[i]] = 1;
    dv[del_dst[i]] = 1;
    ever[del_dst[i]] = 1;
  } else if (i < num_del + num_ins) {
    dn[ins_src[i - num_del]] = 1;
  }
}

// Initial marking and the first expansion in one launch, for the fused
// dynamic step: a warp per batch edge marks every out-neighbour (new graph)
// of the edge's source, which is what dn[source] = 1 followed by the
// expansion does, and the target of a deletion. A source listed several
// times is walked several times; the marks are the same.
extern "C" __global__ void __launch_bounds__(kBlock) mark_frontier(
    const int* del_src, const int* del_dst, int num_del, const int* ins_src, int num_ins,
    const long long* offsets, const int* targets, unsigned char* dv) {
  const long long i = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const int lane = threadIdx.x & 31;
  if (i >= num_del + num_ins) return;
  const int u = i < num_del ? del_src[i] : ins_src[i - num_del];
  if (i < num_del && lane == 0) dv[del_dst[i]] = 1;
  for (long long e = offsets[u] + lane; e < offsets[u + 1]; e += 32) dv[targets[e]] = 1;
}

// dv |= out-neighbours (in the new graph) of every u with dn[u]; one thread
// per vertex of the low out-degree set.
template <bool LISTED>
__global__ void __launch_bounds__(kBlock) expand_thread(const int* ids, int count, const long long* offsets,
                                                        const int* targets, int degree_switch,
                                                        const unsigned char* dn, unsigned char* dv,
                                                        unsigned char* ever, const int* done) {
  if (*done) return;  // converged: the iterations after it are no-ops
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= count) return;
  const int u = LISTED ? ids[i] : i;
  if (!dn[u]) return;
  const long long begin = offsets[u], end = offsets[u + 1];
  if (!LISTED && end - begin > degree_switch) return;
  for (long long e = begin; e < end; ++e) {
    const int w = targets[e];
    dv[w] = 1;
    ever[w] = 1;
  }
}

// The same with one block per vertex of the high out-degree set.
template <bool LISTED>
__global__ void __launch_bounds__(kBlock) expand_block(const int* ids, int count, const long long* offsets,
                                                       const int* targets, int degree_switch,
                                                       const unsigned char* dn, unsigned char* dv,
                                                       unsigned char* ever, const int* done) {
  if (*done) return;
  const int i = blockIdx.x;
  if (i >= count) return;
  const int u = LISTED ? ids[i] : i;
  if (!dn[u]) return;
  const long long begin = offsets[u], end = offsets[u + 1];
  if (!LISTED && end - begin <= degree_switch) return;
  for (long long e = begin + threadIdx.x; e < end; e += blockDim.x) {
    const int w = targets[e];
    dv[w] = 1;
    ever[w] = 1;
  }
}

// ---- DT: multi-source BFS, level-synchronous with frontier flags ------------

// Seed the BFS with the source of every deletion and insertion.
extern "C" __global__ void bfs_seed(const int* del_src, int num_del, const int* ins_src, int num_ins,
                                    unsigned char* frontier, unsigned char* visited) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < num_del + num_ins) {
    const int u = i < num_del ? del_src[i] : ins_src[i - num_del];
    frontier[u] = 1;
    visited[u] = 1;
  }
}

// One level: every unvisited out-neighbour of a frontier vertex joins the next
// frontier; *found becomes 1 when any did. Racing threads only ever write the
// same value 1, so no atomics are needed.
extern "C" __global__ void bfs_step(int n, const long long* offsets, const int* targets,
                                    const unsigned char* frontier, unsigned char* next,
                                    unsigned char* visited, int* found) {
  const int u = blockIdx.x * blockDim.x + threadIdx.x;
  if (u >= n || !frontier[u]) return;
  bool any = false;
  for (long long e = offsets[u]; e < offsets[u + 1]; ++e) {
    const int w = targets[e];
    if (!visited[w]) {
      visited[w] = 1;
      next[w] = 1;
      any = true;
    }
  }
  if (any) *found = 1;
}

// ---- issue 7: degree classes, precomputed contributions, device-side stop --

// Sort vertex ids into degree classes: class k holds deg in (bounds[k-1],
// bounds[k]] (bounds[-1] = -1) and goes to ids[k * n + ...]. Positions come
// from block-local shared atomics and one global atomic per class and block,
// so a class list is in no particular order; that changes no rank, since
// each vertex's sum depends only on its class's kernel.
// plan = {count[0..3], first[0..3], total, ticket}, zeroed before the launch.
// With the default's four classes the last block to finish also lays out the
// blocks of the fused launch (rank_classes), heaviest class first, so that no
// host read is needed to size it.
constexpr int kMaxClasses = 4;
__device__ constexpr int kClassLanes[kMaxClasses] = {1, 8, 32, kBlock};
extern "C" __global__ void __launch_bounds__(kBlock) degree_classes(
    const long long* offsets, int n, const long long* bounds, int num_classes, int* plan, int* ids) {
  __shared__ int local[kMaxClasses], base[kMaxClasses];
  const int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (threadIdx.x < kMaxClasses) local[threadIdx.x] = 0;
  __syncthreads();
  int k = 0, pos = 0;
  if (v < n) {
    const long long d = offsets[v + 1] - offsets[v];
    while (k < num_classes - 1 && d > bounds[k]) ++k;
    pos = atomicAdd(&local[k], 1);
  }
  __syncthreads();
  if (threadIdx.x < num_classes) base[threadIdx.x] = atomicAdd(&plan[threadIdx.x], local[threadIdx.x]);
  __syncthreads();
  if (v < n) ids[static_cast<long long>(k) * n + base[k] + pos] = v;
  if (threadIdx.x != 0 || num_classes != kMaxClasses) return;
  __threadfence();  // this block's counts are visible before its ticket
  if (atomicAdd(&plan[9], 1) != gridDim.x - 1) return;
  __threadfence();
  const volatile int* counts = plan;
  int first = 0;
  for (int c = kMaxClasses - 1; c >= 0; --c) {
    plan[4 + c] = first;
    const int lanes = kClassLanes[c];
    first += lanes == kBlock ? counts[c] : (counts[c] * lanes + kBlock - 1) / kBlock;
  }
  plan[8] = first;
}

// Where the fused dynamic step (PUSH) keeps its frontier: out CSR of the new
// graph, dx_in = vertices marked by the previous iteration's expansion (read
// and cleared here), dx_out = those this iteration's expansion marks (read by
// the next iteration; the two swap every iteration, so a vertex's mark never
// races with its own read), ever = vertices ever computed as affected.
struct Frontier {
  const long long* offsets;
  const int* targets;
  unsigned char* dx_in;
  unsigned char* dx_out;
  unsigned char* ever;
};

// The arguments every rank kernel passes down to rank_vertex.
struct RankArgs {
  const long long* __restrict__ in_offsets;
  const int* __restrict__ sources;
  const double* __restrict__ inv_degree;
  const double* __restrict__ R;
  const double* __restrict__ C;
  double* __restrict__ Rnew;
  double* __restrict__ Cnew;
  unsigned char* dv;
  unsigned char* dn;
  double c0, alpha, tau_f, tau_p;
};

// Sum of vertex v's in-neighbour contributions over this lane's share of its
// in-edges [begin, end) (lanes stride by G). PRC gathers C[u]; otherwise
// R[u] * inv_degree[u]. With PRC the warp and block classes read `sources`
// as int4 (16 bytes per lane, four independent gathers in flight per load),
// after up to 3 leading edges that bring the index to a multiple of 4 and
// before up to 3 trailing ones; measured on the H100 (web-NotreDame Static
// 1.30 -> 1.15 ms). Only the order of the additions changes (~1e-17 in L1).
template <int G, bool PRC>
__device__ __forceinline__ double gather(long long begin, long long end, int lane, const RankArgs& a) {
  double c = 0.0;
  if constexpr (PRC && G >= 32) {
    const long long head = min(end, (begin + 3) & ~3LL), body = head + ((end - head) & ~3LL);
    if (begin + lane < head) c += a.C[a.sources[begin + lane]];
#pragma unroll 2
    for (long long e = head + 4 * lane; e < body; e += 4 * G) {
      const int4 s = *reinterpret_cast<const int4*>(a.sources + e);  // e % 4 == 0: 16-byte aligned
      c += a.C[s.x];
      c += a.C[s.y];
      c += a.C[s.z];
      c += a.C[s.w];
    }
    if (body + lane < end) c += a.C[a.sources[body + lane]];
    return c;
  }
  // Unrolled so that several independent gathers are in flight per thread.
#pragma unroll 4
  for (long long e = begin + lane; e < end; e += G) {
    const int u = a.sources[e];
    c += PRC ? a.C[u] : a.R[u] * a.inv_degree[u];
  }
  return c;
}

// One vertex v with G lanes (G = 1: thread, 8: sub-warp, 32: warp, kBlock:
// block); `active` must be uniform over the G lanes, and every lane of the
// warp (of the block for G = kBlock) must call, active or not.
// Lanes stride the in-edges, a shuffle (or block) reduction sums them in a
// fixed order, lane 0 finishes the vertex, so v's ranks depend only on G,
// whichever kernel calls. PRC gathers C[u] = R[u]/d[u] (one double per edge)
// instead of R[u] * inv_degree[u] (two), and writes Cnew for the next iteration.
// PUSH (with FRONTIER) folds Alg. 5's expansion into the rank step: v is
// affected when dv[v] or fr.dx_in[v] is set, and a vertex whose relative
// change exceeds tau_f marks its out-neighbours in fr.dx_out with its own G
// lanes, or, in classes narrower than a warp and for more than 32
// out-neighbours, with the whole warp: on web-NotreDame a vertex of in-degree
// 1 may have 3,445 out-neighbours, which one thread would mark one by one
// while the iteration waits (H200, DF-P on a 1e-4 batch: 2.86 -> 1.09 ms).
// So an iteration needs no flag clearing and no expansion launch. The
// expansion after the last iteration is never read; `affected` comes from
// fr.ever, set when a vertex is computed, which is the set of vertices marked
// before some iteration, as in the CPU twin.
// Returns |r - R[v]| in the finishing lane (0 elsewhere).
template <int G, bool AFFECTED, bool FRONTIER, bool PRUNE, bool PRC, bool PUSH = false>
__device__ __forceinline__ double rank_vertex(bool active, int v, const RankArgs& a, Frontier fr = {}) {
  constexpr bool kPush = PUSH && FRONTIER;
  const int lane = threadIdx.x % G;
  long long begin = 0, end = 0;
  bool marked = false;  // kPush: v arrived through the previous expansion
  if (active) {
    begin = a.in_offsets[v];
    end = a.in_offsets[v + 1];
    if (AFFECTED) {
      bool affected = a.dv[v];
      if constexpr (kPush) {
        marked = fr.dx_in[v];
        affected = affected || marked;
      }
      if (!affected) {
        if (lane == 0) {
          a.Rnew[v] = a.R[v];
          if (PRC) a.Cnew[v] = a.C[v];
        }
        active = false;
      }
    }
  }
  double c = 0.0;
  if (active) c = gather<G, PRC>(begin, end, lane, a);
  // The reductions below order every lane's reads of dv/dx_in before lane 0
  // writes them.
  double change = 0.0;
  int expand = 0;
  const bool finisher = active && (G == kBlock ? threadIdx.x == 0 : lane == 0);
  if constexpr (G == kBlock) {
    c = dynpr::block_sum(c);
  } else {
    for (int off = G / 2; off > 0; off >>= 1) c += __shfl_down_sync(0xffffffffu, c, off, G);
  }
  if (finisher) {
    if constexpr (kPush) {
      if (marked) {
        fr.dx_in[v] = 0;
        a.dv[v] |= 1;  // affected from now on (unless pruned just below)
      }
      fr.ever[v] = 1;
    }
    change = finish_vertex<FRONTIER, PRUNE, PRC, kPush>(v, c, a.inv_degree, a.R, a.Rnew, a.dv, a.dn, a.c0, a.alpha,
                                                        a.tau_f, a.tau_p, a.Cnew, &expand);
  }
  if constexpr (kPush) {
    // Lane 0's decision to every lane of the group, which then marks the
    // out-neighbours (the self-loop marks v itself, as in the CPU twin).
    if constexpr (G == kBlock) {
      __shared__ int block_expand;
      if (threadIdx.x == 0) block_expand = expand;
      __syncthreads();
      expand = block_expand;
    } else {
      expand = __shfl_sync(0xffffffffu, expand, 0, G);
    }
    long long out_begin = 0, out_end = 0;
    if (expand) {
      out_begin = fr.offsets[v];
      out_end = fr.offsets[v + 1];
    }
    if constexpr (G < 32) {
      const bool by_warp = expand && out_end - out_begin > 32;  // uniform over the G lanes
      for (unsigned leaders = __ballot_sync(0xffffffffu, by_warp && lane == 0); leaders; leaders &= leaders - 1) {
        const int leader = __ffs(leaders) - 1;
        const long long begin = __shfl_sync(0xffffffffu, out_begin, leader);
        const long long end = __shfl_sync(0xffffffffu, out_end, leader);
        for (long long e = begin + threadIdx.x % 32; e < end; e += 32) fr.dx_out[fr.targets[e]] = 1;
      }
      if (by_warp) expand = 0;
    }
    if (expand) {
      for (long long e = out_begin + lane; e < out_end; e += G) fr.dx_out[fr.targets[e]] = 1;
    }
  }
  return change;
}

// The vertex of G-lane group `item` of a class: ids[item] when LISTED, else
// vertex `item` when its degree is in (lo, hi]. Sets active (uniform per group).
template <bool LISTED>
__device__ __forceinline__ int class_vertex(long long item, const int* ids, int count, const long long* in_offsets,
                                            long long lo, long long hi, bool& active) {
  active = item < count;
  if (!active) return 0;
  const int v = LISTED ? ids[item] : static_cast<int>(item);
  if (!LISTED) {
    const long long d = in_offsets[v + 1] - in_offsets[v];
    active = d > lo && d <= hi;
  }
  return v;
}

// One class per launch (the unfused designs): block b takes groups
// [b * kBlock / G, ...). Every kernel returns at once when *done is set, so
// iterations launched past convergence change nothing.
template <int G, bool LISTED, bool AFFECTED, bool FRONTIER, bool PRUNE, bool PRC>
__global__ void __launch_bounds__(kBlock) rank_group(
    const int* ids, int count, const long long* in_offsets, const int* sources, const double* inv_degree,
    const double* R, const double* C, double* Rnew, double* Cnew, unsigned char* dv, unsigned char* dn,
    long long lo, long long hi, double c0, double alpha, double tau_f, double tau_p, double* delta,
    const int* done) {
  if (*done) return;
  const RankArgs a{in_offsets, sources, inv_degree, R, C, Rnew, Cnew, dv, dn, c0, alpha, tau_f, tau_p};
  bool active;
  const int v = class_vertex<LISTED>((static_cast<long long>(blockIdx.x) * kBlock + threadIdx.x) / G, ids, count,
                                     in_offsets, lo, hi, active);
  double change = rank_vertex<G, AFFECTED, FRONTIER, PRUNE, PRC>(active, v, a);
  if constexpr (G != kBlock) change = dynpr::block_max(change);
  if (threadIdx.x == 0 && change > 0.0) dynpr::atomic_max_nonneg(delta, change);
}

// The iteration's bookkeeping (see finish_iteration) done by the last block
// to finish: count it, stop when the change is <= tau or at the cap, reset
// the change, the ticket and the work counter. Called by thread 0 after its
// atomicMax. state = {iterations, done, ticket, work counter}.
__device__ __forceinline__ void finish_by_last_block(double* delta, int* state, double tau, int max_iterations) {
  __threadfence();  // this block's atomicMax is visible before its ticket
  if (atomicAdd(reinterpret_cast<unsigned int*>(&state[2]), 1u) != gridDim.x - 1) return;
  __threadfence();
  const double change =
      __longlong_as_double(atomicExch(reinterpret_cast<unsigned long long*>(delta), 0ull));
  state[2] = 0;
  state[3] = 0;
  state[0] += 1;
  if (change <= tau || state[0] >= max_iterations) state[1] = 1;
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

// Every degree class of the default variant in one launch, over the class
// lists of degree_classes: class k (lanes 1, 8, 32, kBlock) has count[k]
// vertex ids at ids[k * n, ...) and the units from first[k] on, heaviest
// class first, so that the long block-per-hub work starts early instead of
// forming the launch's tail. plan = {count[0..3], first[0..3], total}, all
// written on the device. The last block to finish also ends the iteration,
// so an iteration is one kernel. DF and DF-P run Alg. 5's expansion inside it
// (PUSH, see rank_vertex), so a dynamic iteration is one kernel too. The
// unused frontier arguments of the other approaches may be any pointers.
template <bool AFFECTED, bool FRONTIER, bool PRUNE>
__global__ void __launch_bounds__(kBlock) rank_classes(
    const int* ids, int n, const int* plan, const long long* in_offsets, const int* sources,
    const double* inv_degree, const double* R, const double* C, double* Rnew, double* Cnew, unsigned char* dv,
    const long long* out_offsets, const int* targets, unsigned char* dx_in, unsigned char* dx_out,
    unsigned char* ever, double c0, double alpha, double tau_f, double tau_p, double* delta, int* state,
    double tau, int max_iterations) {
  if (state[1]) return;
  const Frontier fr{out_offsets, targets, dx_in, dx_out, ever};
  const RankArgs a{in_offsets, sources, inv_degree, R, C, Rnew, Cnew, dv, nullptr, c0, alpha, tau_f, tau_p};
  double change = 0.0;
  for_each_unit(plan[8], &state[3], [&](int u) {
    // k is uniform over the block, so every thread takes the same branch.
    const int k = u >= plan[4] ? 0 : u >= plan[5] ? 1 : u >= plan[6] ? 2 : 3;
    const int* class_ids = ids + static_cast<long long>(k) * n;
    const long long first_item = static_cast<long long>(u - plan[4 + k]) * kBlock;
    bool active;
    int v;
    switch (k) {
      case 0:
        v = class_vertex<true>(first_item + threadIdx.x, class_ids, plan[0], in_offsets, 0, 0, active);
        change = fmax(change, rank_vertex<1, AFFECTED, FRONTIER, PRUNE, true, true>(active, v, a, fr));
        break;
      case 1:
        v = class_vertex<true>((first_item + threadIdx.x) / 8, class_ids, plan[1], in_offsets, 0, 0, active);
        change = fmax(change, rank_vertex<8, AFFECTED, FRONTIER, PRUNE, true, true>(active, v, a, fr));
        break;
      case 2:
        v = class_vertex<true>((first_item + threadIdx.x) / 32, class_ids, plan[2], in_offsets, 0, 0, active);
        change = fmax(change, rank_vertex<32, AFFECTED, FRONTIER, PRUNE, true, true>(active, v, a, fr));
        break;
      default:
        v = class_vertex<true>(first_item / kBlock, class_ids, plan[3], in_offsets, 0, 0, active);
        change = fmax(change, rank_vertex<kBlock, AFFECTED, FRONTIER, PRUNE, true, true>(active, v, a, fr));
    }
  });
  change = dynpr::block_max(change);
  if (threadIdx.x == 0) {
    if (change > 0.0) dynpr::atomic_max_nonneg(delta, change);
    finish_by_last_block(delta, state, tau, max_iterations);
  }
}

// Partition level "none" of the default: the same classes, lanes and
// arithmetic as rank_classes (so the same ranks, bit for bit), chosen by
// degree inside the launch instead of from lists made beforehand. A unit is
// kBlock consecutive vertices: each thread reads its vertex's degree and
// computes it itself (class 0) or lists it in shared memory for the block's
// 8-lane groups, its warps or the whole block (classes 1-3), which then work
// through those lists. No partition phase and no vertex lists in memory.
template <bool AFFECTED, bool FRONTIER, bool PRUNE>
__global__ void __launch_bounds__(kBlock) rank_chunks(
    int n, const long long* in_offsets, const int* sources, const double* inv_degree, const double* R,
    const double* C, double* Rnew, double* Cnew, unsigned char* dv, const long long* out_offsets,
    const int* targets, unsigned char* dx_in, unsigned char* dx_out, unsigned char* ever, long long bound0,
    long long bound1, long long bound2, double c0, double alpha, double tau_f, double tau_p, double* delta,
    int* state, double tau, int max_iterations) {
  if (state[1]) return;
  __shared__ int listed[kMaxClasses - 1][kBlock];
  __shared__ int listed_count[kMaxClasses - 1];
  const Frontier fr{out_offsets, targets, dx_in, dx_out, ever};
  const RankArgs a{in_offsets, sources, inv_degree, R, C, Rnew, Cnew, dv, nullptr, c0, alpha, tau_f, tau_p};
  const int warp = threadIdx.x / 32;
  double change = 0.0;
  for_each_unit((n + kBlock - 1) / kBlock, &state[3], [&](int u) {
    if (threadIdx.x < kMaxClasses - 1) listed_count[threadIdx.x] = 0;
    __syncthreads();
    const int v = u * kBlock + threadIdx.x;
    bool own = false;
    if (v < n) {
      const long long d = in_offsets[v + 1] - in_offsets[v];
      own = d <= bound0;
      if (!own) {
        const int k = d <= bound1 ? 0 : d <= bound2 ? 1 : 2;
        listed[k][atomicAdd(&listed_count[k], 1)] = v;
      }
    }
    __syncthreads();
    change = fmax(change, rank_vertex<1, AFFECTED, FRONTIER, PRUNE, true, true>(own, v, a, fr));
    // Loop bounds are uniform over the block, so every lane of a warp calls.
    const int count8 = listed_count[0], count32 = listed_count[1], count_block = listed_count[2];
    for (int i = threadIdx.x / 8; i - static_cast<int>(threadIdx.x / 8) < count8; i += kBlock / 8) {
      const bool active = i < count8;
      change = fmax(change, rank_vertex<8, AFFECTED, FRONTIER, PRUNE, true, true>(
                                active, active ? listed[0][i] : 0, a, fr));
    }
    for (int i = warp; i - warp < count32; i += kBlock / 32) {
      const bool active = i < count32;
      change = fmax(change, rank_vertex<32, AFFECTED, FRONTIER, PRUNE, true, true>(
                                active, active ? listed[1][i] : 0, a, fr));
    }
    for (int i = 0; i < count_block; ++i) {
      change = fmax(change, rank_vertex<kBlock, AFFECTED, FRONTIER, PRUNE, true, true>(true, listed[2][i], a, fr));
      __syncthreads();  // block_sum's scratch is reused by the next hub
    }
  });
  change = dynpr::block_max(change);
  if (threadIdx.x == 0) {
    if (change > 0.0) dynpr::atomic_max_nonneg(delta, change);
    finish_by_last_block(delta, state, tau, max_iterations);
  }
}

// One iteration's bookkeeping on the device: count it, stop when the
// L-infinity change is <= tau or the cap is reached, and reset the change
// slot for the next iteration. state = {iterations, done}.
extern "C" __global__ void finish_iteration(double* delta, int* state, double tau, int max_iterations) {
  if (state[1]) return;
  const double change = *delta;
  *delta = 0.0;
  state[0] += 1;
  if (change <= tau || state[0] >= max_iterations) state[1] = 1;
}

// dn = 0 before an iteration (skipped once converged).
extern "C" __global__ void clear_flags(unsigned char* flags, int n, const int* done) {
  if (*done) return;
  const int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v < n) flags[v] = 0;
}

// C = R / d, the precomputed contributions of the starting ranks.
extern "C" __global__ void contributions(const double* R, const double* inv_degree, int n, double* C) {
  const int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v < n) C[v] = R[v] * inv_degree[v];
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

// ---- push with atomics (seed 000 "GPU naive"; Gunrock/Hornet style) --------

// Every u adds R[u]/d[u] to each out-neighbour's accumulator.
extern "C" __global__ void __launch_bounds__(kBlock) push_scatter(
    int n, const long long* offsets, const int* targets, const double* R, const double* inv_degree,
    double* acc, const int* done) {
  if (*done) return;
  const int u = blockIdx.x * blockDim.x + threadIdx.x;
  if (u >= n) return;
  const double x = R[u] * inv_degree[u];
  for (long long e = offsets[u]; e < offsets[u + 1]; ++e) atomicAdd(&acc[targets[e]], x);
}

// Rnew = C0 + alpha * acc; acc is cleared for the next iteration.
extern "C" __global__ void __launch_bounds__(kBlock) push_finish(
    int n, const double* R, double* Rnew, double* acc, double c0, double alpha, double* delta, const int* done) {
  if (*done) return;
  const int v = blockIdx.x * blockDim.x + threadIdx.x;
  double change = 0.0;
  if (v < n) {
    const double r = c0 + alpha * acc[v];
    acc[v] = 0.0;
    Rnew[v] = r;
    change = fabs(r - R[v]);
  }
  change = dynpr::block_max(change);
  if (threadIdx.x == 0 && change > 0.0) dynpr::atomic_max_nonneg(delta, change);
}
