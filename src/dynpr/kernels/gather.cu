// The yardstick of a pull iteration's memory traffic (dynpr.bench.gather_ms):
// total += C[ids[e]] over every edge e, a grid-stride loop with perfect load
// balance and no per-vertex work, so its time is what streaming the ids and
// gathering one double per edge costs on this graph's access pattern.
#include "common.cuh"

extern "C" __global__ void __launch_bounds__(dynpr::kBlock) gather_sum(const int* ids, long long m, const double* C,
                                                                double* total) {
  double sum = 0.0;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
#pragma unroll 4
  for (long long e = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; e < m; e += stride) {
    sum += C[ids[e]];
  }
  sum = dynpr::block_sum(sum);
  if (threadIdx.x == 0) atomicAdd(total, sum);
}
