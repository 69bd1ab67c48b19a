"""R-MAT graphs with the Graph500 parameters, for large inputs where downloading is impossible.

Edges are drawn in chunks of ``2**26`` on a thread pool (NumPy's random
fills, ufuncs and sorts release the GIL), sorted and deduplicated per chunk,
then merged per range of source vertices straight into the CSR: no step
holds more than the graph's int64 keys once (8 bytes per drawn edge) beside
the CSR being built, so scale 26 with edge factor 32 (2.1 billion edges)
fits a 128 GB host.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from dynpr.graph import OFFSET_DTYPE, VERTEX_DTYPE, Graph, merge_disjoint, unique_sorted
from dynpr.hostmem import check_host_fits

#: Graph500 quadrant probabilities (d = 1 - a - b - c = 0.05)
GRAPH500_ABC = (0.57, 0.19, 0.19)
#: Edges drawn per chunk. Graphs of at most this many drawn edges (scale 22 with
#: edge factor 16 and below) come from one stream, as before chunking.
CHUNK_EDGES = 1 << 26
#: Source-vertex ranges merged separately into the CSR.
_BUCKETS = 64


def _check(scale: int, abc) -> None:
    if not 1 <= scale <= 30:
        raise ValueError(f"R-MAT scale {scale} out of range 1..30 (ids must fit int32)")
    a, b, c = abc
    if min(a, b, c) < 0 or a + b + c >= 1:
        raise ValueError(f"R-MAT probabilities a={a}, b={b}, c={c} must be >= 0 with a+b+c < 1")


def rmat_host_bytes(scale: int, edge_factor: int, threads: int) -> int:
    """Modelled peak host bytes of :func:`rmat_graph`.

    The sorted keys of every chunk (8 bytes per drawn edge), the CSR and its
    transpose (8 bytes per edge, 16 per vertex), and per thread one chunk's
    scratch (~16 bytes per drawn edge on average: ids, random numbers, masks,
    keys; the threads do not peak together). Scale 26 with edge factor 16 on
    16 threads: modelled 33.5 GiB, measured peak RSS 25.7 GiB (docs/scaling.md).
    """
    n = 1 << scale
    m = edge_factor * n
    return 8 * m + 8 * (m + n) + 16 * n + threads * 16 * min(m, CHUNK_EDGES)


def rmat_graph(
    scale: int,
    edge_factor: int = 16,
    seed: int = 0,
    abc: tuple[float, float, float] = GRAPH500_ABC,
    *,
    self_loops: bool = True,
    threads: int | None = None,
) -> Graph:
    """Generate a directed R-MAT graph (Graph500 kernel-0 generator) as CSR + transpose.

    ``edge_factor * 2**scale`` edges are drawn; each picks one quadrant per
    level of the recursive adjacency matrix with probabilities a, b, c, d. The
    vertex ids are then shuffled by a random permutation (so high degree is
    not concentrated at low ids), and self-loops and duplicate edges removed.

    Parameters
    ----------
    scale : int
        ``log2`` of the number of vertices (1..30, so ids fit int32).
    edge_factor : int
        Edges drawn per vertex before deduplication.
    seed : int
        Equal arguments give equal graphs, whatever the thread count. The first
        chunk and the permutation come from ``default_rng(seed)`` (one stream
        for graphs of at most :data:`CHUNK_EDGES` drawn edges); chunk ``i >= 1``
        from ``default_rng([seed, i])``.
    abc : tuple of float
        Probabilities of the top-left, top-right and bottom-left quadrants.
    self_loops : bool
        Add a self-loop on every vertex (the prepared form).
    threads : int, optional
        Worker threads; defaults to the CPU count.

    Returns
    -------
    Graph

    Raises
    ------
    ValueError
        On a scale or probabilities out of range.
    MemoryError
        Before allocating, when the host lacks the memory :func:`rmat_host_bytes` models.
    """
    _check(scale, abc)
    threads = threads or os.cpu_count() or 1
    check_host_fits(rmat_host_bytes(scale, edge_factor, threads), f"R-MAT scale {scale} edge factor {edge_factor}")
    n = 1 << scale
    m = edge_factor * n
    starts = list(range(0, m, CHUNK_EDGES))
    bucket_width = -(-n // _BUCKETS)
    bucket_keys = np.arange(1, _BUCKETS, dtype=np.int64) * bucket_width * n
    first = np.random.default_rng(seed)
    perm_ready = threading.Event()
    perm: list[np.ndarray] = []

    def draw(i: int) -> list[np.ndarray]:
        size = min(CHUNK_EDGES, m - starts[i])
        rng = first if i == 0 else np.random.default_rng([seed, i])
        src, dst = rmat_raw_edges(scale, size, rng, abc)
        if i == 0:
            perm.append(first.permutation(n).astype(VERTEX_DTYPE))
            perm_ready.set()
        perm_ready.wait()
        src, dst = perm[0][src], perm[0][dst]
        keep = src != dst
        keys = unique_sorted(src[keep].astype(np.int64) * n + dst[keep])
        return np.split(keys, np.searchsorted(keys, bucket_keys))

    def merge(b: int) -> tuple[np.ndarray, np.ndarray]:
        v0, v1 = b * bucket_width, min(n, (b + 1) * bucket_width)
        keys = unique_sorted(np.concatenate([pieces[b] for pieces in chunks]))
        for pieces in chunks:
            pieces[b] = None  # free the chunk pieces as soon as the bucket holds them
        if self_loops:  # R-MAT dropped every self-loop: all of this range's are missing
            keys = merge_disjoint(keys, np.arange(v0, v1, dtype=np.int64) * (n + 1))
        rows, cols = np.divmod(keys, np.int64(n))
        return np.bincount(rows - v0, minlength=v1 - v0), cols.astype(VERTEX_DTYPE)

    with ThreadPoolExecutor(threads) as pool:
        chunks = list(pool.map(draw, range(len(starts))))
        merged = list(pool.map(merge, range(-(-n // bucket_width))))
    offsets = np.zeros(n + 1, dtype=OFFSET_DTYPE)
    np.cumsum(np.concatenate([counts for counts, _ in merged]), out=offsets[1:])
    targets = np.concatenate([cols for _, cols in merged])
    del merged
    return Graph.from_csr(offsets, targets)


def rmat_edges(
    scale: int,
    edge_factor: int = 16,
    seed: int = 0,
    abc: tuple[float, float, float] = GRAPH500_ABC,
) -> tuple[np.ndarray, np.ndarray]:
    """The edges of :func:`rmat_graph` without added self-loops.

    Returns
    -------
    src, dst : numpy.ndarray of int32
        Unique non-self-loop edges, sorted by ``(src, dst)``.
    """
    return rmat_graph(scale, edge_factor, seed, abc, self_loops=False).edges()


def rmat_raw_edges(scale: int, num_edges: int, rng: np.random.Generator,
                   abc: tuple[float, float, float] = GRAPH500_ABC) -> tuple[np.ndarray, np.ndarray]:
    """Draw R-MAT edge endpoints, before permutation and deduplication.

    Bit ``level`` of the source (row) and target (column) ids is drawn for all
    edges at once: one vectorized step per level.

    Parameters
    ----------
    scale : int
        Number of bits per id.
    num_edges : int
        Edges to draw.
    rng : numpy.random.Generator
        Source of randomness.
    abc : tuple of float
        Quadrant probabilities a, b, c (d = 1 - a - b - c).

    Returns
    -------
    src, dst : numpy.ndarray of int32
    """
    a, b, c = abc
    m = num_edges
    # Graph500's formulation: the row bit is 1 with probability c+d; given the row
    # bit, the column bit is 1 with probability b/(a+b) (top) or d/(c+d) (bottom).
    ab = a + b
    col_given_top = np.float32(b / ab)
    col_given_bottom = np.float32((1.0 - ab - c) / (1.0 - ab))
    src = np.zeros(m, dtype=np.int32)
    dst = np.zeros(m, dtype=np.int32)
    # Preallocated scratch written through ``out=``: 2.4x faster than fresh temporaries,
    # the same draws in the same order (the same graphs).
    uniform = np.empty(m, dtype=np.float32)
    bit = np.empty(m, dtype=bool)
    threshold = np.empty(m, dtype=np.float32)
    shifted = np.empty(m, dtype=np.int32)
    for level in range(scale):
        rng.random(dtype=np.float32, out=uniform)
        np.greater_equal(uniform, np.float32(ab), out=bit)  # row bit
        threshold.fill(col_given_top)
        np.copyto(threshold, col_given_bottom, where=bit)
        np.left_shift(bit, level, out=shifted, dtype=np.int32)
        np.bitwise_or(src, shifted, out=src)
        rng.random(dtype=np.float32, out=uniform)
        np.less(uniform, threshold, out=bit)  # column bit
        np.left_shift(bit, level, out=shifted, dtype=np.int32)
        np.bitwise_or(dst, shifted, out=dst)
    return src, dst
