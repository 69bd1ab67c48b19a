// Shared device helpers for dynpr's kernels (inlined into each .cu by the
// loader, so editing this header changes the NVRTC cache key).
#pragma once

namespace dynpr {

// Threads per block of every kernel; block reductions below assume a multiple
// of 32 and at most 1024.
constexpr int kBlock = 256;
constexpr int kWarps = kBlock / 32;

__device__ __forceinline__ double warp_sum(double x) {
  for (int off = 16; off > 0; off >>= 1) x += __shfl_down_sync(0xffffffffu, x, off);
  return x;
}

__device__ __forceinline__ double warp_max(double x) {
  for (int off = 16; off > 0; off >>= 1) x = fmax(x, __shfl_down_sync(0xffffffffu, x, off));
  return x;
}

// Sum over the block (blockDim.x == kBlock); the result is valid in thread 0.
// Warp shuffles first, then one value per warp through shared memory.
__device__ __forceinline__ double block_sum(double x) {
  __shared__ double partial[kWarps];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  x = warp_sum(x);
  if (lane == 0) partial[warp] = x;
  __syncthreads();
  x = threadIdx.x < kWarps ? partial[threadIdx.x] : 0.0;
  if (warp == 0) x = warp_sum(x);
  return x;
}

// Max over the block of non-negative values; valid in thread 0.
__device__ __forceinline__ double block_max(double x) {
  __shared__ double partial[kWarps];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  x = warp_max(x);
  if (lane == 0) partial[warp] = x;
  __syncthreads();
  x = threadIdx.x < kWarps ? partial[threadIdx.x] : 0.0;
  if (warp == 0) x = warp_max(x);
  return x;
}

// L-infinity accumulation across blocks: for non-negative IEEE-754 doubles the
// order of the values equals the order of their bit patterns read as unsigned
// 64-bit integers, so an integer atomicMax on the bits is an exact max.
__device__ __forceinline__ void atomic_max_nonneg(double* target, double x) {
  atomicMax(reinterpret_cast<unsigned long long*>(target),
            static_cast<unsigned long long>(__double_as_longlong(x)));
}

}  // namespace dynpr
