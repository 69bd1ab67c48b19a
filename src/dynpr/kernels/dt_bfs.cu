// DT's affected set (the paper: every vertex reachable from the source of a
// deleted or inserted edge, in the old graph and in the new one) in one
// persistent cooperative launch: no host round trip per BFS level. Compiled
// on its own, like kahn_persistent.cu: only cooperative modules need it.
//
// Level-synchronous and queue based, both graphs at once: a queue entry is
// (vertex << 1 | pass), pass 0 following the old graph's out-edges and pass 1
// the new graph's, so a batch costs max(depth in old, depth in new) levels,
// not their sum. visited[v] holds bit 1 << pass once that pass reached v;
// atomicOr returns the previous bits, so exactly one thread enqueues v per
// pass. Each group of kGroup lanes takes a queue entry and strides its
// out-edges; an entry with more than 32 out-edges goes to the whole warp (its
// edges read coalesced), so entries of web graphs' typical few out-edges do
// not leave most of a warp idle, and one with more than kBlockEdges to the
// whole block once the block's warps are through their entries (a hub of
// thousands of edges would otherwise hold one warp, and the level, for a
// hundred rounds of dependent loads and atomics). A grid-wide sync ends the
// level. A level of at most kSmallLevel entries (the long thin tails of web
// graphs' BFS) is taken by block 0 alone, which goes on level after level
// with block-wide syncs while they stay small; the other blocks wait at the
// next grid sync, so such levels cost no grid sync each.
//
// control[0..2] is a ring of three level sizes: level L reads control[L % 3],
// appends to control[(L + 1) % 3] and clears control[(L + 2) % 3], whose last
// readers finished before the previous sync; control[3] hands the level
// block 0 reached to the grid. visited and control must hold zeros at
// launch; queue has 4n slots (two levels of up to 2n entries).
#include <cooperative_groups.h>
#include "common.cuh"

namespace {

constexpr int kSmallLevel = 2 * dynpr::kWarps;
constexpr int kGroup = 8;                   // lanes per queue entry
constexpr int kStaged = 8 * dynpr::kBlock;  // entries a block gathers per level before listing them
constexpr int kBlockEdges = 8 * 32;         // out-edges above which the whole block takes an entry
constexpr int kHubs = 32;                   // such entries a block lists per level (more go to a warp)

struct Hub {
  long long first, last;
  int pass;
};

// The next level's entries a block found, listed in shared memory (shared
// atomics) and copied to the queue at the end of the level with one global
// atomic per block, rather than contending for one counter with an atomic
// per find. Finds beyond kStaged go to the queue directly.
struct Staged {
  unsigned entries[kStaged];
  int count;
  int base;
  Hub hubs[kHubs];
  int hub_count;
};

// Reach w in pass `pass`: mark it affected and stage it for the next level, once.
__device__ __forceinline__ void reach(int w, int pass, Staged& staged, unsigned* next, int* next_count,
                                      int* visited, unsigned char* dv) {
  const int bit = 1 << pass;
  // The plain read skips the atomic for vertices this pass already reached.
  if (!(__ldcg(&visited[w]) & bit) && !(atomicOr(&visited[w], bit) & bit)) {
    const unsigned entry = static_cast<unsigned>(w) << 1 | pass;
    const int slot = atomicAdd(&staged.count, 1);
    if (slot < kStaged) {
      staged.entries[slot] = entry;
    } else {
      dynpr::append(next, next_count, entry);
    }
    dv[w] = 1;
  }
}

// The entries [0, count) of `level` expanded into `next` by the warps
// first_warp, first_warp + warps, ... of blocks that all call (the loop
// bounds are uniform over a warp; the staged entries are listed at the end).
__device__ __forceinline__ void expand_level(const unsigned* level, int count, unsigned* next, int* next_count,
                                             long long first_warp, long long warps, const long long* const* offsets,
                                             const int* const* targets, int* visited, unsigned char* dv,
                                             Staged& staged) {
  constexpr int kPerWarp = 32 / kGroup;
  const int lane = threadIdx.x & 31, sub = lane % kGroup;
  for (long long i0 = first_warp * kPerWarp; i0 < count; i0 += warps * kPerWarp) {
    const long long i = i0 + lane / kGroup;
    int u = 0, pass = 0;
    long long begin = 0, end = 0;
    if (i < count) {
      const unsigned entry = __ldcg(&level[i]);
      u = static_cast<int>(entry >> 1);
      pass = entry & 1;
      begin = offsets[pass][u];
      end = offsets[pass][u + 1];
    }
    const bool by_warp = end - begin > 32;  // uniform over the group
    for (unsigned leaders = __ballot_sync(0xffffffffu, by_warp && sub == 0); leaders; leaders &= leaders - 1) {
      const int leader = __ffs(leaders) - 1;
      const int p = __shfl_sync(0xffffffffu, pass, leader);
      const long long first = __shfl_sync(0xffffffffu, begin, leader);
      const long long last = __shfl_sync(0xffffffffu, end, leader);
      if (last - first > kBlockEdges) {
        int slot = 0;
        if (lane == 0) slot = atomicAdd(&staged.hub_count, 1);
        slot = __shfl_sync(0xffffffffu, slot, 0);
        if (slot < kHubs) {
          if (lane == 0) staged.hubs[slot] = Hub{first, last, p};
          continue;
        }
      }
      for (long long e = first + lane; e < last; e += 32) reach(targets[p][e], p, staged, next, next_count, visited, dv);
    }
    if (!by_warp) {
      for (long long e = begin + sub; e < end; e += kGroup) {
        reach(targets[pass][e], pass, staged, next, next_count, visited, dv);
      }
    }
  }
  __syncthreads();  // every hub of the block is listed
  const int hubs = min(staged.hub_count, kHubs);
  for (int h = 0; h < hubs; ++h) {
    const Hub hub = staged.hubs[h];
    for (long long e = hub.first + threadIdx.x; e < hub.last; e += blockDim.x) {
      reach(targets[hub.pass][e], hub.pass, staged, next, next_count, visited, dv);
    }
  }
  __syncthreads();
  const int found = min(staged.count, kStaged);
  if (threadIdx.x == 0 && found) staged.base = atomicAdd(next_count, found);
  __syncthreads();
  for (int j = threadIdx.x; j < found; j += blockDim.x) next[staged.base + j] = staged.entries[j];
  __syncthreads();  // every thread read count and base before they are reset
  if (threadIdx.x == 0) staged.count = staged.hub_count = 0;
  __syncthreads();
}

}  // namespace

