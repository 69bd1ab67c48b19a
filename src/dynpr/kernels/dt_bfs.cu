// DT's affected set (the paper: every vertex reachable from the source of a
// deleted or inserted edge, in the old graph and in the new one) in one
// persistent cooperative launch: no host round trip per BFS level. Compiled
// on its own, like kahn_persistent.cu: only cooperative modules need it.
//
// Level-synchronous and queue based: the grid's warps stride the frontier
// queue, a warp per frontier vertex with its lanes striding the out-edges (so
// a hub's edges are read coalesced), and a grid-wide sync ends each level.
// visited[v] holds the number of the last pass (1: old graph, 2: new graph)
// that reached v; atomicMax returns the previous value, so exactly one thread
// enqueues v per pass. counts is a ring of three level sizes: level L reads
// counts[L % 3], appends to counts[(L + 1) % 3] and clears counts[(L + 2) % 3],
// whose last readers finished before the previous sync. visited must hold
// zeros and counts three zeros at launch; queue has 2n slots.
#include <cooperative_groups.h>
#include "common.cuh"

extern "C" __global__ void __launch_bounds__(dynpr::kBlock) dt_reachable(
    const long long* old_offsets, const int* old_targets, const long long* offsets, const int* targets,
    const int* del_src, int num_del, const int* ins_src, int num_ins, int n, int* visited, int* queue, int* counts,
    unsigned char* dv) {
  namespace cg = cooperative_groups;
  cg::grid_group grid = cg::this_grid();
  const long long threads = static_cast<long long>(gridDim.x) * blockDim.x;
  const long long tid = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const long long warps = threads >> 5, warp = tid >> 5;
  const int lane = threadIdx.x & 31;
  const int sources = num_del + num_ins;
  for (int pass = 1; pass <= 2; ++pass) {
    const long long* off = pass == 1 ? old_offsets : offsets;
    const int* tgt = pass == 1 ? old_targets : targets;
    int* frontier = queue;
    int* next = queue + n;
    for (long long i = tid; i < sources; i += threads) {
      const int u = i < num_del ? del_src[i] : ins_src[i - num_del];
      if (atomicMax(&visited[u], pass) < pass) {
        frontier[atomicAdd(&counts[0], 1)] = u;
        dv[u] = 1;
      }
    }
    grid.sync();
    for (int level = 0;; ++level) {
      const int count = __ldcg(&counts[level % 3]);
      if (count == 0) break;
      for (long long i = warp; i < count; i += warps) {
        const int u = __ldcg(&frontier[i]);
        const long long end = off[u + 1];
        for (long long e = off[u] + lane; e < end; e += 32) {
          const int w = tgt[e];
          // The plain read skips the atomic for vertices already reached.
          if (__ldcg(&visited[w]) < pass && atomicMax(&visited[w], pass) < pass) {
            next[atomicAdd(&counts[(level + 1) % 3], 1)] = w;
            dv[w] = 1;
          }
        }
      }
      if (tid == 0) counts[(level + 2) % 3] = 0;
      grid.sync();
      int* swap = frontier;
      frontier = next;
      next = swap;
    }
    // Every block has read the empty level's size; clear the ring for the next pass.
    grid.sync();
    if (tid < 3) counts[tid] = 0;
    grid.sync();
  }
}
