// Layouts whose per-edge traffic stays in the L2 or in shared memory (issue 35).
//
// CSR segmenting (dynpr.locality, dynpr.gpu.locality): a Static / ND
// iteration over segments of source ids whose contributions fit the L2. Per
// segment one launch sums its sub-rows into the accumulator acc (a thread per
// short sub-row, a warp per piece of a long one, the pieces' sums kept in
// `partial`), a second adds each long sub-row's pieces in order; after the
// last segment segmented_finish turns acc into the new ranks and
// contributions, zeroes it, and its last block ends the iteration. Each
// destination appears at most once per segment and segments run one after
// another, so no addition is atomic and the sums are the same every run.
//
// Propagation blocking (dynpr.blocking, dynpr.gpu.blocking): blocking_expand
// writes every out-edge's contribution into its tile's bin order through
// shared memory, blocking_accumulate adds each bin's runs into a fixed-point
// accumulator in shared memory (the same sums every run) and finishes the
// bin's vertices; its last block ends the iteration.
//
// G-Shards (dynpr.shards, dynpr.gpu.shards): shards_iterate adds each shard's
// entries, read front to back, into the same fixed-point accumulator,
// finishes the shard's vertices and writes their contributions into the
// shard's windows in every shard; its last block ends the iteration.
//
// Every kernel returns at once once the state's done flag is set.
#include "common.cuh"
#include "layouts.cuh"
#include "rank_vertex.cuh"

using dynpr::Contribution;
using dynpr::IterationState;
using dynpr::kBlock;
using dynpr::kWarps;

// Blocks [0, short_blocks) take a sub-row of [first_row, first_row + row_count)
// per thread and skip the long ones (more than short_edges edges); the blocks
// after them a piece of [first_piece, first_piece + piece_count) per warp,
// piece k of a long sub-row being its edges [k * piece_edges, (k + 1) * piece_edges).
extern "C" __global__ void __launch_bounds__(kBlock) segment_gather(
    const int* __restrict__ rows, const long long* __restrict__ row_offsets, const int* __restrict__ sources,
    const int* __restrict__ long_rows, const long long* __restrict__ piece_first, const int* __restrict__ piece_row,
    const Contribution* __restrict__ C, long long first_row, long long row_count, long long first_piece,
    long long piece_count, long long short_blocks, long long short_edges, long long piece_edges,
    double* __restrict__ acc, double* __restrict__ partial, const IterationState* state) {
  if (state->done) return;
  if (blockIdx.x < short_blocks) {
    const long long i = static_cast<long long>(blockIdx.x) * kBlock + threadIdx.x;
    if (i >= row_count) return;
    const long long begin = row_offsets[first_row + i], end = row_offsets[first_row + i + 1];
    if (end - begin > short_edges) return;
    double c = 0.0;
#pragma unroll 4  // independent gathers in flight; the additions keep their order
    for (long long e = begin; e < end; ++e) c += C[sources[e]];
    const int v = rows[first_row + i];
    acc[v] += c;
    return;
  }
  const long long p = (static_cast<long long>(blockIdx.x) - short_blocks) * kWarps + (threadIdx.x >> 5);
  if (p >= piece_count) return;  // uniform over the warp
  const int lane = threadIdx.x & 31;
  const int j = piece_row[first_piece + p];
  const long long row = long_rows[j];
  const long long begin = row_offsets[row] + (first_piece + p - piece_first[j]) * piece_edges;
  const long long end = min(begin + piece_edges, row_offsets[row + 1]);
  double c = 0.0;
#pragma unroll 4
  for (long long e = begin + lane; e < end; e += 32) c += C[sources[e]];
  c = dynpr::warp_reduce<dynpr::Sum>(c);
  if (lane == 0) partial[first_piece + p] = c;
}

// acc[v] += the pieces of each long sub-row of [first_long, first_long + long_count), in order.
extern "C" __global__ void __launch_bounds__(kBlock) segment_long_rows(
    const int* rows, const int* long_rows, const long long* piece_first, const double* partial,
    long long first_long, long long long_count, double* acc, const IterationState* state) {
  if (state->done) return;
  const long long j = static_cast<long long>(blockIdx.x) * kBlock + threadIdx.x;
  if (j >= long_count) return;
  double c = 0.0;
  for (long long p = piece_first[first_long + j]; p < piece_first[first_long + j + 1]; ++p) c += partial[p];
  acc[rows[long_rows[first_long + j]]] += c;
}

