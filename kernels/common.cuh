// Shared device helpers for dynpr's kernels (inlined into each .cu by the
// loader, so editing this header changes the NVRTC cache key).
#pragma once
#include <cooperative_groups.h>

namespace dynpr {

// Threads per block of every kernel, from dynpr.designs.BLOCK (the loader
// passes it as a define); block reductions below assume a multiple of 32 and
// at most 1024.
#ifndef DYNPR_BLOCK
#error "compile with -DDYNPR_BLOCK=<threads per block> (dynpr.designs.nvrtc_defines)"
#endif
constexpr int kBlock = DYNPR_BLOCK;
static_assert(kBlock % 32 == 0 && kBlock <= 1024, "a block is whole warps, at most 1024 threads");
constexpr int kWarps = kBlock / 32;

struct Sum {
  __device__ double operator()(double a, double b) const { return a + b; }
};
struct Max {
  __device__ double operator()(double a, double b) const { return fmax(a, b); }
};

template <class Op>
__device__ __forceinline__ double warp_reduce(double x) {
  for (int off = 16; off > 0; off >>= 1) x = Op()(x, __shfl_down_sync(0xffffffffu, x, off));
  return x;
}

// Reduce over the block (blockDim.x == kBlock); the result is valid in thread 0.
// Warp shuffles first, then one value per warp through shared memory (one
// scratch array per Op). 0 is the identity of Sum and of Max over the
// non-negative changes it is used for.
template <class Op>
__device__ __forceinline__ double block_reduce(double x) {
  __shared__ double partial[kWarps];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  x = warp_reduce<Op>(x);
  if (lane == 0) partial[warp] = x;
  __syncthreads();
  x = threadIdx.x < kWarps ? partial[threadIdx.x] : 0.0;
  if (warp == 0) x = warp_reduce<Op>(x);
  return x;
}

__device__ __forceinline__ double block_sum(double x) { return block_reduce<Sum>(x); }
__device__ __forceinline__ double block_max(double x) { return block_reduce<Max>(x); }

// Exclusive prefix sum of x over the block (blockDim.x == kBlock) in thread
// order; `total` gets the block's sum in every thread.
__device__ __forceinline__ long long block_exclusive_sum(long long x, long long& total) {
  __shared__ long long warp_totals[kWarps];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  long long inclusive = x;
  for (int off = 1; off < 32; off <<= 1) {
    const long long y = __shfl_up_sync(0xffffffffu, inclusive, off);
    if (lane >= off) inclusive += y;
  }
  if (lane == 31) warp_totals[warp] = inclusive;
  __syncthreads();
  long long before = 0;
  total = 0;
  for (int w = 0; w < kWarps; ++w) {
    before += w < warp ? warp_totals[w] : 0;
    total += warp_totals[w];
  }
  return before + inclusive - x;
}

// A barrier of `blocks` blocks of a cooperative launch (the others must have
// left) that also tells every block whether any block arrived with `flag`
// set: each block adds 1 to `counter` (which starts at zero), plus 2^32 when
// a thread of it has `flag`, and waits for the low word to reach `blocks`.
// Thread 0 arrives with a release add, which publishes the block's writes,
// and waits with acquire loads, which make the others' visible; the flag
// rides on the arrival, so no read after the barrier is needed to learn it.
__device__ __forceinline__ bool grid_barrier_or(unsigned long long* counter, unsigned int blocks, bool flag) {
  const bool block_flag = __syncthreads_or(flag);
  bool any = false;
  if (threadIdx.x == 0) {
    // A release add and acquire loads instead of fences around a relaxed add and loads (as
    // cooperative groups' grid sync): one ordering point less per arrival (docs/dynamic.md).
    const unsigned long long arrival = 1ull + (block_flag ? 1ull << 32 : 0ull);
    asm volatile("red.release.gpu.global.add.u64 [%0], %1;" ::"l"(counter), "l"(arrival) : "memory");
    unsigned long long seen;
    do {
      asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(seen) : "l"(counter) : "memory");
    } while (static_cast<unsigned int>(seen) < blocks);
    any = (seen >> 32) != 0;
  }
  return __syncthreads_or(any);
}

// L-infinity accumulation across blocks: for non-negative IEEE-754 doubles the
// order of the values equals the order of their bit patterns read as unsigned
// 64-bit integers, so an integer atomicMax on the bits is an exact max.
__device__ __forceinline__ void atomic_max_nonneg(double* target, double x) {
  atomicMax(reinterpret_cast<unsigned long long*>(target),
            static_cast<unsigned long long>(__double_as_longlong(x)));
}

// Set `bits` in bytes[i] atomically (through its aligned 32-bit word; the
// array's base must be 4-byte aligned, as CuPy's allocations are); returns
// the byte before.
__device__ __forceinline__ unsigned atomic_or_byte(unsigned char* bytes, long long i, unsigned bits) {
  unsigned* word = reinterpret_cast<unsigned*>(bytes + (i & ~3LL));
  const int shift = 8 * static_cast<int>(i & 3);
  return (atomicOr(word, bits << shift) >> shift) & 0xffu;
}

// Append x to a list of *count entries: one atomic per group of lanes that
// arrive together (they take consecutive slots, in no particular order).
template <typename T>
__device__ __forceinline__ void append(T* list, int* count, T x) {
  namespace cg = cooperative_groups;
  const cg::coalesced_group lanes = cg::coalesced_threads();
  int base = 0;
  if (lanes.thread_rank() == 0) base = atomicAdd(count, static_cast<int>(lanes.size()));
  list[lanes.shfl(base, 0) + lanes.thread_rank()] = x;
}

}  // namespace dynpr
