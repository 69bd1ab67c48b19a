// DT's affected set (the paper: every vertex reachable from the source of a
// deleted or inserted edge, in the old graph and in the new one) in one
// persistent cooperative launch: no host round trip per BFS level. Compiled
// on its own, like kahn_persistent.cu: only cooperative modules need it.
//
// One search of the new graph finds both sets: reachable(old, S) and
// reachable(new, S) together are reachable(new, S + D), where S are the batch
// edges' sources and D the deleted edges' targets. Take a path of either graph
// from S to w. If it uses a deleted edge (a, b), the rest of the path after the
// last one is in the new graph, from b in D; if it does not, all of it is in the
// new graph, from S. Conversely every vertex of D is reached in the old graph
// from its edge's source. So the old graph is not read at all.
//
// Level-synchronous and queue based. visited[v] is set once the search
// reached v; atomicOr returns the previous bit, so exactly one thread
// enqueues v. Each group of kGroup lanes takes a queue entry and strides its
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
// launch; queue has 2n slots (two levels of up to n entries).
#include <cooperative_groups.h>
#include "common.cuh"
#include "layouts.cuh"

namespace {

constexpr int kSmallLevel = 2 * dynpr::kWarps;
constexpr int kGroup = 8;                   // lanes per queue entry
constexpr int kStaged = 8 * dynpr::kBlock;  // entries a block gathers per level before listing them
constexpr int kBlockEdges = 8 * 32;         // out-edges above which the whole block takes an entry
constexpr int kHubs = 32;                   // such entries a block lists per level (more go to a warp)

struct Hub {
  long long first, last;
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

// Reach w: mark it affected and stage it for the next level, once.
__device__ __forceinline__ void reach(int w, Staged& staged, unsigned* next, int* next_count, int* visited,
                                      unsigned char* dv) {
  // The plain read skips the atomic for vertices already reached.
  if (!__ldcg(&visited[w]) && !atomicOr(&visited[w], 1)) {
    const unsigned entry = static_cast<unsigned>(w);
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
                                             long long first_warp, long long warps, const long long* offsets,
                                             const int* targets, int* visited, unsigned char* dv, Staged& staged) {
  constexpr int kPerWarp = 32 / kGroup;
  const int lane = threadIdx.x & 31, sub = lane % kGroup;
  for (long long i0 = first_warp * kPerWarp; i0 < count; i0 += warps * kPerWarp) {
    const long long i = i0 + lane / kGroup;
    long long begin = 0, end = 0;
    if (i < count) {
      const int u = static_cast<int>(__ldcg(&level[i]));
      begin = offsets[u];
      end = offsets[u + 1];
    }
    const bool by_warp = end - begin > 32;  // uniform over the group
    for (unsigned leaders = __ballot_sync(0xffffffffu, by_warp && sub == 0); leaders; leaders &= leaders - 1) {
      const int leader = __ffs(leaders) - 1;
      const long long first = __shfl_sync(0xffffffffu, begin, leader);
      const long long last = __shfl_sync(0xffffffffu, end, leader);
      if (last - first > kBlockEdges) {
        int slot = 0;
        if (lane == 0) slot = atomicAdd(&staged.hub_count, 1);
        slot = __shfl_sync(0xffffffffu, slot, 0);
        if (slot < kHubs) {
          if (lane == 0) staged.hubs[slot] = Hub{first, last};
          continue;
        }
      }
      for (long long e = first + lane; e < last; e += 32) reach(targets[e], staged, next, next_count, visited, dv);
    }
    if (!by_warp) {
      for (long long e = begin + sub; e < end; e += kGroup) {
        reach(targets[e], staged, next, next_count, visited, dv);
      }
    }
  }
  __syncthreads();  // every hub of the block is listed
  const int hubs = min(staged.hub_count, kHubs);
  for (int h = 0; h < hubs; ++h) {
    const Hub hub = staged.hubs[h];
    for (long long e = hub.first + threadIdx.x; e < hub.last; e += blockDim.x) {
      reach(targets[e], staged, next, next_count, visited, dv);
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

// The graph's out-CSR and the batch (in the graph's ids; not renamed) come as layouts.cuh's structs.
extern "C" __global__ void __launch_bounds__(dynpr::kBlock) dt_reachable(const __grid_constant__ dynpr::GraphArgs g,
    const __grid_constant__ dynpr::BatchArgs batch, int* visited, unsigned* queue, int* control, unsigned char* dv) {
  const long long* offsets = g.out_offsets;
  const int* targets = g.targets;
  const int n = g.n, num_del = batch.num_del, num_ins = batch.num_ins;
  const int *del_src = batch.del_src, *del_dst = batch.del_dst, *ins_src = batch.ins_src;
  namespace cg = cooperative_groups;
  cg::grid_group grid = cg::this_grid();
  const long long threads = static_cast<long long>(gridDim.x) * blockDim.x;
  const long long tid = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const long long slots = n;  // one level's queue
  __shared__ Staged staged;
  if (threadIdx.x == 0) staged.count = staged.hub_count = 0;
  // The seeds: every batch edge's source, then every deleted edge's target.
  const int edges = num_del + num_ins;
  for (long long i = tid; i < edges + num_del; i += threads) {
    const int u = i < num_del ? del_src[i] : i < edges ? ins_src[i - num_del] : del_dst[i - edges];
    if (!atomicOr(&visited[u], 1)) queue[atomicAdd(&control[0], 1)] = static_cast<unsigned>(u);
    dv[u] = 1;
  }
  grid.sync();
  int level = 0;
  for (;;) {
    const int count = __ldcg(&control[level % 3]);
    if (count == 0) break;
    if (count > kSmallLevel) {
      expand_level(queue + (level & 1) * slots, count, queue + ((level + 1) & 1) * slots, &control[(level + 1) % 3],
                   tid >> 5, threads >> 5, offsets, targets, visited, dv, staged);
      if (tid == 0) control[(level + 2) % 3] = 0;
      ++level;
    } else {
      if (blockIdx.x == 0) {
        int small = count;
        while (small > 0 && small <= kSmallLevel) {
          expand_level(queue + (level & 1) * slots, small, queue + ((level + 1) & 1) * slots,
                       &control[(level + 1) % 3], threadIdx.x >> 5, dynpr::kWarps, offsets, targets,
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
