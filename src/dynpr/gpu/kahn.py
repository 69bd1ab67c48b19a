"""GPU engine for level-synchronous Kahn (the report "CUDA-Based Cycle Detection in Directed
Graphs Using Kahn's Algorithm", section 6.2, CSR version).

In-degrees come from the transpose's offsets; the vertices at zero are
flagged and compacted by an inclusive scan into the first frontier. Each
level removes the frontier with atomic decrements on its out-neighbours;
those reaching zero are appended to the next frontier by an atomic counter
(one counter slot per level, so none needs resetting).

Two drivers: ``persistent`` (the default) runs every level inside one
cooperative kernel with a grid-wide sync between levels, so deep DAGs pay no
host round trip per level; ``levels`` launches one kernel per level and reads
the counter back each time (the level driver's design). Two more are the
report's CSR versions as it measured them (its Table 4): every level flags,
scans and compacts the vertices at in-degree zero over all n, then removes the
frontier in two phases on the GPU (``two_phase``: decrements gathered with
atomics into an array of their own, then applied) or on the host
(``host_removal``, its final version). Timed with CUDA events, uploads and
allocations excluded (host work between them included).

:func:`kahn_dense` is the report's dense version (section 6.1, its final
kernels): the graph as an n x n byte matrix, in-degrees as column sums a thread
per column, and every level a flag, a scan and a compaction over all n vertices
and a 2-D removal launch over (frontier vertex, column) pairs, the frontier's
size read back by the host. With ``shared_memory`` it runs the report's
shared-memory variants of those two kernels instead (its Tables 1 and 2):
partial column sums a block per (column, row slice) reduced in shared memory,
and a removal that counts each column's edges in shared memory and subtracts
them with one atomic per block. Its CPU twin is :func:`dynpr.kahn.kahn_dense`.
"""

from __future__ import annotations

import functools

import numpy as np

from dynpr.gpu import loader
from dynpr.gpu.device_graph import BLOCK, grid_for
from dynpr.gpu.memory import DEFAULT_RESERVE_BYTES, check_fits, free_device_bytes
from dynpr.gpu.resident import upload
from dynpr.graph.hostmem import GIB


def _levels(kernels, cupy, graph, offsets, targets, in_offsets, indeg, flag, scan, frontier, nxt, counts):
    """Run every level; returns (processed, levels)."""
    n = graph.num_vertices
    kernels["kahn_in_degree"](grid_for(n), (BLOCK,), (in_offsets, np.int32(n), indeg, flag))
    cupy.cumsum(flag, out=scan)
    kernels["kahn_compact"](grid_for(n), (BLOCK,), (np.int32(n), flag, scan, frontier))
    count = int(scan[-1])
    processed = levels = 0
    while count:
        processed += count
        levels += 1
        # kahn_remove takes a warp per frontier vertex.
        kernels["kahn_remove"](grid_for(32 * count), (BLOCK,), (frontier, np.int32(count), offsets, targets,
                                                               indeg, nxt, counts[levels:levels + 1]))
        count = int(counts[levels])
        frontier, nxt = nxt, frontier
    return processed, levels


def _persistent_grid(cupy) -> int:
    """Blocks of the cooperative launch: 4 per multiprocessor (the kernel uses
    40 registers per thread, so 4 blocks of 256 threads fit on an SM; the
    cooperative launch fails rather than deadlock if they do not)."""
    return 4 * cupy.cuda.Device().attributes["MultiProcessorCount"]


def _persistent(kernels, cupy, graph, offsets, targets, in_offsets, indeg, flag, scan, frontier, nxt, counts):
    """All levels in one cooperative launch; returns (per-level frontier sizes,
    levels) as device arrays, read back by the caller after timing (the sizes
    beyond the last level stay zero, so their sum is the processed count)."""
    n = graph.num_vertices
    kernels["kahn_in_degree"](grid_for(n), (BLOCK,), (in_offsets, np.int32(n), indeg, flag))
    cupy.cumsum(flag, out=scan)
    kernels["kahn_compact"](grid_for(n), (BLOCK,), (np.int32(n), flag, scan, frontier))
    counts[:1] = scan[-1:]  # the first frontier's size, device to device
    levels_out = flag[:1]  # flag is free again once the frontier is compacted
    loader.kahn_persistent_kernel()((_persistent_grid(cupy),), (BLOCK,),
                                    (frontier, nxt, offsets, targets, indeg, counts, levels_out))
    return counts, levels_out[0]


def _buffers(cupy, graph):
    n = graph.num_vertices
    return (upload(graph.offsets), upload(graph.targets), upload(graph.in_offsets),
            *(cupy.empty(n, dtype=cupy.int32) for _ in range(5)),
            cupy.zeros(n + 1, dtype=cupy.int32))  # each level's next-frontier size (two_phase: its decrements)


# Threads per side of the dense removal's 2-D blocks (the report's lws2; kTile in kernels/kahn.cu).
DENSE_TILE = 16
# Rows of a column each thread of the partial in-degree blocks sums (at most): the blocks per
# column, the report's tuned num_blocks_y, follow from it.
PARTIAL_ROWS = 16