// Called by thread 0 of every block once its largest change is folded into
// *delta: the launch's last block counts the iteration and sets done at a
// change <= tau or at max_iterations, then clears delta and the ticket.
__device__ __forceinline__ void end_iteration(double* delta, IterationState* state, double tau, int max_iterations) {
  __threadfence();  // the change is visible before the ticket is taken
  if (atomicAdd(&state->ticket, 1u) != gridDim.x - 1) return;
  __threadfence();
  const double largest = *reinterpret_cast<volatile double*>(delta);
  *delta = 0.0;
  state->ticket = 0;
  state->iterations += 1;
  state->converged = largest <= tau;
  if (state->converged || state->iterations >= max_iterations) state->done = 1;
}

// Rnew = c0 + alpha * acc, Cnew = Rnew / d, acc = 0; the largest change ends the iteration (end_iteration).
extern "C" __global__ void __launch_bounds__(kBlock) segmented_finish(
    int n, double* acc, const double* inv_degree, const double* R, double* Rnew, Contribution* Cnew, double c0,
    double alpha, double* delta, IterationState* state, double tau, int max_iterations) {
  if (state->done) return;
  const int v = blockIdx.x * kBlock + threadIdx.x;
  double change = 0.0;
  if (v < n) {
    const double c = acc[v];
    acc[v] = 0.0;
    change = dynpr::finish_vertex<false, false, true>(v, c, R[v], inv_degree[v], Rnew, nullptr, nullptr, c0, alpha,
                                                      0.0, 0.0, Cnew);
  }
  change = dynpr::block_max(change);
  if (threadIdx.x != 0) return;
  if (change > 0.0) dynpr::atomic_max_nonneg(delta, change);
  end_iteration(delta, state, tau, max_iterations);
}

// Blocks of kBlockingThreads threads: an expand block's tile takes nearly all
// of a multiprocessor's shared memory, an accumulate block's bin up to 136 KiB.
constexpr int kBlockingThreads = 1024;
constexpr unsigned kFullMask = 0xffffffffu;
constexpr long long kNoRowEnd = 0x7fffffffffffffffLL;  // past the last row
constexpr int kAhead = 8;  // steps of 32 edges whose loads a warp issues before using them

// A block per tile of tile_edges out-edges (in source order): each edge's
// contribution C[u] goes to shared memory at its position in the tile's bin
// order, then the tile is stored whole, so the scattered writes stay in shared
// memory and the global ones are coalesced. A warp walks its share of the
// tile 32 edges at a time, finding each edge's source among a window of 32
// row ends (every vertex has an out-edge, its self-loop, so 32 rows hold at
// least 32 edges).
extern "C" __global__ void __launch_bounds__(kBlockingThreads) blocking_expand(
    int n, const long long* __restrict__ out_offsets, const int* __restrict__ tile_source,
    const unsigned short* __restrict__ position, const Contribution* __restrict__ C, long long m, int tile_edges,
    Contribution* __restrict__ stored, const IterationState* state) {
  if (state->done) return;
  extern __shared__ unsigned char shared_bytes[];
  Contribution* staged = reinterpret_cast<Contribution*>(shared_bytes);
  const long long first = static_cast<long long>(blockIdx.x) * tile_edges;
  const int count = static_cast<int>(min(static_cast<long long>(tile_edges), m - first));
  const int warps = blockDim.x >> 5, warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int share = (count + warps - 1) / warps;
  const long long begin = first + static_cast<long long>(warp) * share;
  const long long end = min(first + count, begin + share);
  if (begin < end) {
    int lo = tile_source[blockIdx.x], hi = tile_source[blockIdx.x + 1];
    while (lo < hi) {  // the source of edge begin: the last row starting at or before it
      const int mid = (lo + hi + 1) >> 1;
      if (out_offsets[mid] <= begin) lo = mid;
      else hi = mid - 1;
    }
    // A window of 32 rows from `window`: lane j holds the end of row window + j, and `last` the
    // window's end. A step's edges all lie before `last` (edge base lies at or before it), so their
    // rows are window + (row ends at or before the edge); the window moves on when a step would
    // pass its end, once per 32 rows, not a load chained to every step.
    int window = lo;
    long long row_end = window + 1 + lane <= n ? out_offsets[window + 1 + lane] : kNoRowEnd;
    long long last = __shfl_sync(kFullMask, row_end, 31);
    for (long long chunk = begin; chunk < end; chunk += 32 * kAhead) {
      unsigned short place[kAhead];  // positions loaded kAhead steps ahead: loads in flight, not a chain
#pragma unroll
      for (int s = 0; s < kAhead; ++s) {
        const long long e = chunk + 32 * s + lane;
        place[s] = e < end ? position[e] : 0;
      }
#pragma unroll
      for (int s = 0; s < kAhead; ++s) {
        const long long base = chunk + 32 * s;
        if (base >= end) break;  // uniform over the warp
        if (base + 31 >= last) {  // move the window to the row of edge base
          window += __popc(__ballot_sync(kFullMask, row_end <= base));
          row_end = window + 1 + lane <= n ? out_offsets[window + 1 + lane] : kNoRowEnd;
          last = __shfl_sync(kFullMask, row_end, 31);
        }
        const long long e = base + lane;
        int k = 0;  // rows of the window ending at or before e
        for (int step = 16; step > 0; step >>= 1) {
          if (__shfl_sync(kFullMask, row_end, k + step - 1) <= e) k += step;
        }
        if (e < end) staged[place[s]] = C[window + k];
      }
    }
  }
  __syncthreads();
  for (int i = threadIdx.x; i < count; i += blockDim.x) stored[first + i] = staged[i];
}

