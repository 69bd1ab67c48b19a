// The per-vertex rank step every PageRank kernel design shares: finishing a
// vertex from its gathered sum (the paper's Alg. 3, with DF-P's closed form),
// the gather over its in-edges, and the G-lane vertex step rank_vertex, so a
// vertex's rank depends only on its lane count G whichever kernel calls.
// Conventions: vertex ids int, CSR offsets long long, ranks double, flags
// unsigned char.
#pragma once
#include "common.cuh"
#include "layouts.cuh"

namespace dynpr {

// inv_degree[u] = 1/d[u] (d = out-degree), precomputed like the CPU twin's
// pull-matrix weights so both sides multiply the same doubles.
// Finish vertex v given c = sum over in-neighbours u of R[u]/d[u]; returns
// |r - R[v]|. DF-P uses the closed form of Eq. 2-3 (c includes the
// self-loop's term, which the closed form takes out again). The baselines'
// DF/DF-P set dn[v] when v's relative change exceeds tau_f (their separate
// expansion marks its out-neighbours) and DF-P clears dv[v] at or below
// tau_p (pruned: v still takes r this iteration). A vertex whose rank does not
// change has relative change 0, also at rank 0 (personalized PageRank's
// vertices without teleport weight or rank flowing in), where 0/0 would never
// prune. With PRC the contribution r/d[v] of the next iteration is written too
// (precomputed contributions, PRC, of the report "GPU Programming"), so
// gathers read one double per edge.
constexpr double kSmallestRank = 2.2250738585072014e-308;  // DBL_MIN: 0 / kSmallestRank = 0, not 0/0

template <bool FRONTIER, bool PRUNE, bool PRC = false>
__device__ __forceinline__ double finish_vertex(int v, double c, double rv, double inv, double* Rnew,
                                                unsigned char* dv, unsigned char* dn, double c0, double alpha,
                                                double tau_f, double tau_p, Contribution* Cnew = nullptr) {
  const double r = PRUNE ? (c0 + alpha * (c - rv * inv)) / (1.0 - alpha * inv) : c0 + alpha * c;
  const double dr = fabs(r - rv);
  if (FRONTIER) {
    const double rel = dr / fmax(fmax(r, rv), kSmallestRank);
    if (PRUNE && rel <= tau_p) dv[v] = 0;
    if (rel > tau_f) dn[v] = 1;
  }
  Rnew[v] = r;
  if (PRC) Cnew[v] = r * inv;
  return dr;
}

// finish_vertex reading rv = R[v] and inv = inv_degree[v].
template <bool FRONTIER, bool PRUNE, bool PRC = false>
__device__ __forceinline__ double finish_vertex(int v, double c, const double* inv_degree, const double* R,
                                                double* Rnew, unsigned char* dv, unsigned char* dn,
                                                double c0, double alpha, double tau_f, double tau_p,
                                                Contribution* Cnew = nullptr) {
  return finish_vertex<FRONTIER, PRUNE, PRC>(v, c, R[v], inv_degree[v], Rnew, dv, dn, c0, alpha, tau_f, tau_p,
                                             Cnew);
}

// The arguments every rank kernel passes down to rank_vertex.
struct RankArgs {
  const long long* __restrict__ in_offsets;
  const int* __restrict__ sources;
  const double* __restrict__ inv_degree;
  const double* __restrict__ R;
  const Contribution* __restrict__ C;
  double* __restrict__ Rnew;
  Contribution* __restrict__ Cnew;
  unsigned char* dv;
  unsigned char* dn;
  double c0, alpha, tau_f, tau_p;
  // SolveOptions::teleport: last, so the baselines' kernels, which list the fields before
  // it, leave it null (uniform)
  const double* __restrict__ teleport;
};

// The teleport term of vertex v: (1 - alpha) p_v where the run is personalized, else
// c0 = (1 - alpha) / n (the same double for every vertex; no load).
__device__ __forceinline__ double teleport_term(const RankArgs& a, int v) {
  return a.teleport ? a.teleport[v] : a.c0;
}

// Vertex v's in-edges: positions [begin, end) of RankArgs::sources (the graph's
// in-CSR, or a block's copy of its rows in shared memory: keep_unit).
struct Row {
  long long begin = 0, end = 0;
};

// v's row in the graph's in-CSR, or an empty one when `load` is false.
__device__ __forceinline__ Row in_row(const RankArgs& a, int v, bool load) {
  return load ? Row{a.in_offsets[v], a.in_offsets[v + 1]} : Row{};
}

// The contribution C[u] of u as a gather reads it. The default's DF/DF-P
// iterations in pull mode (dynamic_vertex) store -C[u] when u expanded in the
// iteration that wrote it, so the gather adds |C[u]| and ORs the sign bits:
// the same sum, bit for bit, and "some in-neighbour expanded" for free.
template <bool SIGNED>
__device__ __forceinline__ void add_contribution(double x, double& c, bool& expanded) {
  if constexpr (SIGNED) {
    expanded |= signbit(x);
    c += fabs(x);
  } else {
    c += x;
  }
}

// Sum of vertex v's in-neighbour contributions over this lane's share of its
// in-edges [begin, end) (lanes stride by G). PRC gathers C[u]; otherwise
// R[u] * inv_degree[u]. With PRC the warp and block classes read `sources`
// as int4 (16 bytes per lane, four independent gathers in flight per load),
// after up to 3 leading edges that bring the index to a multiple of 4 and
// before up to 3 trailing ones (docs/dynamic.md, "Kernel structure"). Only the
// order of the additions changes (~1e-17 in L1).
// SIGNED (with PRC): see add_contribution. BATCHED (with PRC; the kept units
// of rank_persistent, whose ids are in shared memory) takes the edges in
// rounds: kGatherBatch ids, or kGatherQuads int4 in the warp and block
// classes, then their contributions, so a round costs two dependent loads;
// the warp and block classes load their head and tail edges with the first
// round, not in round trips of their own before and after the rounds. The
// signed gather (DF/DF-P) takes 3 int4 a round: at 4 its kernel, capped at 80
// registers, spilled 64 bytes a thread (16 at 3). The additions keep the
// order of the unbatched loops whatever the round.
constexpr int kGatherBatch = 8, kGatherQuads = 4, kGatherQuadsSigned = 3;

template <int G, bool PRC, bool SIGNED = false, bool BATCHED = false>
__device__ __forceinline__ double gather(long long begin, long long end, int lane, const RankArgs& a,
                                         bool& expanded) {
  double c = 0.0;
  if constexpr (PRC && G >= 32) {
    constexpr int kQuads = SIGNED ? kGatherQuadsSigned : kGatherQuads;
    const long long head = min(end, (begin + 3) & ~3LL), body = head + ((end - head) & ~3LL);
    const bool head_edge = begin + lane < head, tail_edge = body + lane < end;
    if constexpr (BATCHED) {
      // kQuads int4 a round, loaded before their contributions and added in the same
      // order; the head's contribution is added before the first round's, the tail's last.
      const double head_x = head_edge ? a.C[a.sources[begin + lane]] : 0.0;
      const double tail_x = tail_edge ? a.C[a.sources[body + lane]] : 0.0;
      bool head_due = head_edge;
      for (long long first = head + 4 * lane; first < body; first += 4 * G * kQuads) {
        int4 s[kQuads];
        bool load[kQuads];
#pragma unroll
        for (int j = 0; j < kQuads; ++j) {
          load[j] = first + j * 4 * G < body;
          s[j] = load[j] ? *reinterpret_cast<const int4*>(a.sources + first + j * 4 * G) : int4{};
        }
        double x[4 * kQuads];
#pragma unroll
        for (int j = 0; j < kQuads; ++j) {
          x[4 * j] = load[j] ? a.C[s[j].x] : 0.0;
          x[4 * j + 1] = load[j] ? a.C[s[j].y] : 0.0;
          x[4 * j + 2] = load[j] ? a.C[s[j].z] : 0.0;
          x[4 * j + 3] = load[j] ? a.C[s[j].w] : 0.0;
        }
        if (head_due) add_contribution<SIGNED>(head_x, c, expanded);
        head_due = false;
#pragma unroll
        for (int j = 0; j < kQuads; ++j) {
          if (!load[j]) continue;
          for (int i = 0; i < 4; ++i) add_contribution<SIGNED>(x[4 * j + i], c, expanded);
        }
      }
      if (head_due) add_contribution<SIGNED>(head_x, c, expanded);
      if (tail_edge) add_contribution<SIGNED>(tail_x, c, expanded);
    } else {
      if (head_edge) add_contribution<SIGNED>(a.C[a.sources[begin + lane]], c, expanded);
#pragma unroll 2
      for (long long e = head + 4 * lane; e < body; e += 4 * G) {
        const int4 s = *reinterpret_cast<const int4*>(a.sources + e);  // e % 4 == 0: 16-byte aligned
        add_contribution<SIGNED>(a.C[s.x], c, expanded);
        add_contribution<SIGNED>(a.C[s.y], c, expanded);
        add_contribution<SIGNED>(a.C[s.z], c, expanded);
        add_contribution<SIGNED>(a.C[s.w], c, expanded);
      }
      if (tail_edge) add_contribution<SIGNED>(a.C[a.sources[body + lane]], c, expanded);
    }
  } else if constexpr (PRC && BATCHED) {
    // kGatherBatch edges a round, their ids loaded first and then their contributions, so a
    // round costs two dependent loads whatever its length (a loop unrolled by the compiler
    // leaves a remainder taken one edge at a time); added in edge order, as below.
    for (long long first = begin + lane; first < end; first += kGatherBatch * G) {
      int u[kGatherBatch];
#pragma unroll
      for (int j = 0; j < kGatherBatch; ++j) u[j] = first + j * G < end ? a.sources[first + j * G] : -1;
      double x[kGatherBatch];
#pragma unroll
      for (int j = 0; j < kGatherBatch; ++j) x[j] = u[j] >= 0 ? a.C[u[j]] : 0.0;
#pragma unroll
      for (int j = 0; j < kGatherBatch; ++j)
        if (u[j] >= 0) add_contribution<SIGNED>(x[j], c, expanded);
    }
  } else {
    // Unrolled so that several independent gathers are in flight per thread.
#pragma unroll 4
    for (long long e = begin + lane; e < end; e += G) {
      const int u = a.sources[e];
      if constexpr (PRC) {
        add_contribution<SIGNED>(a.C[u], c, expanded);
      } else {
        c += a.R[u] * a.inv_degree[u];
      }
    }
  }
  return c;
}

// Sum over the G lanes of a vertex, in a fixed order; valid in lane 0 (thread
// 0 for G = kBlock).
template <int G>
__device__ __forceinline__ double group_sum(double c) {
  if constexpr (G == kBlock) {
    return dynpr::block_sum(c);
  } else {
    for (int off = G / 2; off > 0; off >>= 1) c += __shfl_down_sync(0xffffffffu, c, off, G);
    return c;
  }
}

// Whether any of the G lanes of a vertex has `x` (every lane of the warp, of the
// block for G = kBlock, must call); valid in every lane.
template <int G>
__device__ __forceinline__ bool group_any(bool x) {
  if constexpr (G == kBlock) {
    return __syncthreads_or(x);
  } else if constexpr (G == 32) {
    return __any_sync(0xffffffffu, x);
  } else if constexpr (G > 1) {
    const unsigned group = __ballot_sync(0xffffffffu, x) >> (threadIdx.x % 32 / G * G);
    return group & ((1u << G) - 1);
  } else {
    return x;
  }
}

// One vertex v with G lanes (G = 1: thread, 8: sub-warp, 32: warp, kBlock:
// block); `active` must be uniform over the G lanes, and every lane of the
// warp (of the block for G = kBlock) must call, active or not.
// Lanes stride the in-edges, a shuffle (or block) reduction sums them in a
// fixed order, lane 0 finishes the vertex, so v's ranks depend only on G,
// whichever kernel calls (dynamic_vertex too). PRC gathers C[u] = R[u]/d[u]
// (one double per edge) instead of R[u] * inv_degree[u] (two), and writes Cnew
// for the next iteration. AFFECTED: only vertices with dv[v] set are
// computed, the rest copy R (and C) to Rnew (Cnew); FRONTIER and PRUNE as in
// finish_vertex. `row` is v's in-edges (read only when v is computed).
// BATCHED: see gather; R[v] and 1/d[v] are then loaded before the gather.
// Returns |r - R[v]| in the finishing lane (0 elsewhere).
template <int G, bool AFFECTED, bool FRONTIER, bool PRUNE, bool PRC, bool BATCHED = false>
__device__ __forceinline__ double rank_vertex(bool active, int v, const RankArgs& a, Row row) {
  const int lane = threadIdx.x % G;
  if (active && AFFECTED && !a.dv[v]) {
    if (lane == 0) {
      a.Rnew[v] = a.R[v];
      if (PRC) a.Cnew[v] = a.C[v];
    }
    active = false;
  }
  const bool finisher = active && (G == kBlock ? threadIdx.x == 0 : lane == 0);
  double rv = 0.0, inv = 0.0;
  if (BATCHED && finisher) {  // loaded before the gather, so in flight with it
    rv = a.R[v];
    inv = a.inv_degree[v];
  }
  bool unused = false;
  double c = active ? gather<G, PRC, false, BATCHED>(row.begin, row.end, lane, a, unused) : 0.0;
  c = group_sum<G>(c);
  if (!finisher) return 0.0;
  if constexpr (BATCHED) {
    return finish_vertex<FRONTIER, PRUNE, PRC>(v, c, rv, inv, a.Rnew, a.dv, a.dn, teleport_term(a, v), a.alpha,
                                               a.tau_f, a.tau_p, a.Cnew);
  }
  return finish_vertex<FRONTIER, PRUNE, PRC>(v, c, a.inv_degree, a.R, a.Rnew, a.dv, a.dn, teleport_term(a, v),
                                             a.alpha, a.tau_f, a.tau_p, a.Cnew);
}

// rank_vertex reading v's row from in_offsets (only when it computes v).
template <int G, bool AFFECTED, bool FRONTIER, bool PRUNE, bool PRC>
__device__ __forceinline__ double rank_vertex(bool active, int v, const RankArgs& a) {
  return rank_vertex<G, AFFECTED, FRONTIER, PRUNE, PRC>(active, v, a,
                                                        in_row(a, v, active && (!AFFECTED || a.dv[v])));
}

// ---- the default's dynamic step (DT, DF, DF-P in one launch per iteration) ----

// Bits of dv[v] in the default's dynamic step.
constexpr unsigned char kAffected = 1;  // computed every iteration (DT's reachable set; DF/DF-P's delta_V)
constexpr unsigned char kExpanded = 2;  // DF: out-neighbours already marked (its affected set only grows)
constexpr unsigned char kWritten = 4;   // computed last iteration: the two rank buffers differ at v

// Where the fused dynamic step keeps its frontier: out CSR of the new graph,
// dx_in = vertices marked by the previous iteration's push expansion (read
// and cleared here; null where that iteration pulled, so marked none),
// dx_out = those this iteration's expansion marks (read by the next
// iteration; the two swap every iteration, so a vertex's mark never races
// with its own read), ever = vertices ever computed as affected.
struct Frontier {
  const long long* offsets;
  const int* targets;
  unsigned char* dx_in;
  unsigned char* dx_out;
  unsigned char* ever;
};

// One vertex of DT, DF or DF-P in the default's fused launch (lanes, order
// and arithmetic as rank_vertex, so the same ranks bit for bit). Every lane of
// the warp (block for G = kBlock) must call; `active` is uniform per group.
//
// Push mode (pull = false): v is computed when affected (dv bit kAffected) or
// marked (fr.dx_in); a vertex whose relative change exceeds tau_f marks its
// out-neighbours in fr.dx_out with its own G lanes, or, in classes narrower
// than a warp and for more than 32 out-neighbours, with the whole warp (on
// web-NotreDame a vertex of in-degree 1 has 3,445 out-neighbours). Push work
// grows with the frontier: `edges` adds the in-edges gathered and out-edges
// marked, which decide when the loop turns to pull mode
// (dynpr.designs.PULL_SHARE).
//
// Pull mode (pull = true; the direction-optimizing BFS's bottom-up step):
// every vertex gathers, and v is affected when dv says so, when it was marked
// by the last push iteration, or when an in-neighbour expanded last
// iteration, which that neighbour announced in the sign of its contribution
// (add_contribution). Expanding costs nothing more then, where a push
// expansion writes a random byte per out-edge: on R-MAT graphs most vertices
// expand in every iteration and their out-edges are nearly all edges. Once in
// pull mode a run stays there (pull iterations mark nothing in dx).
//
// Neither mode copies ranks of vertices it does not compute, except in push
// mode a vertex computed in the previous iteration (dv bit kWritten): elsewhere
// the two buffers already agree (both start as the starting ranks and
// contributions). In pull mode every vertex writes, clearing its sign.
// `row` is v's in-edges, given for every active v whatever its flags say (the
// caller loads it before the flags are known: one dependent load less).
// Returns |r - R[v]| in the finishing lane (0 elsewhere).
template <int G, bool FRONTIER, bool PRUNE, bool BATCHED = false>
__device__ __forceinline__ double dynamic_vertex(bool active, int v, const RankArgs& a, const Frontier& fr,
                                                 bool pull, double& edges, Row row) {
  const int lane = threadIdx.x % G;
  unsigned char flags = 0;
  bool marked = false, compute = false;
  const long long begin = row.begin, end = row.end;
  if (active) {
    flags = a.dv[v];
    if (FRONTIER && fr.dx_in) marked = fr.dx_in[v];
    compute = pull || (flags & kAffected) || marked;
  }
  bool announced = false;  // pull: an in-neighbour expanded last iteration
  const bool finisher = active && (G == kBlock ? threadIdx.x == 0 : lane == 0);
  double rv = 0.0, inv = 0.0;
  if (BATCHED && finisher) {  // as in rank_vertex
    rv = a.R[v];
    inv = a.inv_degree[v];
  }
  double c = 0.0;
  if (compute) c = gather<G, true, FRONTIER, BATCHED>(begin, end, lane, a, announced);
  c = group_sum<G>(c);
  // pull is uniform over the grid, so every lane of the group takes this
  if (FRONTIER && pull) announced = group_any<G>(announced);
  double change = 0.0;
  int expand = 0;
  if (finisher) {
    if (marked) fr.dx_in[v] = 0;
    if (!((flags & kAffected) || marked || announced)) {
      if (pull || (flags & kWritten)) {  // buffers differ at v: carry its rank over
        // |C[v]| is R[v] * (1/d[v]), bit for bit (every writer of C multiplies the two), so
        // BATCHED, whose finisher has both loaded, stores without a load after the gather.
        a.Rnew[v] = BATCHED ? rv : a.R[v];
        a.Cnew[v] = BATCHED ? rv * inv : fabs(a.C[v]);
        if (!pull) a.dv[v] = flags & ~kWritten;
      }
    } else {
      // Written only where they change: kWritten means v was computed before, so ever[v] is set.
      const unsigned char before = flags;
      if (FRONTIER && !(flags & kWritten)) fr.ever[v] = 1;
      if (!BATCHED) {
        rv = a.R[v];
        inv = a.inv_degree[v];
      }
      const double c0 = teleport_term(a, v);
      const double r = PRUNE ? (c0 + a.alpha * (c - rv * inv)) / (1.0 - a.alpha * inv) : c0 + a.alpha * c;
      change = fabs(r - rv);
      flags |= kAffected | kWritten;
      if (FRONTIER) {
        const double rel = change / fmax(fmax(r, rv), kSmallestRank);  // as in finish_vertex
        if (PRUNE && rel <= a.tau_p) flags &= ~kAffected;  // pruned: v still takes r this iteration
        if (rel > a.tau_f && (PRUNE || !(flags & kExpanded))) {
          expand = 1;
          if (!PRUNE) flags |= kExpanded;
        }
      }
      if (flags != before) a.dv[v] = flags;
      a.Rnew[v] = r;
      a.Cnew[v] = pull && expand ? -(r * inv) : r * inv;
      if (!pull) edges += static_cast<double>(end - begin);
    }
  }
  if (!FRONTIER || pull) return change;
  // Push: lane 0's decision to every lane of the group, which then marks the
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
    if (finisher) edges += static_cast<double>(out_end - out_begin);
  }
  if constexpr (G < 32) {
    const bool by_warp = expand && out_end - out_begin > 32;  // uniform over the G lanes
    for (unsigned leaders = __ballot_sync(0xffffffffu, by_warp && lane == 0); leaders; leaders &= leaders - 1) {
      const int leader = __ffs(leaders) - 1;
      const long long first = __shfl_sync(0xffffffffu, out_begin, leader);
      const long long last = __shfl_sync(0xffffffffu, out_end, leader);
      for (long long e = first + threadIdx.x % 32; e < last; e += 32) fr.dx_out[fr.targets[e]] = 1;
    }
    if (by_warp) expand = 0;
  }
  if (expand) {
    for (long long e = out_begin + lane; e < out_end; e += G) fr.dx_out[fr.targets[e]] = 1;
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

}  // namespace dynpr
