// Kahn's topological sort, level-synchronous on CSR (the report
// "CUDA-Based Cycle Detection in Directed Graphs Using Kahn's Algorithm", section 6.2).
// No shared header needed: flat per-vertex maps, and the dense version's kernels below.

// In-degrees from the transpose's offsets, and flag[v] = 1 where it is zero.
extern "C" __global__ void kahn_in_degree(const long long* in_offsets, int n, int* indeg, int* flag) {
  const int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= n) return;
  const int d = static_cast<int>(in_offsets[v + 1] - in_offsets[v]);
  indeg[v] = d;
  flag[v] = d == 0;
}

// Stream compaction: flagged vertices go to frontier[scan[v] - 1], where scan
// is the inclusive prefix sum of the flags.
extern "C" __global__ void kahn_compact(int n, const int* flag, const int* scan, int* frontier) {
  const int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v < n && flag[v]) frontier[scan[v] - 1] = v;
}

// Remove the frontier: decrement the in-degree of every out-neighbour once
// per edge; the decrement that takes it to zero (exactly one thread sees
// atomicSub return 1) appends the vertex to the next frontier through an
// atomic counter. That compaction costs O(frontier) per level, where a flag
// array + scan over all vertices would cost O(n) per level (the report scans
// every level). One warp per frontier vertex, its lanes striding the edges:
// with one thread per vertex an R-MAT hub's ~10^5 serial atomics set the
// length of its whole level.
extern "C" __global__ void kahn_remove(const int* frontier, int count, const long long* offsets,
                                       const int* targets, int* indeg, int* next, int* next_count) {
  const long long i = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const int lane = threadIdx.x & 31;
  if (i >= count) return;
  const int u = frontier[i];
  for (long long e = offsets[u] + lane; e < offsets[u + 1]; e += 32) {
    const int w = targets[e];
    if (atomicSub(&indeg[w], 1) == 1) next[atomicAdd(next_count, 1)] = w;
  }
}


// The report's two-phase removal ("remove_active_nodes_csr_reduce_global", "no_atomic"): a
// thread per frontier vertex adds one per out-edge to decrement[target] instead of
// touching the in-degrees, and marks its vertex processed (-1, "mark_removed_nodes", folded
// in: a frontier vertex has no in-edge left, so nothing decrements it this level).
extern "C" __global__ void kahn_decrement(const int* frontier, int count, const long long* offsets, const int* targets,
                                          int* indeg, int* decrement) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= count) return;
  const int u = frontier[i];
  for (long long e = offsets[u]; e < offsets[u + 1]; ++e) atomicAdd(&decrement[targets[e]], 1);
  indeg[u] = -1;
}

// indeg[v] -= decrement[v], and the decrement cleared for the next level
// ("apply_decrement_to_in_degree").
extern "C" __global__ void kahn_apply_decrement(int n, int* decrement, int* indeg) {
  const int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v < n && decrement[v]) {
    indeg[v] -= decrement[v];
    decrement[v] = 0;
  }
}

// flag[v] = 1 where the in-degree is zero ("flag_zero_in_degree"), for the drivers that
// flag, scan and compact every level as the report does; processed vertices hold -1.
extern "C" __global__ void kahn_flag_zero(const int* indeg, int n, int* flag) {
  const int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v < n) flag[v] = indeg[v] == 0;
}

// ---- dense adjacency matrix (the report's section 6.1, its final dense version) ----
// adj is n x n bytes, row-major, adj[u * n + v] != 0 for an edge u -> v.

// Threads of the partial in-degree blocks (dynpr.designs.BLOCK, the report's lws) and the
// side of the 2-D removal blocks (dynpr.gpu.kahn.DENSE_TILE, the report's lws2).
constexpr int kBlockThreads = DYNPR_BLOCK;
constexpr int kTile = 16;

// In-degree of column v, a thread per column walking the rows ("calculate_in_degree",
// the global-memory kernel the report keeps): a warp reads 32 adjacent bytes of each row.
extern "C" __global__ void kahn_dense_in_degree(const unsigned char* adj, int n, int* indeg) {
  const int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= n) return;
  int d = 0;
  for (long long u = 0; u < n; ++u) d += adj[u * n + v] != 0;
  indeg[v] = d;
}

// Remove the frontier ("remove_active_nodes_2D"): a thread per (frontier vertex, column)
// pair, x over the columns so a warp reads adjacent bytes of one row, subtracts one with an
// atomic wherever the row has an edge; the column-0 thread of each frontier vertex marks it
// processed (-1). No edge joins two vertices of one frontier (each had in-degree zero), so no
// thread decrements a vertex being marked.
extern "C" __global__ void kahn_dense_remove(const unsigned char* adj, int n, const int* frontier, int count,
                                             int* indeg) {
  const int v = blockIdx.x * blockDim.x + threadIdx.x;
  const int i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i >= count || v >= n) return;
  const int u = frontier[i];
  if (adj[static_cast<long long>(u) * n + v]) atomicSub(&indeg[v], 1);
  if (v == 0) indeg[u] = -1;
}

// ---- the report's shared-memory variants of the two dense kernels (its Tables 1 and 2) ----

// Partial in-degrees ("calculate_in_degree_partial"): block (v, y) sums rows y, y + Y, ...
// of column v (Y = gridDim.y), its threads striding them, and reduces in shared memory
// into partial[v * Y + y].
extern "C" __global__ void __launch_bounds__(kBlockThreads) kahn_dense_in_degree_partial(
    const unsigned char* adj, int n, int* partial) {
  __shared__ int sums[kBlockThreads];
  const int v = blockIdx.x;
  int d = 0;
  for (long long u = static_cast<long long>(threadIdx.x) * gridDim.y + blockIdx.y; u < n;
       u += static_cast<long long>(blockDim.x) * gridDim.y) {
    d += adj[u * n + v] != 0;
  }
  sums[threadIdx.x] = d;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) sums[threadIdx.x] += sums[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) partial[static_cast<long long>(v) * gridDim.y + blockIdx.y] = sums[0];
}

// indeg[v] = the sum of column v's `parts` partial in-degrees ("reduce_final").
extern "C" __global__ void kahn_dense_in_degree_final(const int* partial, int n, int parts, int* indeg) {
  const int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= n) return;
  int d = 0;
  for (int y = 0; y < parts; ++y) d += partial[static_cast<long long>(v) * parts + y];
  indeg[v] = d;
}

// Remove the frontier with one atomic per column and block ("remove_active_nodes_2D_sm"):
// a 16 x 16 block flags in shared memory which of its frontier rows (y) has an edge to
// which of its columns (x), then the y = 0 thread of each column subtracts the column's
// count at once. Marking as kahn_dense_remove.
extern "C" __global__ void kahn_dense_remove_shared(const unsigned char* adj, int n, const int* frontier, int count,
                                                    int* indeg) {
  __shared__ int edge[kTile][kTile];
  const int v = blockIdx.x * kTile + threadIdx.x;
  const int i = blockIdx.y * kTile + threadIdx.y;
  const bool inside = i < count && v < n;
  const int u = inside ? frontier[i] : 0;
  edge[threadIdx.y][threadIdx.x] = inside && adj[static_cast<long long>(u) * n + v] != 0;
  if (inside && v == 0) indeg[u] = -1;
  __syncthreads();
  if (threadIdx.y == 0 && v < n) {
    int d = 0;
    for (int y = 0; y < kTile; ++y) d += edge[y][threadIdx.x];
    if (d) atomicSub(&indeg[v], d);
  }
}