extern "C" __global__ void __launch_bounds__(dynpr::kBlock) dt_reachable(
    const long long* old_offsets, const int* old_targets, const long long* offsets, const int* targets,
    const int* del_src, int num_del, const int* ins_src, int num_ins, int n, int* visited, unsigned* queue,
    int* control, unsigned char* dv) {
  namespace cg = cooperative_groups;
  cg::grid_group grid = cg::this_grid();
  const long long threads = static_cast<long long>(gridDim.x) * blockDim.x;
  const long long tid = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const long long* const graph_offsets[2] = {old_offsets, offsets};
  const int* const graph_targets[2] = {old_targets, targets};
  const long long slots = 2LL * n;  // one level's queue
  const int sources = num_del + num_ins;
  __shared__ Staged staged;
  if (threadIdx.x == 0) staged.count = staged.hub_count = 0;
  for (long long i = tid; i < sources; i += threads) {
    const int u = i < num_del ? del_src[i] : ins_src[i - num_del];
    const int before = atomicOr(&visited[u], 3);
    for (int pass = 0; pass < 2; ++pass) {
      if (!(before & (1 << pass))) queue[atomicAdd(&control[0], 1)] = static_cast<unsigned>(u) << 1 | pass;
    }
    dv[u] = 1;
  }
  grid.sync();
  int level = 0;
  for (;;) {
    const int count = __ldcg(&control[level % 3]);
    if (count == 0) break;
    if (count > kSmallLevel) {
      expand_level(queue + (level & 1) * slots, count, queue + ((level + 1) & 1) * slots, &control[(level + 1) % 3],
                   tid >> 5, threads >> 5, graph_offsets, graph_targets, visited, dv, staged);
      if (tid == 0) control[(level + 2) % 3] = 0;
      ++level;
    } else {
      if (blockIdx.x == 0) {
        int small = count;
        while (small > 0 && small <= kSmallLevel) {
          expand_level(queue + (level & 1) * slots, small, queue + ((level + 1) & 1) * slots,
                       &control[(level + 1) % 3], threadIdx.x >> 5, dynpr::kWarps, graph_offsets, graph_targets,
                       visited, dv, staged);
          if (threadIdx.x == 0) control[(level + 2) % 3] = 0;
          ++level;
          __syncthreads();  // the level's appends are visible to the block
          small = __ldcg(&control[level % 3]);
          __syncthreads();  // every thread read the size before the next level clears a slot
        }
        if (threadIdx.x == 0) control[3] = level;
      }
      grid.sync();
      level = __ldcg(&control[3]);
      continue;
    }
    grid.sync();
  }
}
