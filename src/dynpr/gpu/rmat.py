"""R-MAT graphs generated on the GPU: the counter-based stream of :mod:`dynpr.generate.rmat`, whose
NumPy code is the twin (the same graph, bit for bit).

The stream is a pure function of the edge index, so nothing edge-sized is kept between
passes: every pass draws all the edges again (``kernels/rmat.cu``).

1. ``rmat_histogram`` counts the non-self-loop edges per bucket of sources and per bucket
   of targets (:data:`HIST_BUCKETS` buckets of equal vertex ranges).
2. :func:`plan_groups` joins consecutive buckets into groups of rows holding at most
   ``chunk_edges`` drawn edges and self-loops (a larger bucket is a group alone).
3. Per group ``rmat_extract`` appends the int64 keys ``row << scale | col`` of the edges
   whose row is in the group; CuPy sorts them and drops repeats, and the group's columns
   and row counts are kept (on the device with ``resident``, else copied to the host).
   Rows are sources for the CSR and targets for its transpose: the transpose is
   generated like the CSR, never computed from it.

Device memory (n vertices, D drawn non-self-loop edges from the histogram, E = D + n
the edges' upper bound, g entries and w rows of the largest group):

==============================  ======================================  ===============
array                           dtype and length                        bytes
==============================  ======================================  ===============
histograms, kept-edge counter   uint64 2 x HIST_BUCKETS, 1              16 B + 8
group keys, sort double buffer  int64 g, g                              16g
dedup mask, its scan, kept      bool g, int64 g, int64 g                17g
row bounds (after the above)    int64 w+1                               8(w+1)
resident: both CSRs' offsets,   int64 2(n+1), int64 n                   16(n+1) + 8n
per-row counts of a direction
resident: targets, sources and  int32 E each; one direction's pieces    max(8E + group,
the pieces being concatenated   with its array at the concatenation      12E)
==============================  ======================================  ===============

Without ``resident`` each group's columns and counts go to the host as they are made;
the host then holds the pieces and the arrays they are joined into (12E + 16(n+1) + 8n
at most, checked with :func:`dynpr.graph.hostmem.check_host_fits`).
"""

from __future__ import annotations

import numpy as np

from dynpr.generate import rmat_stream
from dynpr.designs import BLOCK, RMAT_STREAM
from dynpr.graph.graph import OFFSET_DTYPE, VERTEX_DTYPE, Graph
from dynpr.gpu import loader, memory
from dynpr.graph.hostmem import check_host_fits

#: Vertex-range buckets of the histogram pass (a power of two; its per-block counters
#: take 16 bytes each of shared memory: 32 KiB).
HIST_BUCKETS = 2048


def rmat_device_bytes(num_vertices: int, drawn_edges: int, group_entries: int, group_rows: int, *,
                      resident: bool) -> int:
    """Modelled peak device bytes of :func:`rmat_graph_gpu` (table in the module docstring).

    Parameters
    ----------
    num_vertices : int
        n.
    drawn_edges : int
        D, drawn edges that are not self-loops (at most the drawn edges).
    group_entries, group_rows : int
        Keys (drawn edges and self-loops) and rows of the largest group.
    resident : bool
        Whether the graph is built on the device (else it goes to the host group by group).

    Returns
    -------
    int
    """
    n, edges = num_vertices, drawn_edges + num_vertices
    group = 16 * HIST_BUCKETS + 8 + 33 * group_entries + 8 * (group_rows + 1)
    if not resident:
        return group
    return 16 * (n + 1) + 8 * n + max(8 * edges + group, 12 * edges)


def plan_groups(counts: np.ndarray, bucket_rows: int, chunk_edges: int, self_loops: bool) -> list[tuple[int, int, int]]:
    """Consecutive buckets joined into groups of at most ``chunk_edges`` keys.

    Parameters
    ----------
    counts : numpy.ndarray
        Drawn non-self-loop edges per bucket (the histogram pass).
    bucket_rows : int
        Rows (vertices) per bucket.
    chunk_edges : int
        Most keys per group; a bucket with more is a group alone.
    self_loops : bool
        Whether each row also holds its self-loop (one key per row).

    Returns
    -------
    list of (int, int, int)
        ``(first row, end row, drawn edges)`` of each group, covering every row in order.
    """
    counts = np.asarray(counts, dtype=np.int64)
    entries = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts + (bucket_rows if self_loops else 0), out=entries[1:])
    drawn = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=drawn[1:])
    groups, b = [], 0
    while b < len(counts):  # one step per group, not per bucket
        end = max(b + 1, int(np.searchsorted(entries, entries[b] + chunk_edges, side="right")) - 1)
        groups.append((b * bucket_rows, end * bucket_rows, int(drawn[end] - drawn[b])))
        b = end
    return groups