def partial_blocks(n: int) -> int:
    """Blocks per column of the shared-memory in-degree kernel for an n x n matrix."""
    return max(1, -(-n // (BLOCK * PARTIAL_ROWS)))


def _scan_levels(kernels, cupy, n, indeg, flag, scan, frontier, remove):
    """The report's level loop, from the in-degrees: flag the vertices at zero (processed ones
    hold -1), scan and compact them into the frontier, read its size back and call
    ``remove(frontier, count)``; returns (processed, levels)."""
    n32 = np.int32(n)
    processed = levels = 0
    while True:
        kernels["kahn_flag_zero"](grid_for(n), (BLOCK,), (indeg, n32, flag))
        cupy.cumsum(flag, out=scan)
        kernels["kahn_compact"](grid_for(n), (BLOCK,), (n32, flag, scan, frontier))
        count = int(scan[-1])
        if not count:
            return processed, levels
        processed += count
        levels += 1
        remove(frontier, count)


def _two_phase(kernels, cupy, graph, offsets, targets, in_offsets, indeg, flag, scan, frontier, nxt, counts):
    """The report's CSR version with its two-phase removal (``kahn_decrement``, then
    ``kahn_apply_decrement`` over all vertices) and a flag, scan and compaction every level;
    returns (processed, levels)."""
    n = graph.num_vertices
    kernels["kahn_in_degree"](grid_for(n), (BLOCK,), (in_offsets, np.int32(n), indeg, flag))
    decrement = counts  # zeroed, and cleared again by every apply

    def remove(frontier, count):
        kernels["kahn_decrement"](grid_for(count), (BLOCK,), (frontier, np.int32(count), offsets, targets, indeg,
                                                              decrement))
        kernels["kahn_apply_decrement"](grid_for(n), (BLOCK,), (np.int32(n), decrement, indeg))

    return _scan_levels(kernels, cupy, n, indeg, flag, scan, frontier, remove)


def _host_removal(kernels, cupy, graph, offsets, targets, in_offsets, indeg, flag, scan, frontier, nxt, counts):
    """The report's final CSR version: in-degrees and each level's frontier on the GPU, the
    removal on the host ("remove_active_nodes_cpu": the in-degrees copied to the host,
    decremented over the frontier's out-edges, copied back); returns (processed, levels)."""
    from dynpr.graph.graph import to_host
    from dynpr.pagerank.marking import csr_gather

    n = graph.num_vertices
    kernels["kahn_in_degree"](grid_for(n), (BLOCK,), (in_offsets, np.int32(n), indeg, flag))
    host_offsets, host_targets = to_host(graph.offsets), to_host(graph.targets)

    def remove(frontier, count):
        active = frontier[:count].get()
        degrees = indeg.get()
        touched, times = np.unique(csr_gather(host_offsets, host_targets, active), return_counts=True)
        degrees[touched] -= times.astype(degrees.dtype)
        degrees[active] = -1
        indeg.set(degrees)

    return _scan_levels(kernels, cupy, n, indeg, flag, scan, frontier, remove)


def _dense_levels(kernels, cupy, n, adj, indeg, flag, scan, frontier, partial=None):
    """Every level of the dense version (``partial`` given: with the shared-memory kernels);
    returns (processed, levels)."""
    n32 = np.int32(n)
    if partial is None:
        kernels["kahn_dense_in_degree"](grid_for(n), (BLOCK,), (adj, n32, indeg))
        remove = kernels["kahn_dense_remove"]
    else:
        parts = partial_blocks(n)
        kernels["kahn_dense_in_degree_partial"]((n, parts), (BLOCK,), (adj, n32, partial))
        kernels["kahn_dense_in_degree_final"](grid_for(n), (BLOCK,), (partial, n32, np.int32(parts), indeg))
        remove = kernels["kahn_dense_remove_shared"]

    def remove_2d(frontier, count):
        grid = (-(-n // DENSE_TILE), -(-count // DENSE_TILE))
        remove(grid, (DENSE_TILE, DENSE_TILE), (adj, n32, frontier, np.int32(count), indeg))

    return _scan_levels(kernels, cupy, n, indeg, flag, scan, frontier, remove_2d)


def _dense_buffers(cupy, matrix, shared_memory: bool):
    n = len(matrix)
    partial = (cupy.empty(n * partial_blocks(n), dtype=cupy.int32),) if shared_memory else ()
    return (upload(matrix, np.uint8), *(cupy.empty(n, dtype=cupy.int32) for _ in range(4)), *partial)


@functools.cache
def _warm_up() -> None:
    """Compile and load every kernel (ours and CuPy's scan) outside timing."""
    from dynpr.graph.graph import Graph

    cupy = loader.require_cupy()
    graph = Graph.from_edges(np.array([0, 0, 1]), np.array([1, 2, 2]), self_loops=False)
    for driver in DRIVERS.values():
        driver(loader.kahn_kernels(), cupy, graph, *_buffers(cupy, graph))
    matrix = np.array([[0, 1, 1], [0, 0, 1], [0, 0, 0]], dtype=np.uint8)
    for shared_memory in (False, True):
        _dense_levels(loader.kahn_kernels(), cupy, len(matrix), *_dense_buffers(cupy, matrix, shared_memory))


DRIVERS = {"persistent": _persistent, "levels": _levels, "two_phase": _two_phase, "host_removal": _host_removal}


def kahn(graph, *, driver: str = "persistent"):
    """Kahn's algorithm on the GPU; the same contract as ``dynpr.kahn.kahn``.

    Parameters
    ----------
    graph : dynpr.graph.graph.Graph
        Run it on ``graph.without_self_loops()``: a self-loop makes its vertex cyclic.
    driver : {"persistent", "levels", "two_phase", "host_removal"}
        One cooperative kernel for all levels, or a launch and a host read per level; or, as the
        report's CSR versions, a flag, scan and compaction over all vertices every level with its
        two-phase removal on the GPU or its removal on the host.

    Returns
    -------
    dynpr.kahn.KahnResult
        ``is_dag``, ``processed``, ``levels``, ``remaining`` (sorted int32 ids
        never processed), event-timed ``time_ms``, ``backend="gpu"``, ``device``.

    Raises
    ------
    RuntimeError
        If CuPy or a CUDA device is missing.
    MemoryError
        If the buffers need more device memory than is free (checked before allocating).
    ValueError
        For an unknown driver.
    """
    from dynpr.backend import device_name
    from dynpr.kahn.cpu import KahnResult  # the CPU engine owns the result type

    if driver not in DRIVERS:
        raise ValueError(f"unknown Kahn driver {driver!r}; known: {sorted(DRIVERS)}")
    cupy = loader.require_cupy()
    kernels = loader.kahn_kernels()
    _warm_up()
    n = graph.num_vertices
    if n == 0:
        return KahnResult(is_dag=True, processed=0, levels=0, remaining=np.empty(0, np.int32),
                          time_ms=0.0, backend="gpu", device=device_name("gpu"))
    check_fits(n, graph.num_edges, "kahn")  # one line before allocating, not a CuPy OutOfMemoryError
    buffers = _buffers(cupy, graph)
    start, end = cupy.cuda.Event(), cupy.cuda.Event()
    start.record()
    processed, levels = DRIVERS[driver](kernels, cupy, graph, *buffers)
    end.record()
    end.synchronize()
    if driver == "persistent":
        processed, levels = int(processed.sum()), int(levels)
    indeg = buffers[3]
    # A processed vertex's in-degree reached zero (or holds -1, where the report's marking ran);
    # the others kept a positive one.
    remaining = cupy.asnumpy(cupy.flatnonzero(indeg > 0)).astype(np.int32)
    return KahnResult(is_dag=processed == n, processed=processed, levels=levels, remaining=remaining,
                      time_ms=cupy.cuda.get_elapsed_time(start, end), backend="gpu", device=device_name("gpu"))


def kahn_dense(matrix, *, shared_memory: bool = False):
    """Kahn's algorithm on the GPU over a dense adjacency matrix (``matrix[u, v] != 0`` for an edge
    u -> v; a NumPy array of n x n bytes, uploaded untimed); the same result as :func:`kahn` on the
    matrix's graph and as the CPU twin :func:`dynpr.kahn.cpu.kahn_dense`. ``shared_memory``: the
    report's shared-memory in-degree and removal kernels instead of its global-memory ones.

    Raises
    ------
    RuntimeError
        If CuPy or a CUDA device is missing.
    MemoryError
        If the matrix and its buffers need more device memory than is free.
    ValueError
        If ``matrix`` is not square.
    """
    from dynpr.backend import device_name
    from dynpr.kahn.cpu import KahnResult

    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
        raise ValueError(f"an adjacency matrix is square, got shape {matrix.shape}")
    cupy = loader.require_cupy()
    kernels = loader.kahn_kernels()
    _warm_up()
    n = len(matrix)
    needed = n * n + 16 * n + 4 * n * partial_blocks(n) * shared_memory
    if needed + DEFAULT_RESERVE_BYTES > (free := free_device_bytes()):
        raise MemoryError(f"a dense matrix of {n} vertices needs {needed / GIB:.2f} GiB on the GPU, "
                          f"device has {free / GIB:.2f} GiB free: use the CSR drivers")
    buffers = _dense_buffers(cupy, matrix, shared_memory)
    start, end = cupy.cuda.Event(), cupy.cuda.Event()
    start.record()
    processed, levels = _dense_levels(kernels, cupy, n, *buffers)
    end.record()
    end.synchronize()
    # processed vertices hold -1; the others kept a positive in-degree
    remaining = cupy.asnumpy(cupy.flatnonzero(buffers[1] > 0)).astype(np.int32)
    return KahnResult(is_dag=processed == n, processed=processed, levels=levels, remaining=remaining,
                      time_ms=cupy.cuda.get_elapsed_time(start, end), backend="gpu", device=device_name("gpu"))