// The bins' and shards' accumulators add 64-bit integers in units of 2^-61: a
// bin's sum is at most the ranks' sum (1), so there is room for 8; each
// contribution rounds by 2^-62 at most (m * 2^-62 in L1 per iteration, far
// below the ranks' own rounding), and integer additions give the same sum in
// any order, where double atomics would not (these measured within 2%:
// docs/locality.md).
constexpr double kFixedOne = 2305843009213693952.0;  // 2^61

// acc[target] += value in fixed point for every lane with `mine` set (the
// whole warp calls it). Lanes adding to the same destination (a hub's
// in-edges) are summed by the lowest of them, in lane order, for one atomic:
// otherwise they serialize on its address. scratch holds a value per thread.
__device__ __forceinline__ void add_fixed(unsigned long long* acc, unsigned long long* scratch, bool mine,
                                          unsigned short target, double value) {
  const unsigned active = __ballot_sync(kFullMask, mine);
  if (!mine) return;
  const unsigned peers = __match_any_sync(active, target);
  scratch[threadIdx.x] = static_cast<unsigned long long>(__double2ll_rn(value * kFixedOne));
  __syncwarp(active);
  if ((threadIdx.x & 31) == __ffs(peers) - 1) {
    unsigned long long sum = 0;
    for (unsigned rest = peers; rest; rest &= rest - 1) sum += scratch[(threadIdx.x & ~31) + __ffs(rest) - 1];
    atomicAdd(&acc[target], sum);
  }
  __syncwarp(active);
}

// A warp's group of up to 32 runs, lane j holding run j's length (0 past the
// group): run_end is their inclusive sum up to lane j; run_holding(run_end, p)
// the run that holds entry p of their concatenation (the whole warp calls both).
struct LaneRuns {
  int run_end, total;
  __device__ __forceinline__ explicit LaneRuns(int length) : run_end(length) {
    for (int step = 1; step < 32; step <<= 1) {
      const int before = __shfl_up_sync(kFullMask, run_end, step);
      if ((threadIdx.x & 31) >= step) run_end += before;
    }
    total = __shfl_sync(kFullMask, run_end, 31);
  }
  __device__ __forceinline__ int run_holding(int p) const {
    int j = 0;  // the first run whose end exceeds p
    for (int step = 16; step > 0; step >>= 1) {
      if (__shfl_sync(kFullMask, run_end, j + step - 1) <= p) j += step;
    }
    return j;
  }
};