def rmat_graph_gpu(scale: int, edge_factor: int, seed: int, abc: tuple[float, float, float], *,
                   self_loops: bool, resident: bool, chunk_edges: int) -> Graph:
    """The graph of :func:`dynpr.generate.rmat.rmat_graph` for the counter-based stream, generated on the GPU.

    Parameters
    ----------
    scale, edge_factor, seed, abc, self_loops
        As for :func:`dynpr.generate.rmat.rmat_graph` (checked there).
    resident : bool
        Return CuPy arrays (the graph stays on the device), else NumPy arrays.
    chunk_edges : int
        Most drawn edges and self-loops per group (one pass over the stream each).

    Returns
    -------
    Graph

    Raises
    ------
    dynpr.errors.NoGpuError
        Without CuPy or a CUDA device.
    MemoryError
        After the histogram pass (32 KiB) and before anything graph-sized is allocated, when
        :func:`rmat_device_bytes` plus :data:`dynpr.gpu.memory.DEFAULT_RESERVE_BYTES` exceeds
        the free device memory, or (without ``resident``) the host lacks the memory for the
        downloaded graph.
    """
    cupy = loader.require_cupy()
    kernels = loader.rmat_kernels()
    n, m = 1 << scale, edge_factor << scale
    t1, t2, t3 = rmat_stream.quadrant_thresholds(abc)
    stream = RMAT_STREAM.pack(
        num_edges=m, scale=scale, rounds=rmat_stream.FEISTEL_ROUNDS,
        edge_base=rmat_stream.stream_base(seed, rmat_stream.EDGE_STREAM),
        perm_base=rmat_stream.stream_base(seed, rmat_stream.PERM_STREAM), t1=t1, t2=t2, t3=t3)
    blocks = cupy.cuda.Device().attributes["MultiProcessorCount"]
    buckets = min(n, HIST_BUCKETS)
    bucket_shift = scale - buckets.bit_length() + 1
    hist = cupy.zeros((2, buckets), dtype=np.uint64)
    kernels["rmat_histogram"]((min(-(-m // BLOCK), 8 * blocks),), (BLOCK,),
                              (stream, np.int32(bucket_shift), np.int32(buckets), hist[0], hist[1]),
                              shared_mem=16 * buckets)
    hist = hist.get()
    plans = [plan_groups(hist[d], 1 << bucket_shift, chunk_edges, self_loops) for d in (0, 1)]
    drawn = int(hist[0].sum())
    entries = max(d + (hi - lo if self_loops else 0) for plan in plans for lo, hi, d in plan)
    rows = max(hi - lo for plan in plans for lo, hi, _ in plan)
    what = f"R-MAT scale {scale} edge factor {edge_factor}"
    needed = rmat_device_bytes(n, drawn, entries, rows, resident=resident)
    free = memory.free_device_bytes()
    if needed + memory.DEFAULT_RESERVE_BYTES > free:
        raise MemoryError(
            f"{what} needs {needed / memory.GIB:.2f} GiB on the GPU, device has {free / memory.GIB:.2f} GiB free "
            f"({needed} bytes + {memory.DEFAULT_RESERVE_BYTES} reserved > {free} bytes): pass a smaller "
            f"chunk_edges than {chunk_edges}, use backend='cpu' or a GPU with more memory"
        )
    if not resident:
        edges = drawn + n
        check_host_fits(12 * edges + 16 * (n + 1) + 8 * n, what)
    grid = (min(-(-m // BLOCK), 32 * blocks),)
    xp = cupy if resident else np
    arrays = []
    for by_target, plan in enumerate(plans):
        cols, counts = [], []
        kept = cupy.zeros(1, dtype=np.uint64)
        for lo, hi, group_drawn in plan:
            loops = hi - lo if self_loops else 0
            keys = cupy.empty(group_drawn + loops, dtype=np.int64)
            if group_drawn:
                kept.fill(0)
                kernels["rmat_extract"](grid, (BLOCK,), (stream, np.int32(by_target), np.uint32(lo), np.uint32(hi),
                                                         keys, kept))
                if int(kept.get()[0]) != group_drawn:  # the two kernels must agree on the predicate
                    raise RuntimeError(f"{what}: rows {lo}..{hi - 1} kept {int(kept.get()[0])} edges where the "
                                       f"histogram counted {group_drawn}")
            if loops:  # R-MAT dropped every self-loop: all of the group's are missing
                rows = cupy.arange(lo, hi, dtype=np.int64)
                keys[group_drawn:] = (rows << scale) | rows
                del rows
            keys.sort()
            new = cupy.empty(len(keys), dtype=bool)
            new[:1] = True
            cupy.not_equal(keys[1:], keys[:-1], out=new[1:])
            keys = keys[new]
            del new
            bounds = cupy.searchsorted(keys, cupy.arange(lo, hi + 1, dtype=np.int64) << scale)
            group_cols = (keys & (n - 1)).astype(VERTEX_DTYPE)
            del keys
            group_counts = cupy.diff(bounds)
            cols.append(group_cols if resident else group_cols.get())
            counts.append(group_counts if resident else group_counts.get())
            del group_cols, group_counts, bounds
        offsets = xp.zeros(n + 1, dtype=OFFSET_DTYPE)
        xp.cumsum(xp.concatenate(counts), out=offsets[1:])
        del counts
        arrays += [offsets, xp.concatenate(cols)]
        del cols
    return Graph(*arrays)
