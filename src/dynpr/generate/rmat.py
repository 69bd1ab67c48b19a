"""R-MAT graphs with the Graph500 parameters, for large inputs where downloading is impossible.

Two random streams, chosen by size:

* Graphs of at most :data:`CHUNK_EDGES` drawn edges (scale 22 with edge factor 16 and
  below) come from one NumPy stream, ``default_rng(seed)``: the edges of
  :func:`rmat_raw_edges`, then the vertex permutation. Host only.
* Larger graphs come from a counter-based stream: every random number is a pure function
  of (seed, edge index, level), so chunks, threads and the device give the same graph.
  Word ``i`` of the stream keyed ``k`` is SplitMix64's output, ``mix64(k + (i+1)*GAMMA)``
  mod 2**64; edge ``e`` reads words ``e*H .. e*H+H-1`` (``H = ceil(scale/2)``) and level
  ``2j`` takes the high 32 bits of word ``j``, level ``2j+1`` the low 32. A level's 32-bit
  uniform ``u`` is compared with the integer thresholds of :func:`quadrant_thresholds`:
  the row bit is ``u >= T_ab`` (probability c+d) and, given it, the column bit is
  ``u >= T_a`` in the top half and ``u >= T_abc`` in the bottom one (probabilities b/(a+b)
  and d/(c+d)), the row-then-column draw of :func:`rmat_raw_edges` from one uniform. Ids
  are then permuted by :func:`vertex_permutation`, a keyed Feistel bijection of
  ``[0, 2**scale)`` that the GPU evaluates per endpoint and the host tabulates. The
  kernels (``kernels/rmat.cu``, driven by :mod:`dynpr.gpu.rmat`) compute the same
  integers; the NumPy code here is their twin.

On the host, edges are drawn in chunks on a thread pool (NumPy's ufuncs and sorts
release the GIL; the counter stream is hashed in blocks of :data:`_BLOCK` edges so its
scratch stays in cache), sorted and deduplicated per chunk, then merged per range of
source vertices straight into the CSR: no step holds more than the graph's int64 keys
once (8 bytes per drawn edge) beside the CSR being built, so scale 26 with edge factor
32 (2.1 billion edges) fits a 128 GB host.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from dynpr.backend import resolve_backend
from dynpr.graph.graph import OFFSET_DTYPE, VERTEX_DTYPE, Graph, merge_disjoint, unique_sorted
from dynpr.graph.hostmem import check_host_fits
from dynpr.generate.rmat_stream import (EDGE_STREAM, FEISTEL_ROUNDS, GAMMA, GRAPH500_ABC, MASK64, MIX1,  # noqa: F401
                               MIX2, PERM_STREAM, mix64, quadrant_thresholds, stream_base)

#: Graphs of at most this many drawn edges (scale 22 with edge factor 16 and below) come
#: from one NumPy stream; larger ones from the counter-based stream, drawn in chunks of
#: this many edges on the host by default.
CHUNK_EDGES = 1 << 26
#: Drawn edges per pass of the GPU generator by default (:mod:`dynpr.gpu.rmat`).
DEVICE_CHUNK_EDGES = 1 << 28
# Source-vertex ranges merged separately into the CSR.
_BUCKETS = 64
# Edges hashed at a time by the host twin: 2**16 keeps its uint64 scratch in L2 (2x
# faster than whole-chunk arrays on the 2-core development machine).
_BLOCK = 1 << 16


def _check(scale: int, abc, seed: int) -> None:
    if not 1 <= scale <= 30:
        raise ValueError(f"R-MAT scale {scale} out of range 1..30 (ids must fit int32)")
    a, b, c = abc
    if min(a, b, c) < 0 or a + b + c >= 1:
        raise ValueError(f"R-MAT probabilities a={a}, b={b}, c={c} must be >= 0 with a+b+c < 1")
    if not 0 <= seed <= MASK64:
        raise ValueError(f"R-MAT seed {seed} out of range 0..2**64-1")


def _mix64_inplace(z: np.ndarray, tmp: np.ndarray) -> None:
    """:func:`mix64` of a uint64 array, in place (array arithmetic wraps mod 2**64)."""
    np.right_shift(z, np.uint64(30), out=tmp)
    z ^= tmp
    z *= np.uint64(MIX1)
    np.right_shift(z, np.uint64(27), out=tmp)
    z ^= tmp
    z *= np.uint64(MIX2)
    np.right_shift(z, np.uint64(31), out=tmp)
    z ^= tmp


class _Scratch:
    """Block-sized work arrays of one thread, reused for every block it hashes."""

    def __init__(self, size: int):
        self.base = np.empty(size, dtype=np.uint64)
        self.z = np.empty(size, dtype=np.uint64)
        self.tmp = np.empty(size, dtype=np.uint64)
        self.row = np.empty(size, dtype=bool)
        self.bit = np.empty(size, dtype=bool)
        self.shifted = np.empty(size, dtype=np.int32)


def _counter_block(scale: int, first: int, src: np.ndarray, dst: np.ndarray, base: int,
                   thresholds: tuple[int, int, int], work: _Scratch) -> None:
    """Raw (unpermuted) ids of edges ``first .. first+len(src)-1`` of the counter stream,
    written into ``src`` and ``dst`` (int32, at most ``len(work.z)`` long)."""
    k = len(src)
    words = (scale + 1) // 2
    t1, t2, t3 = (np.uint32(t) for t in thresholds)
    counter, z, tmp, row, bit, shifted = (a[:k] for a in (work.base, work.z, work.tmp, work.row, work.bit,
                                                            work.shifted))
    # word e*H+j is mix64(base + (e*H + j)*GAMMA): the block's counters, then +GAMMA per word
    counter[:] = np.arange(first, first + k, dtype=np.uint64)
    counter *= np.uint64(words * GAMMA & MASK64)
    counter += np.uint64(base)
    src.fill(0)
    dst.fill(0)
    for j in range(words):
        np.add(counter, np.uint64(j * GAMMA & MASK64), out=z)
        _mix64_inplace(z, tmp)
        halves = z.view(np.uint32)  # little-endian: [low, high] 32 bits of each word
        for level, u in ((2 * j, halves[1::2]), (2 * j + 1, halves[0::2])):
            if level == scale:
                break
            np.greater_equal(u, t2, out=row)  # row bit: probability c+d
            np.left_shift(row, level, out=shifted, dtype=np.int32)
            src |= shifted
            # column bit: u >= T_a above the row split, u >= T_abc below it (row ^ the two compares)
            np.greater_equal(u, t1, out=bit)
            bit ^= row
            np.greater_equal(u, t3, out=row)
            bit ^= row
            np.left_shift(bit, level, out=shifted, dtype=np.int32)
            dst |= shifted


def rmat_counter_edges(scale: int, first: int, count: int, seed: int = 0,
                       abc: tuple[float, float, float] = GRAPH500_ABC) -> tuple[np.ndarray, np.ndarray]:
    """Edges ``first .. first+count-1`` of the counter-based stream, before permutation.

    The raw draws of graphs above :data:`CHUNK_EDGES` drawn edges (see the module
    docstring); bit ``level`` of each id is that level's row or column bit.

    Parameters
    ----------
    scale : int
        Number of bits per id.
    first, count : int
        Index of the first edge and number of edges.
    seed : int
        Key of the stream (0 .. 2**64-1).
    abc : tuple of float
        Quadrant probabilities a, b, c (d = 1 - a - b - c).

    Returns
    -------
    src, dst : numpy.ndarray of int32
    """
    _check(scale, abc, seed)
    src = np.empty(count, dtype=VERTEX_DTYPE)
    dst = np.empty(count, dtype=VERTEX_DTYPE)
    base, thresholds = stream_base(seed, EDGE_STREAM), quadrant_thresholds(abc)
    work = _Scratch(min(count, _BLOCK))
    for b0 in range(0, count, _BLOCK):
        b1 = min(count, b0 + _BLOCK)
        _counter_block(scale, first + b0, src[b0:b1], dst[b0:b1], base, thresholds, work)
    return src, dst


def _feistel(v: np.ndarray, scale: int, base: int) -> np.ndarray:
    """The permutation of uint64 ids ``v`` (the kernels' ``permute``).

    Round ``r`` splits the id into a high and a low part (``scale//2`` low bits first,
    the widths alternating), and maps ``(hi, lo) -> (lo, hi ^ F_r(lo))`` with
    ``F_r(lo)`` = word ``r*2**32 + lo`` of the permutation stream: a bijection for any
    round function, so the result is a permutation of ``[0, 2**scale)``.
    """
    low = scale // 2
    for r in range(FEISTEL_ROUNDS):
        high = scale - low
        lo = v & np.uint64((1 << low) - 1)
        z = lo * np.uint64(GAMMA)
        z += np.uint64((base + (r << 32) * GAMMA) & MASK64)
        _mix64_inplace(z, np.empty_like(z))
        z ^= v >> np.uint64(low)
        z &= np.uint64((1 << high) - 1)
        lo <<= np.uint64(high)
        v = lo | z
        low = high
    return v


def vertex_permutation(scale: int, seed: int = 0, threads: int | None = None) -> np.ndarray:
    """New id of every vertex in the counter-based stream's graphs: a keyed bijection.

    A :data:`FEISTEL_ROUNDS`-round Feistel network on ``scale`` bits keyed by the seed
    (:func:`_feistel`); the kernels evaluate it per endpoint, the host tabulates it here,
    in blocks on a thread pool.

    Parameters
    ----------
    scale : int
        ``log2`` of the number of vertices (1..30).
    seed : int
        The graph's seed.
    threads : int, optional
        Worker threads; defaults to the CPU count.

    Returns
    -------
    numpy.ndarray of int32
        ``perm[v]`` is the id of raw vertex ``v``; a permutation of ``0 .. 2**scale-1``.
    """
    _check(scale, GRAPH500_ABC, seed)
    n = 1 << scale
    base = stream_base(seed, PERM_STREAM)
    perm = np.empty(n, dtype=VERTEX_DTYPE)

    def block(v0: int) -> None:
        v1 = min(n, v0 + _BLOCK)
        perm[v0:v1] = _feistel(np.arange(v0, v1, dtype=np.uint64), scale, base)

    with ThreadPoolExecutor(threads or os.cpu_count() or 1) as pool:
        list(pool.map(block, range(0, n, _BLOCK)))
    return perm


def rmat_host_bytes(scale: int, edge_factor: int, threads: int, chunk_edges: int = CHUNK_EDGES) -> int:
    """Modelled peak host bytes of :func:`rmat_graph` on the host.

    The sorted keys of every chunk (8 bytes per drawn edge), the CSR and its
    transpose (8 bytes per edge, 16 per vertex), and per thread one chunk's
    scratch (~16 bytes per drawn edge on average: ids, random numbers, masks,
    keys; the threads do not peak together). Scale 26 with edge factor 16 on
    16 threads: modelled 33.5 GiB, measured peak RSS 25.7 GiB with the NumPy stream
    (docs/scaling.md). The counter stream's scratch is smaller (block-sized hashing;
    per chunk int64 keys, a mask and the deduplicated copy) and its permutation table
    (4 bytes per vertex) fits in the 16 per vertex.
    """
    n = 1 << scale
    m = edge_factor * n
    chunk = m if m <= CHUNK_EDGES else chunk_edges
    return 8 * m + 8 * (m + n) + 16 * n + threads * 16 * min(m, chunk)


def counter_stream(scale: int, edge_factor: int) -> bool:
    """Whether the graph comes from the counter-based stream (more than :data:`CHUNK_EDGES`
    drawn edges), the one the GPU can generate."""
    return edge_factor << scale > CHUNK_EDGES


def generation_backend(scale: int, edge_factor: int, backend: str = "auto") -> str:
    """Where :func:`rmat_graph` generates a graph: ``cpu`` or ``gpu``.

    ``auto`` is the GPU when :func:`dynpr.backend.gpu_available` and the graph comes
    from the counter-based stream; graphs of the NumPy stream are always generated on
    the host (``gpu`` then uploads them when asked for a resident graph).

    Raises
    ------
    dynpr.errors.InputError
        On an unknown backend name.
    dynpr.errors.NoGpuError
        For ``gpu`` without a device.
    """
    return "gpu" if resolve_backend(backend) == "gpu" and counter_stream(scale, edge_factor) else "cpu"


def rmat_graph(
    scale: int,
    edge_factor: int = 16,
    seed: int = 0,
    abc: tuple[float, float, float] = GRAPH500_ABC,
    *,
    self_loops: bool = True,
    threads: int | None = None,
    backend: str = "auto",
    resident: bool = False,
    chunk_edges: int | None = None,
) -> Graph:
    """Generate a directed R-MAT graph (Graph500 kernel-0 generator) as CSR + transpose.

    ``edge_factor * 2**scale`` edges are drawn; each picks one quadrant per
    level of the recursive adjacency matrix with probabilities a, b, c, d. The
    vertex ids are then shuffled by a random permutation (so high degree is
    not concentrated at low ids), and self-loops and duplicate edges removed.
    Equal arguments give the same graph, bit for bit, whatever the backend,
    thread count or chunk size.

    Parameters
    ----------
    scale : int
        ``log2`` of the number of vertices (1..30, so ids fit int32).
    edge_factor : int
        Edges drawn per vertex before deduplication.
    seed : int
        0 .. 2**64-1. Graphs of at most :data:`CHUNK_EDGES` drawn edges come from
        ``default_rng(seed)`` (the edges of :func:`rmat_raw_edges`, then
        ``permutation(2**scale)``); larger ones from the counter-based stream keyed by
        it (module docstring).
    abc : tuple of float
        Probabilities of the top-left, top-right and bottom-left quadrants.
    self_loops : bool
        Add a self-loop on every vertex (the prepared form).
    threads : int, optional
        Host worker threads; defaults to the CPU count.
    backend : {"auto", "cpu", "gpu"}
        Where to generate (:func:`generation_backend`): ``auto`` uses the GPU when there
        is one, for graphs of the counter-based stream.
    resident : bool
        Return the graph's arrays on the GPU (CuPy, as :func:`dynpr.gpu.resident.to_resident`)
        instead of the host; needs a GPU whatever ``backend`` generated it.
    chunk_edges : int, optional
        Drawn edges per chunk of the counter-based stream: per host chunk (default
        :data:`CHUNK_EDGES`) or per device pass (default :data:`DEVICE_CHUNK_EDGES`).
        Smaller chunks need less memory; the graph does not depend on it.

    Returns
    -------
    Graph
        NumPy arrays, or CuPy arrays with ``resident=True``.

    Raises
    ------
    ValueError
        On a scale, seed, probabilities or chunk size out of range.
    dynpr.errors.InputError
        On an unknown backend.
    dynpr.errors.NoGpuError
        For ``backend="gpu"`` or ``resident=True`` without a GPU.
    MemoryError
        Before allocating, when the host lacks the memory :func:`rmat_host_bytes` models
        or the GPU the memory :func:`dynpr.gpu.rmat.rmat_device_bytes` models.
    """
    _check(scale, abc, seed)
    if chunk_edges is not None and chunk_edges < 1:
        raise ValueError(f"chunk_edges must be >= 1, got {chunk_edges}")
    if generation_backend(scale, edge_factor, backend) == "gpu":
        from dynpr.gpu.rmat import rmat_graph_gpu

        return rmat_graph_gpu(scale, edge_factor, seed, abc, self_loops=self_loops, resident=resident,
                              chunk_edges=chunk_edges or DEVICE_CHUNK_EDGES)
    if resident:
        from dynpr.gpu.loader import require_cupy

        require_cupy()  # fail before the host work, not after it
    graph = _host_graph(scale, edge_factor, seed, abc, self_loops, threads or os.cpu_count() or 1,
                        chunk_edges or CHUNK_EDGES)
    if resident:
        from dynpr.gpu.resident import to_resident

        return to_resident(graph)
    return graph


def _host_graph(scale: int, edge_factor: int, seed: int, abc, self_loops: bool, threads: int,
                chunk_edges: int) -> Graph:
    """:func:`rmat_graph` on the host (the twin of :mod:`dynpr.gpu.rmat` for the counter stream)."""
    check_host_fits(rmat_host_bytes(scale, edge_factor, threads, chunk_edges),
                    f"R-MAT scale {scale} edge factor {edge_factor}")
    n = 1 << scale
    m = edge_factor * n
    bucket_width = -(-n // _BUCKETS)
    bucket_keys = np.arange(1, _BUCKETS, dtype=np.int64) * bucket_width * n
    if counter_stream(scale, edge_factor):
        perm = vertex_permutation(scale, seed, threads)
        base, thresholds = stream_base(seed, EDGE_STREAM), quadrant_thresholds(abc)
        starts = range(0, m, chunk_edges)

        def draw(first: int) -> np.ndarray:
            count = min(chunk_edges, m - first)
            keys = np.empty(count, dtype=np.int64)
            work = _Scratch(min(count, _BLOCK))
            src = np.empty(len(work.z), dtype=VERTEX_DTYPE)
            dst = np.empty(len(work.z), dtype=VERTEX_DTYPE)
            kept = 0
            for b0 in range(first, first + count, _BLOCK):
                k = min(_BLOCK, first + count - b0)
                _counter_block(scale, b0, src[:k], dst[:k], base, thresholds, work)
                s, d = perm[src[:k]], perm[dst[:k]]
                keep = s != d
                part = keys[kept:kept + np.count_nonzero(keep)]
                np.multiply(s[keep], np.int64(n), out=part, dtype=np.int64)
                part += d[keep]
                kept += len(part)
            return unique_sorted(keys[:kept])
    else:
        # The NumPy stream: one chunk, the edges then the permutation from default_rng(seed).
        starts = range(1)

        def draw(first: int) -> np.ndarray:
            rng = np.random.default_rng(seed)
            src, dst = rmat_raw_edges(scale, m, rng, abc)
            perm = rng.permutation(n).astype(VERTEX_DTYPE)
            src, dst = perm[src], perm[dst]
            keep = src != dst
            return unique_sorted(src[keep].astype(np.int64) * n + dst[keep])

    def split(first: int) -> list[np.ndarray]:
        keys = draw(first)
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
        chunks = list(pool.map(split, starts))
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
