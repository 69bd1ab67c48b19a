// The per-vertex rank step every PageRank kernel design shares: finishing a
// vertex from its gathered sum (the paper's Alg. 3, with DF-P's closed form),
// the gather over its in-edges, and the G-lane vertex step rank_vertex, so a
// vertex's rank depends only on its lane count G whichever kernel calls.
// Conventions: vertex ids int, CSR offsets long long, ranks double, flags
// unsigned char.
#pragma once
#include "common.cuh"

namespace dynpr {


// inv_degree[u] = 1/d[u] (d = out-degree), precomputed like the CPU twin's
// pull-matrix weights so both sides multiply the same doubles.
// Finish vertex v given c = sum over in-neighbours u of R[u]/d[u]; returns
// |r - R[v]|. DF-P uses the closed form of Eq. 2-3 (c includes the
// self-loop's term, which the closed form takes out again).
// With PRC the contribution r/d[v] of the next iteration is written too
// (precomputed contributions, PRC, of the report "GPU Programming"), so gathers read one double per edge.
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

}  // namespace dynpr
