"""GPU engine for level-synchronous Kahn (seed 002, section 6.2, CSR version).

In-degrees come from the transpose's offsets; the vertices at zero are
flagged and compacted by an inclusive scan into the first frontier. Each
level removes the frontier with atomic decrements on its out-neighbours;
those reaching zero are appended to the next frontier by an atomic counter
(one counter slot per level, so none needs resetting). One host read (the
counter) per level decides whether to go on. Timed with CUDA events,
uploads and allocations excluded.
"""

from __future__ import annotations

import functools

import numpy as np

from dynpr.gpu import loader

BLOCK = 256


def _grid(count: int) -> tuple[int]:
    # kahn_remove takes a warp per frontier vertex: callers pass 32 * count threads.
    return (max(1, -(-count // BLOCK)),)


def _levels(kernels, cupy, n, offsets, targets, in_offsets, indeg, flag, scan, frontier, nxt, counts):
    """Run every level; returns (processed, levels)."""
    kernels["kahn_in_degree"](_grid(n), (BLOCK,), (in_offsets, np.int32(n), indeg, flag))
    cupy.cumsum(flag, out=scan)
    kernels["kahn_compact"](_grid(n), (BLOCK,), (np.int32(n), flag, scan, frontier))
    count = int(scan[-1])
    processed = levels = 0
    while count:
        processed += count
        levels += 1
        kernels["kahn_remove"](_grid(32 * count), (BLOCK,), (frontier, np.int32(count), offsets, targets, indeg,
                                                        nxt, counts[levels:levels + 1]))
        count = int(counts[levels])
        frontier, nxt = nxt, frontier
    return processed, levels


def _buffers(cupy, graph):
    n = graph.num_vertices
    return (cupy.asarray(graph.offsets), cupy.asarray(graph.targets), cupy.asarray(graph.in_offsets),
            *(cupy.empty(n, dtype=cupy.int32) for _ in range(5)),
            cupy.zeros(n + 1, dtype=cupy.int32))  # next-frontier size of each level (at most n levels)


@functools.cache
def _warm_up() -> None:
    """Compile and load every kernel (ours and CuPy's scan) outside timing."""
    from dynpr.graph import Graph

    cupy = loader.require_cupy()
    graph = Graph.from_edges(np.array([0, 0, 1]), np.array([1, 2, 2]), self_loops=False)
    _levels(loader.kahn_kernels(), cupy, graph.num_vertices, *_buffers(cupy, graph))


def kahn(graph):
    """Kahn's algorithm on the GPU; the same contract as ``dynpr.kahn.kahn``.

    Parameters
    ----------
    graph : dynpr.graph.Graph
        Run it on ``graph.without_self_loops()``: a self-loop makes its vertex cyclic.

    Returns
    -------
    dynpr.kahn.KahnResult
        ``is_dag``, ``processed``, ``levels``, ``remaining`` (sorted int32 ids
        never processed), event-timed ``time_ms``, ``backend="gpu"``, ``device``.

    Raises
    ------
    RuntimeError
        If CuPy or a CUDA device is missing.
    """
    from dynpr.backend import device_name
    from dynpr.kahn import KahnResult  # the CPU module owns the result type

    cupy = loader.require_cupy()
    kernels = loader.kahn_kernels()
    _warm_up()
    n = graph.num_vertices
    if n == 0:
        return KahnResult(is_dag=True, processed=0, levels=0, remaining=np.empty(0, np.int32),
                          time_ms=0.0, backend="gpu", device=device_name("gpu"))
    buffers = _buffers(cupy, graph)
    start, end = cupy.cuda.Event(), cupy.cuda.Event()
    start.record()
    processed, levels = _levels(kernels, cupy, n, *buffers)
    end.record()
    end.synchronize()
    indeg = buffers[3]
    # A processed vertex's in-degree reached zero; the others kept a positive one.
    remaining = cupy.asnumpy(cupy.flatnonzero(indeg != 0)).astype(np.int32)
    return KahnResult(is_dag=processed == n, processed=processed, levels=levels, remaining=remaining,
                      time_ms=cupy.cuda.get_elapsed_time(start, end), backend="gpu", device=device_name("gpu"))
