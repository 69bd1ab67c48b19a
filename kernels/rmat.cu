// R-MAT edges of the counter-based stream, the GPU side of dynpr.generate.rmat (whose NumPy
// code is the twin: the same 64-bit integers, so the same graph bit for bit).
//
// Word i of a stream is SplitMix64's mix64(base + i*GAMMA) mod 2^64 (base = key + GAMMA,
// computed on the host). Edge e reads words e*H .. e*H+H-1, H = ceil(scale/2); level 2j
// takes the high 32 bits of word j, level 2j+1 the low 32. Ids are then permuted by a
// Feistel network whose round r maps (hi, lo) -> (lo, hi ^ F_r(lo)), F_r(lo) = word
// r*2^32 + lo of the permutation stream. Self-loops are dropped.

typedef unsigned long long u64;

// One stream, passed by value (dynpr.designs.RMAT_STREAM mirrors it field by field): its edges,
// the graph's scale, the Feistel rounds, both streams' bases and floor(2^32 * (a, a+b, a+b+c))
// (dynpr.generate.rmat_stream.quadrant_thresholds).
struct RmatStream {
  long long num_edges;
  unsigned long long edge_base;
  unsigned long long perm_base;
  int scale;
  int rounds;
  unsigned int t1;
  unsigned int t2;
  unsigned int t3;
};

namespace {
constexpr u64 kGamma = 0x9E3779B97F4A7C15ULL;

__device__ __forceinline__ u64 mix64(u64 z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// dynpr.generate.rmat._feistel: the part widths alternate between scale/2 and scale - scale/2
// (at most 15 bits, so 32-bit shifts never reach the word size).
__device__ __forceinline__ unsigned permute(unsigned v, int scale, int rounds, u64 perm_base) {
  int low = scale >> 1;
  for (int r = 0; r < rounds; ++r) {
    const int high = scale - low;
    const unsigned lo = v & ((1u << low) - 1u);
    const unsigned f = static_cast<unsigned>(mix64(perm_base + ((static_cast<u64>(r) << 32) + lo) * kGamma));
    v = (lo << high) | (((v >> low) ^ f) & ((1u << high) - 1u));
    low = high;
  }
  return v;
}

// Permuted endpoints of edge e. Row bit: u >= T_ab (probability c+d); column bit given
// it: u >= T_a on top, u >= T_abc below, i.e. the parity of the three compares.
__device__ __forceinline__ void edge(const RmatStream& s, long long e, unsigned& src, unsigned& dst) {
  const int words = (s.scale + 1) >> 1;
  u64 x = s.edge_base + static_cast<u64>(e) * static_cast<u64>(words) * kGamma;
  unsigned row_ids = 0, col_ids = 0;
  for (int j = 0; j < words; ++j, x += kGamma) {
    const u64 h = mix64(x);
    for (int half = 0; half < 2; ++half) {
      const int level = 2 * j + half;
      if (level == s.scale) break;
      const unsigned u = half ? static_cast<unsigned>(h) : static_cast<unsigned>(h >> 32);
      const unsigned row = u >= s.t2;
      const unsigned col = static_cast<unsigned>(u >= s.t1) ^ row ^ static_cast<unsigned>(u >= s.t3);
      row_ids |= row << level;
      col_ids |= col << level;
    }
  }
  src = permute(row_ids, s.scale, s.rounds, s.perm_base);
  dst = permute(col_ids, s.scale, s.rounds, s.perm_base);
}

}  // namespace

// Non-self-loop edges per bucket of sources (src_counts) and of targets (dst_counts),
// bucket = id >> bucket_shift. Grid-stride over the edges; per-block counters in
// dynamic shared memory (2 * buckets * 8 bytes), added to the global ones at the end.
extern "C" __global__ void rmat_histogram(const __grid_constant__ RmatStream s, int bucket_shift, int buckets,
                                          u64* src_counts, u64* dst_counts) {
  extern __shared__ u64 hist[];
  const long long num_edges = s.num_edges;
  for (int i = threadIdx.x; i < 2 * buckets; i += blockDim.x) hist[i] = 0;
  __syncthreads();
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long e = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; e < num_edges; e += stride) {
    unsigned src, dst;
    edge(s, e, src, dst);
    if (src != dst) {
      atomicAdd(&hist[src >> bucket_shift], 1ULL);
      atomicAdd(&hist[buckets + (dst >> bucket_shift)], 1ULL);
    }
  }
  __syncthreads();
  for (int i = threadIdx.x; i < buckets; i += blockDim.x) {
    if (hist[i]) atomicAdd(&src_counts[i], hist[i]);
    if (hist[buckets + i]) atomicAdd(&dst_counts[i], hist[buckets + i]);
  }
}

// Keys (row << scale) | col of the non-self-loop edges whose row lies in [lo, hi), where
// (row, col) = (src, dst), or (dst, src) with by_target (the transpose). Appended at
// *count in no particular order (the caller sorts them): one atomic per warp, each
// lane's slot from the ballot of the lanes that keep an edge.
extern "C" __global__ void rmat_extract(const __grid_constant__ RmatStream s, int by_target, unsigned lo,
                                        unsigned hi, long long* keys, u64* count) {
  const long long num_edges = s.num_edges;
  const unsigned lane = threadIdx.x & 31u;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  // base is the same for the whole warp (blocks are whole warps), so every lane reaches the ballot
  for (long long base = static_cast<long long>(blockIdx.x) * blockDim.x + (threadIdx.x & ~31u); base < num_edges;
       base += stride) {
    const long long e = base + lane;
    bool keep = false;
    long long key = 0;
    if (e < num_edges) {
      unsigned src, dst;
      edge(s, e, src, dst);
      const unsigned row = by_target ? dst : src, col = by_target ? src : dst;
      keep = src != dst && row >= lo && row < hi;
      key = (static_cast<long long>(row) << s.scale) | col;
    }
    const unsigned ballot = __ballot_sync(0xffffffffu, keep);
    if (ballot == 0) continue;
    const int leader = __ffs(ballot) - 1;
    u64 first = 0;
    if (static_cast<int>(lane) == leader) first = atomicAdd(count, static_cast<u64>(__popc(ballot)));
    first = __shfl_sync(0xffffffffu, first, leader);
    if (keep) keys[first + __popc(ballot & ((1u << lane) - 1u))] = key;
  }
}
