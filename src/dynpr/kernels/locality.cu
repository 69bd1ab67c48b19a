// CSR segmenting (dynpr.locality, dynpr.gpu.locality): a Static / ND
// iteration over segments of source ids whose contributions fit the L2. Per
// segment one launch sums its sub-rows into the accumulator acc (a thread per
// short sub-row, a warp per piece of a long one, the pieces' sums kept in
// `partial`), a second adds each long sub-row's pieces in order; after the
// last segment segmented_finish turns acc into the new ranks and
// contributions, zeroes it, and its last block ends the iteration. Each
// destination appears at most once per segment and segments run one after
// another, so no addition is atomic and the sums are the same every run.
// Every kernel returns at once once the state's done flag is set.
#include "common.cuh"
#include "layouts.cuh"
#include "rank_vertex.cuh"

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
    const double* __restrict__ C, long long first_row, long long row_count, long long first_piece,
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

// Rnew = c0 + alpha * acc, Cnew = Rnew / d, acc = 0; the largest change goes
// to *delta, and the launch's last block counts the iteration and sets done
// at a change <= tau or at max_iterations (then clears delta and the ticket).
extern "C" __global__ void __launch_bounds__(kBlock) segmented_finish(
    int n, double* acc, const double* inv_degree, const double* R, double* Rnew, double* Cnew, double c0,
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
  __shared__ bool last;
  if (threadIdx.x == 0) {
    if (change > 0.0) dynpr::atomic_max_nonneg(delta, change);
    __threadfence();  // the change is visible before the ticket is taken
    last = atomicAdd(&state->ticket, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (last && threadIdx.x == 0) {
    __threadfence();
    const double largest = *reinterpret_cast<volatile double*>(delta);
    *delta = 0.0;
    state->ticket = 0;
    state->iterations += 1;
    state->converged = largest <= tau;
    if (state->converged || state->iterations >= max_iterations) state->done = 1;
  }
}
