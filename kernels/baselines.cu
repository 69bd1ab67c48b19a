// Kernel designs the default engine (pagerank.cu) is measured against, used
// by dynpr.gpu.baselines only: the paper's thread/block partitioned design
// with its flag-scan-scatter partition and separate expansion, DT's
// level-synchronous BFS, one-class-per-launch rank kernels (pull designs and
// the unfused default), the host-driven iteration bookkeeping and a push
// design with atomics. Degree classes, contributions and relabelling come
// from pagerank.cu's module.
//
// A "listed" kernel walks a partition's vertex ids; an unlisted one walks all
// vertices and keeps only those whose degree belongs to it (the paper's
// "Don't partition" level). Every vertex is handled by exactly one of a
// thread/block kernel pair, so each rank is written once.
#include "common.cuh"
#include "layouts.cuh"
#include "rank_vertex.cuh"

using dynpr::ClassRange;
using dynpr::GraphArgs;
using dynpr::kBlock;
using dynpr::RankBuffers;
using dynpr::SolveOptions;
using dynpr::finish_vertex;
using dynpr::IterationState;
using dynpr::rank_vertex;
using dynpr::RankArgs;

// ---- the paper's partitioning by degree (Alg. 4) ----------------------------

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


// One thread per vertex. AFFECTED: only vertices with dv set are computed,
// the rest copy R to Rnew. The block's largest change goes to *delta.
template <bool LISTED, bool AFFECTED, bool FRONTIER, bool PRUNE>
__global__ void __launch_bounds__(kBlock) rank_thread(ClassRange range, GraphArgs g, RankBuffers r, unsigned char* dv,
                                                      unsigned char* dn, SolveOptions o, double* delta) {
  const int* ids = range.ids;
  const int count = range.count;
  const long long degree_switch = range.hi;
  const long long* in_offsets = g.in_offsets;
  const int* sources = g.sources;
  const double* inv_degree = g.inv_degree;
  const double* R = r.R[0];
  double* Rnew = r.R[1];
  const double c0 = o.c0, alpha = o.alpha, tau_f = o.tau_f, tau_p = o.tau_p;
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
__global__ void __launch_bounds__(kBlock) rank_block(ClassRange range, GraphArgs g, RankBuffers r, unsigned char* dv,
                                                     unsigned char* dn, SolveOptions o, double* delta) {
  const int* ids = range.ids;
  const int count = range.count;
  const long long degree_switch = range.lo;
  const long long* in_offsets = g.in_offsets;
  const int* sources = g.sources;
  const double* inv_degree = g.inv_degree;
  const double* R = r.R[0];
  double* Rnew = r.R[1];
  const double c0 = o.c0, alpha = o.alpha, tau_f = o.tau_f, tau_p = o.tau_p;
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


// dv |= out-neighbours (in the new graph) of every u with dn[u]; one thread
// per vertex of the low out-degree set.
template <bool LISTED>
__global__ void __launch_bounds__(kBlock) expand_thread(ClassRange range, GraphArgs g, const unsigned char* dn,
                                                        unsigned char* dv, unsigned char* ever, const int* done) {
  if (*done) return;  // converged: the iterations after it are no-ops
  const int* ids = range.ids;
  const int count = range.count;
  const long long degree_switch = range.hi;
  const long long* offsets = g.out_offsets;
  const int* targets = g.targets;
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
__global__ void __launch_bounds__(kBlock) expand_block(ClassRange range, GraphArgs g, const unsigned char* dn,
                                                       unsigned char* dv, unsigned char* ever, const int* done) {
  if (*done) return;
  const int* ids = range.ids;
  const int count = range.count;
  const long long degree_switch = range.lo;
  const long long* offsets = g.out_offsets;
  const int* targets = g.targets;
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


// One class per launch (the unfused designs): block b takes groups
// [b * kBlock / G, ...). Every kernel returns at once when *done is set, so
// iterations launched past convergence change nothing.
// r: R and Rnew in R[0] and R[1], C and Cnew in C[0] and C[1] (the ranks again without PRC).
template <int G, bool LISTED, bool AFFECTED, bool FRONTIER, bool PRUNE, bool PRC>
__global__ void __launch_bounds__(kBlock) rank_group(ClassRange range, GraphArgs g, RankBuffers r, unsigned char* dv,
                                                     unsigned char* dn, SolveOptions o, double* delta,
                                                     const int* done) {
  if (*done) return;
  const RankArgs a{g.in_offsets, g.sources, g.inv_degree, r.R[0], r.C[0], r.R[1], r.C[1], dv, dn,
                   o.c0, o.alpha, o.tau_f, o.tau_p};
  bool active;
  const int v = dynpr::class_vertex<LISTED>((static_cast<long long>(blockIdx.x) * kBlock + threadIdx.x) / G,
                                            range.ids, range.count, g.in_offsets, range.lo, range.hi, active);
  double change = rank_vertex<G, AFFECTED, FRONTIER, PRUNE, PRC>(active, v, a);
  if constexpr (G != kBlock) change = dynpr::block_max(change);
  if (threadIdx.x == 0 && change > 0.0) dynpr::atomic_max_nonneg(delta, change);
}


// One iteration's bookkeeping on the device: count it, stop when the
// L-infinity change is <= tau or the cap is reached, and reset the change
// slot for the next iteration.
extern "C" __global__ void finish_iteration(double* delta, IterationState* state, double tau, int max_iterations) {
  if (state->done) return;
  const double change = *delta;
  *delta = 0.0;
  state->iterations += 1;
  state->converged = change <= tau;
  if (state->converged || state->iterations >= max_iterations) state->done = 1;
}

// dn = 0 before an iteration (skipped once converged).
extern "C" __global__ void clear_flags(unsigned char* flags, int n, const int* done) {
  if (*done) return;
  const int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v < n) flags[v] = 0;
}


// ---- push with atomics (Gunrock/Hornet style) -----------------------------
// "GPU Naive" of the report "PageRank Algorithm: Complete CUDA Implementation".

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