// Finish vertices [first_vertex, first_vertex + count) from their fixed-point
// sums as segmented_finish does, and fold the block's largest change into *delta.
__device__ __forceinline__ void finish_fixed(const unsigned long long* acc, int first_vertex, int count,
                                             const double* inv_degree, const double* R, double* Rnew,
                                             Contribution* Cnew, double c0, double alpha, double* delta) {
  double change = 0.0;
  for (int i = threadIdx.x; i < count; i += blockDim.x) {
    const int v = first_vertex + i;
    const double sum = static_cast<double>(acc[i]) / kFixedOne;
    change = fmax(change, dynpr::finish_vertex<false, false, true>(v, sum, R[v], inv_degree[v], Rnew, nullptr, nullptr,
                                                                   c0, alpha, 0.0, 0.0, Cnew));
  }
  change = dynpr::warp_reduce<dynpr::Max>(change);
  if ((threadIdx.x & 31) == 0 && change > 0.0) dynpr::atomic_max_nonneg(delta, change);
}

// A block per bin of bin_width destinations: its accumulator in shared memory
// takes the bin's run of every tile (a warp per `group` <= 32 tiles at a
// time, its lanes over the runs' entries; small groups where tiles are few
// keep the warps' shares even), then the bin's vertices are finished and the
// last block ends the iteration. The accumulator is fixed point (add_fixed).
extern "C" __global__ void __launch_bounds__(kBlockingThreads) blocking_accumulate(
    int n, const Contribution* __restrict__ stored, const unsigned short* __restrict__ local_target,
    const unsigned short* __restrict__ run_start, const unsigned short* __restrict__ run_length, int tiles,
    int group, int tile_edges, int bin_width, const double* __restrict__ inv_degree, const double* __restrict__ R,
    double* __restrict__ Rnew, Contribution* __restrict__ Cnew, double c0, double alpha, double* delta,
    IterationState* state, double tau, int max_iterations) {
  if (state->done) return;
  extern __shared__ unsigned long long acc[];
  __shared__ unsigned long long scratch[kBlockingThreads];
  const int first_vertex = blockIdx.x * bin_width;
  const int width = min(bin_width, n - first_vertex);
  for (int i = threadIdx.x; i < width; i += blockDim.x) acc[i] = 0;
  __syncthreads();
  const int warps = blockDim.x >> 5, warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const long long runs = static_cast<long long>(blockIdx.x) * tiles;
  for (int t0 = warp * group; t0 < tiles; t0 += warps * group) {
    const int t = t0 + lane;
    int start = 0, length = 0;
    if (lane < group && t < tiles) {
      start = run_start[runs + t];
      length = run_length[runs + t];
    }
    const LaneRuns group_runs(length);
    for (int p0 = 0; p0 < group_runs.total; p0 += 32 * kAhead) {
      long long at[kAhead];  // kAhead entries per lane located first, then loaded together
#pragma unroll
      for (int s = 0; s < kAhead; ++s) {
        const int p = p0 + 32 * s + lane;
        const int j = group_runs.run_holding(p);
        const int run_first = __shfl_sync(kFullMask, group_runs.run_end - length, j);
        const int run_offset = __shfl_sync(kFullMask, start, j);
        at[s] = p < group_runs.total ? static_cast<long long>(t0 + j) * tile_edges + run_offset + (p - run_first) : -1;
      }
      double value[kAhead];
      unsigned short target[kAhead];
#pragma unroll
      for (int s = 0; s < kAhead; ++s) {
        value[s] = at[s] >= 0 ? static_cast<double>(stored[at[s]]) : 0.0;
        target[s] = at[s] >= 0 ? local_target[at[s]] : 0;
      }
#pragma unroll
      for (int s = 0; s < kAhead; ++s) add_fixed(acc, scratch, at[s] >= 0, target[s], value[s]);
    }
  }
  __syncthreads();
  finish_fixed(acc, first_vertex, width, inv_degree, R, Rnew, Cnew, c0, alpha, delta);
  __syncthreads();  // every warp's change is folded before thread 0 takes the ticket
  if (threadIdx.x == 0) end_iteration(delta, state, tau, max_iterations);
}

