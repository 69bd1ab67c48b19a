// The yardstick of a pull iteration's memory traffic (dynpr.evaluation.bench.gather_ms)
// and its probes (benchmarks/bench_gather_wall.py): total += C[ids[e]] over
// every edge e, a grid-stride loop with perfect load balance and no
// per-vertex work, so its time is what streaming the ids and gathering one
// contribution per edge costs on this access pattern. Each thread loads
// kInFlight ids before gathering them, so that many gathers are in flight.
// T: the contributions' type (double, or float added in double). HOT: a
// block first copies C[0, hot) into shared memory and gathers those sources
// there (hub-first ids put the most gathered sources first).
#include "common.cuh"

constexpr int kInFlight = 8;

template <typename T, bool HOT>
__global__ void gather_sum(const int* __restrict__ ids, long long m, const T* __restrict__ C, int hot,
                           double* total) {
  extern __shared__ unsigned char shared_bytes[];
  const T* tile = reinterpret_cast<const T*>(shared_bytes);
  if (HOT) {
    T* fill = reinterpret_cast<T*>(shared_bytes);
    for (int i = threadIdx.x; i < hot; i += blockDim.x) fill[i] = C[i];
    __syncthreads();
  }
  double sum = 0.0;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long base = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; base < m;
       base += kInFlight * stride) {
    int u[kInFlight];
#pragma unroll
    for (int k = 0; k < kInFlight; ++k) u[k] = base + k * stride < m ? ids[base + k * stride] : -1;
#pragma unroll
    for (int k = 0; k < kInFlight; ++k) {
      if (u[k] < 0) continue;
      sum += static_cast<double>(HOT && u[k] < hot ? tile[u[k]] : C[u[k]]);
    }
  }
  sum = dynpr::warp_reduce<dynpr::Sum>(sum);  // any block size: a warp's sum per atomic
  if ((threadIdx.x & 31) == 0) atomicAdd(total, sum);
}
