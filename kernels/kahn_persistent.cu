// Kahn's levels in one persistent cooperative kernel (compiled on its own:
// only this module needs cooperative groups and a cooperative launch).
// All levels in one cooperative launch (no host round trip per level): the
// grid's warps stride the frontier, a grid-wide sync ends each level, and
// every block reads the next level's size from counts[level + 1] (written by
// atomics, hence read through L2 with __ldcg). counts[0] holds the first
// frontier's size; counts has n + 1 zeroed slots, one per possible level.
#include <cooperative_groups.h>
extern "C" __global__ void kahn_persistent(int* frontier, int* next, const long long* offsets, const int* targets,
                                           int* indeg, int* counts, int* levels_out) {
  namespace cg = cooperative_groups;
  cg::grid_group grid = cg::this_grid();
  const long long warps = (static_cast<long long>(gridDim.x) * blockDim.x) >> 5;
  const long long warp = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const int lane = threadIdx.x & 31;
  int level = 0;
  for (;;) {
    const int count = __ldcg(&counts[level]);
    if (count == 0) break;
    for (long long i = warp; i < count; i += warps) {
      const int u = __ldcg(&frontier[i]);
      for (long long e = offsets[u] + lane; e < offsets[u + 1]; e += 32) {
        const int w = targets[e];
        if (atomicSub(&indeg[w], 1) == 1) next[atomicAdd(&counts[level + 1], 1)] = w;
      }
    }
    grid.sync();
    int* swap = frontier;
    frontier = next;
    next = swap;
    ++level;
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) *levels_out = level;
}
