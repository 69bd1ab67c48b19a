"""G-Shards for Static and ND: CuSha's layout, its builder, twin and memory model.

CuSha (Khorasani, Vora, Gupta and Bhuyan, HPDC 2014) keeps every in-edge as an entry of the
shard of its destination, a shard being ``width`` consecutive vertices, and each entry holds a
copy of its source's value. A shard's entries are in source order, so the entries of shard ``i``
whose sources lie in shard ``j`` form one contiguous *window* ``W(j, i)``. An iteration is then, per
shard, one block:

1. add the shard's entries, read front to back, into an accumulator of its destinations in shared
   memory (``local_target``: the destination minus the shard's first vertex), and finish them;
2. write the shard's new contributions into its windows in every shard. The windows of shard ``j``
   are concatenated (CuSha's "concatenated windows"): entry ``k`` of that list is the out-edge
   whose source is ``j * width + window_source[k]``, and the window ``(j, i)`` spans
   ``window_length`` entries from ``window_cw`` in the list and from ``window_first`` among the
   shards' entries, in the same order.

So per edge an iteration reads the stored contribution and a 2-byte local target contiguously, and
reads a 2-byte source and writes the contribution window by window: 12 bytes with float32
contributions, 20 with float64, the traffic of propagation blocking (:mod:`dynpr.blocking`) with the
runs on the writing side instead of the reading one. CuSha lets a block read windows that others
are rewriting in the same iteration; here the stored values are double-buffered, so the iterations
are Jacobi's, as every other engine's. Fixed-point accumulators (as propagation blocking's) give
the same sums every run.

:func:`build_shards` is one function over NumPy or CuPy arrays; :func:`sharded_sums` is the host
twin of one iteration's sums; the kernel and driver are ``kernels/locality.cu`` (``shards_iterate``)
and :mod:`dynpr.gpu.shards`. Importing this module needs no CuPy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dynpr.arrays import array_fields, array_module, ranks_within
from dynpr.blocking import BUILD_CHUNK_EDGES, MAX_LOCAL

@dataclass
class ShardedLayout:
    """The G-Shards layout of one graph (NumPy or CuPy arrays; the graph's ids). P = ceil(n / width)
    shards; windows are indexed source shard first: window (j, i) at ``j * P + i``.

    Attributes
    ----------
    n, m : vertices and edges.
    width : vertices per shard (shard i holds destinations [i*width, (i+1)*width)).
    shard_start : int64 P+1, where each shard's entries start.
    local_target : uint16 m, per entry (shard after shard, each in source order): destination - shard start.
    window_source : uint16 m, the concatenated windows (source shard after source shard, each window
        after window in destination shard order): source - its shard's start.
    window_first, window_cw : int64 P*P, where window (j, i) starts among the entries and in the
        concatenated windows.
    window_length : int32 P*P, the entries of window (j, i).
    """

    n: int
    m: int
    width: int
    shard_start: object
    local_target: object
    window_source: object
    window_first: object
    window_cw: object
    window_length: object

    @property
    def shards(self) -> int:
        return -(-self.n // self.width)

    def arrays(self) -> dict:
        """The array fields by name."""
        return array_fields(self)


def check_width(n: int, width: int) -> None:
    """Raise ValueError unless local sources and targets fit uint16 and n is positive."""
    if not (0 < width <= MAX_LOCAL and n > 0):
        raise ValueError(f"G-Shards need 0 < width <= {MAX_LOCAL} and n > 0, got width {width}, n {n}")


def build_shards(offsets, targets, width: int) -> ShardedLayout:
    """The G-Shards layout of an out-CSR (``offsets``, ``targets``; NumPy or CuPy arrays: the result
    lives where they are), some :data:`dynpr.blocking.BUILD_CHUNK_EDGES` out-edges at a time: a count
    of each window's entries, then per chunk a stable sort of its edges by window, which places each
    edge in its window after those of earlier chunks. No loop per edge or vertex.

    Raises
    ------
    ValueError
        For a width outside (0, 65536] or an empty graph.
    """
    xp = array_module(offsets)
    n, m = len(offsets) - 1, int(targets.size)
    check_width(n, width)
    shards = -(-n // width)
    chunks = [(first, min(m, first + BUILD_CHUNK_EDGES)) for first in range(0, m, BUILD_CHUNK_EDGES)]

    def window_of(first: int, last: int):
        """Each out-edge's window, (source shard) * P + (destination shard), and its local source and target."""
        source = xp.searchsorted(offsets, xp.arange(first, last, dtype=np.int64), side="right") - 1
        target = targets[first:last]
        return (source // width) * shards + target // width, source % width, target % width

    length = xp.zeros(shards * shards, dtype=np.int64)
    for first, last in chunks:  # a loop over chunks of edges, each vectorized
        length += xp.bincount(window_of(first, last)[0], minlength=shards * shards)
    by_shard = length.reshape(shards, shards)
    shard_start = xp.zeros(shards + 1, dtype=np.int64)
    xp.cumsum(by_shard.sum(axis=0), out=shard_start[1:])
    window_first = (shard_start[:-1][None, :] + xp.cumsum(by_shard, axis=0) - by_shard).ravel()
    source_shard_start = offsets[xp.arange(shards, dtype=np.int64) * width].astype(np.int64)
    window_cw = (source_shard_start[:, None] + xp.cumsum(by_shard, axis=1) - by_shard).ravel()
    local_target = xp.empty(m, dtype=np.uint16)
    window_source = xp.empty(m, dtype=np.uint16)
    placed = xp.zeros(shards * shards, dtype=np.int64)  # entries of each window placed by earlier chunks
    for first, last in chunks:
        window, source, target = window_of(first, last)
        order = xp.argsort(window, kind="stable")  # by window, then source, then row order
        sorted_window = window[order]
        offset = placed[sorted_window] + xp.arange(last - first) - xp.searchsorted(sorted_window, sorted_window)
        window_source[window_cw[sorted_window] + offset] = source[order].astype(np.uint16)
        local_target[window_first[sorted_window] + offset] = target[order].astype(np.uint16)
        placed += xp.bincount(window, minlength=shards * shards)
        del window, source, target, order, sorted_window, offset
    return ShardedLayout(n, m, width, shard_start, local_target, window_source, window_first, window_cw,
                         length.astype(np.int32))


def sharded_sums(layout: ShardedLayout, contributions: np.ndarray) -> np.ndarray:
    """Every vertex's sum of in-neighbour contributions through the layout, on the host: the windows
    written from ``contributions`` (as stored, float32 or float64), then each shard's entries added up
    (float64). The twin of one ``shards_iterate`` before the ranks are finished (the GPU adds a shard's
    entries in another order, in fixed point)."""
    shards, width = layout.shards, layout.width
    length = layout.window_length.astype(np.int64)
    within = ranks_within(length)
    cw = np.repeat(layout.window_cw, length) + within
    entry = np.repeat(layout.window_first, length) + within
    source_shard = np.repeat(np.arange(shards), length.reshape(shards, shards).sum(axis=1))
    stored = np.empty(layout.m, dtype=contributions.dtype)
    stored[entry] = contributions[source_shard * width + layout.window_source[cw]]
    shard = np.repeat(np.arange(shards), np.diff(layout.shard_start))
    return np.bincount(shard * width + layout.local_target, weights=stored.astype(np.float64), minlength=layout.n)


def sharded_device_bytes(n: int, m: int, width: int, dtype=np.float32) -> int:
    """Device bytes of a G-Shards Static/ND run beyond the graph itself: the layout (local targets and
    window sources 2m each, the stored contributions twice, m of ``dtype`` each, 20 bytes per window,
    the shards' starts) and the run (1/d 8n, two ranks 16n, two contributions of ``dtype``, the loop
    state 48 bytes).

    Raises
    ------
    ValueError
        As :func:`build_shards` for the width.
    """
    check_width(n, width)
    size, shards = np.dtype(dtype).itemsize, -(-n // width)
    layout = 4 * m + 2 * size * m + 20 * shards * shards + 8 * (shards + 1)
    return layout + 8 * n + 16 * n + 2 * size * n + 48