// G-Shards (dynpr.shards, dynpr.gpu.shards): a block per shard of `width`
// destinations. It adds its shard's entries (an in-edge's stored source
// contribution and its destination within the shard, in source order), read
// front to back, into a fixed-point accumulator in shared memory, finishes the
// shard's vertices, stages their new contributions in shared memory over the
// accumulator and writes them into the shard's windows in every shard (a warp
// per group of `group` <= 32 windows, its lanes over their entries); the last
// block ends the iteration. The stored contributions are double-buffered (read
// `stored`, write `stored_next`): a block writes other shards' windows while
// their blocks may still read this iteration's. With `fill` set the block only
// writes its windows, from Cnew: the start of a solve, not an iteration.
extern "C" __global__ void __launch_bounds__(kBlockingThreads) shards_iterate(
    int n, int width, int shards, const long long* __restrict__ shard_start,
    const unsigned short* __restrict__ local_target, const Contribution* __restrict__ stored,
    Contribution* __restrict__ stored_next, const unsigned short* __restrict__ window_source,
    const long long* __restrict__ window_first, const long long* __restrict__ window_cw,
    const int* __restrict__ window_length, int group, const double* __restrict__ inv_degree,
    const double* __restrict__ R, double* __restrict__ Rnew, Contribution* __restrict__ Cnew, double c0, double alpha,
    double* delta, IterationState* state, double tau, int max_iterations, int fill) {
  if (state->done) return;
  extern __shared__ unsigned long long acc[];
  Contribution* staged = reinterpret_cast<Contribution*>(acc);
  __shared__ unsigned long long scratch[kBlockingThreads];
  const int first_vertex = blockIdx.x * width;
  const int count = min(width, n - first_vertex);
  const int warps = blockDim.x >> 5, warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  if (!fill) {
    for (int i = threadIdx.x; i < count; i += blockDim.x) acc[i] = 0;
    __syncthreads();
    const long long begin = shard_start[blockIdx.x], end = shard_start[blockIdx.x + 1];
    for (long long base = begin + static_cast<long long>(warp) * 32 * kAhead; base < end;
         base += static_cast<long long>(warps) * 32 * kAhead) {
      double value[kAhead];
      unsigned short target[kAhead];
#pragma unroll
      for (int s = 0; s < kAhead; ++s) {
        const long long e = base + 32 * s + lane;
        value[s] = e < end ? static_cast<double>(stored[e]) : 0.0;
        target[s] = e < end ? local_target[e] : 0;
      }
#pragma unroll
      for (int s = 0; s < kAhead; ++s) add_fixed(acc, scratch, base + 32 * s + lane < end, target[s], value[s]);
    }
    __syncthreads();
    finish_fixed(acc, first_vertex, count, inv_degree, R, Rnew, Cnew, c0, alpha, delta);
    __syncthreads();  // every sum is read before staged overwrites the accumulator
  }
  // A thread stages the contributions it finished (or, filling, the starting ones).
  for (int i = threadIdx.x; i < count; i += blockDim.x) staged[i] = Cnew[first_vertex + i];
  __syncthreads();
  const long long windows = static_cast<long long>(blockIdx.x) * shards;
  for (int t0 = warp * group; t0 < shards; t0 += warps * group) {
    const int t = t0 + lane;
    long long first = 0;
    int length = 0;
    if (lane < group && t < shards) {
      first = window_first[windows + t];
      length = window_length[windows + t];
    }
    const long long cw = window_cw[windows + t0];  // the group's windows follow each other there
    const LaneRuns group_runs(length);
    for (int p0 = 0; p0 < group_runs.total; p0 += 32 * kAhead) {
      long long to[kAhead];  // kAhead entries per lane located first, their sources loaded together
      unsigned short source[kAhead];
#pragma unroll
      for (int s = 0; s < kAhead; ++s) {
        const int p = p0 + 32 * s + lane;
        const int j = group_runs.run_holding(p);
        const int run_first = __shfl_sync(kFullMask, group_runs.run_end - length, j);
        const long long run_to = __shfl_sync(kFullMask, first, j);  // every lane shuffles, in range or not
        to[s] = p < group_runs.total ? run_to + (p - run_first) : -1;
        source[s] = p < group_runs.total ? window_source[cw + p] : 0;
      }
#pragma unroll
      for (int s = 0; s < kAhead; ++s) {
        if (to[s] >= 0) stored_next[to[s]] = staged[source[s]];
      }
    }
  }
  if (fill) return;
  __syncthreads();  // every warp's change is folded before thread 0 takes the ticket
  if (threadIdx.x == 0) end_iteration(delta, state, tau, max_iterations);
}
