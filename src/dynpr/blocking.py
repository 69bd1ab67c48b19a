"""Propagation blocking for Static and ND: a layout whose per-edge traffic is streamed, its builder and twin.

A pull iteration gathers one contribution per in-edge at a scattered address; the H100 serves
scattered gathers at about 130 per nanosecond from its L2 and 32 from DRAM
(docs/locality.md, "The gather wall"), below what issue 35's targets need. Propagation blocking
(Beamer, Asanović and Patterson, IPDPS 2017) replaces the gathers by two streamed passes:

1. **expand**: the out-edges, source after source, are cut into tiles of ``tile_edges``; each
   tile writes every edge's contribution ``C[u]`` into its bin's run of the tile (a bin is
   ``bin_width`` consecutive destinations). The scattered writes go to shared memory (the edge's
   ``position`` in its tile's bin order) and the tile is stored whole: the global writes are
   coalesced.
2. **accumulate**: each bin adds up its run of every tile (``run_start``, ``run_length``) into an
   accumulator of its destinations held in shared memory (``local_target``: the destination minus
   the bin's first), then finishes them: ``r = c0 + alpha * acc``.

So per edge an iteration streams a 2-byte position, the stored contribution (written, then read)
and a 2-byte local target: 12 bytes with float32 contributions, 20 with float64, and no scattered
access outside shared memory. A bin's accumulator adds fixed-point integers, so its sums, and the
ranks, are the same whatever order its atomics happen in.

The builder is one function over NumPy or CuPy arrays (:func:`build_blocking`), as the segmented
layout's is; :func:`blocked_sums` is the host twin of one iteration's two passes. The kernels and
driver are ``kernels/locality.cu`` and :mod:`dynpr.gpu.blocking`. Importing this module needs no
CuPy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dynpr.arrays import array_fields, ranks_within
from dynpr.graph import array_module

#: Destinations per bin: their float64 accumulator (128 KiB) fills most of a block's shared memory.
BIN_WIDTH = 1 << 14
#: Shared memory one expand block stages its tile's contributions in (the H100's opt-in limit is 227 KiB).
STAGING_BYTES = 224 << 10
#: Positions and local targets are uint16.
MAX_LOCAL = 1 << 16


def bin_width_for(n: int, multiprocessors: int) -> int:
    """Destinations per bin for n vertices: :data:`BIN_WIDTH`, halved (down to 1024) while the bins are
    fewer than four per multiprocessor, so that the last wave of bins does not leave most of them idle."""
    width = BIN_WIDTH
    while width > 1024 and -(-n // width) < 4 * multiprocessors:
        width //= 2
    return width


def tile_edges_for(dtype) -> int:
    """Out-edges per tile: as many contributions of ``dtype`` as :data:`STAGING_BYTES` hold."""
    return min(MAX_LOCAL, STAGING_BYTES // np.dtype(dtype).itemsize)


@dataclass
class BlockedLayout:
    """The propagation-blocking layout of one graph (NumPy or CuPy arrays; the graph's ids).

    Attributes
    ----------
    n, m : vertices and edges.
    bin_width : destinations per bin (bin b holds [b*bin_width, (b+1)*bin_width)).
    tile_edges : out-edges per tile (tile t holds out-edges [t*tile_edges, (t+1)*tile_edges)).
    tile_source : int32 T+1, the source of each tile's first out-edge (the last entry: of edge m-1).
    position : uint16 m, each out-edge's place in its tile's order by bin (stable: by source within a bin).
    local_target : uint16 m, in stored order (tile after tile, each in bin order): destination - bin start.
    run_start, run_length : uint16 B*T, bin-major: bin b's run of tile t starts at
        ``t*tile_edges + run_start[b*T + t]`` and holds ``run_length[b*T + t]`` contributions.
    """

    n: int
    m: int
    bin_width: int
    tile_edges: int
    tile_source: object
    position: object
    local_target: object
    run_start: object
    run_length: object

    @property
    def bins(self) -> int:
        return -(-self.n // self.bin_width)

    @property
    def tiles(self) -> int:
        return len(self.tile_source) - 1

    def arrays(self) -> dict:
        """The array fields by name."""
        return array_fields(self)


def check_shape(n: int, bin_width: int, tile_edges: int) -> None:
    """Raise ValueError unless local positions and targets fit uint16 and every count is positive."""
    if not (0 < bin_width <= MAX_LOCAL and 0 < tile_edges <= MAX_LOCAL and n > 0):
        raise ValueError(f"propagation blocking needs 0 < bin_width, tile_edges <= {MAX_LOCAL} and n > 0, "
                         f"got {bin_width}, {tile_edges}, {n}")


#: Out-edges sorted at once while building (a whole number of tiles): bounds the build's scratch.
BUILD_CHUNK_EDGES = 1 << 26


def build_blocking(offsets, targets, bin_width: int = BIN_WIDTH, tile_edges: int | None = None) -> BlockedLayout:
    """The propagation-blocking layout of an out-CSR (``offsets``, ``targets``; NumPy or CuPy arrays:
    the result lives where they are). A stable sort of each tile's edges by bin, some
    :data:`BUILD_CHUNK_EDGES` edges at a time; no loop per edge or vertex. ``tile_edges`` defaults to
    :func:`tile_edges_for` float32.

    Raises
    ------
    ValueError
        For a bin width or tile outside (0, 65536], an empty graph or a vertex without an out-edge.
    """
    tile_edges = tile_edges_for(np.float32) if tile_edges is None else tile_edges
    xp = array_module(offsets)
    n, m = len(offsets) - 1, int(targets.size)
    check_shape(n, bin_width, tile_edges)
    if bool((offsets[1:] == offsets[:-1]).any()):  # the expand kernel walks rows of at least one edge
        raise ValueError("propagation blocking needs an out-edge on every vertex (the paper's self-loops)")
    tiles, bins = max(1, -(-m // tile_edges)), -(-n // bin_width)
    position = xp.empty(m, dtype=np.uint16)
    local_target = xp.empty(m, dtype=np.uint16)
    counts = xp.empty((tiles, bins), dtype=np.int64)
    chunk_tiles = max(1, BUILD_CHUNK_EDGES // tile_edges)
    for t0 in range(0, tiles, chunk_tiles):  # a loop over chunks of tiles, each vectorized
        t1 = min(tiles, t0 + chunk_tiles)
        first, last = t0 * tile_edges, min(m, t1 * tile_edges)
        local = xp.arange(last - first, dtype=np.int64)
        key = (local // tile_edges) * bins + targets[first:last] // bin_width  # (tile in chunk, bin)
        order = xp.argsort(key, kind="stable")  # tiles stay contiguous: each edge stays in its tile
        position[first + order] = (local % tile_edges).astype(np.uint16)
        local_target[first:last] = (targets[first + order] % bin_width).astype(np.uint16)
        counts[t0:t1] = xp.bincount(key, minlength=(t1 - t0) * bins).reshape(t1 - t0, bins)
        del local, key, order
    starts = xp.cumsum(counts, axis=1) - counts
    first_edges = xp.minimum(xp.arange(tiles + 1, dtype=np.int64) * tile_edges, m - 1)
    tile_source = (xp.searchsorted(offsets, first_edges, side="right") - 1).astype(np.int32)
    return BlockedLayout(n, m, bin_width, tile_edges, tile_source, position, local_target,
                         xp.ascontiguousarray(starts.T).ravel().astype(np.uint16),
                         xp.ascontiguousarray(counts.T).ravel().astype(np.uint16))


def blocked_sums(layout: BlockedLayout, offsets: np.ndarray, contributions: np.ndarray) -> np.ndarray:
    """Every vertex's sum of in-neighbour contributions through the layout's two passes, on the host:
    the twin of one iteration of ``blocking_expand`` and ``blocking_accumulate`` before the ranks are
    finished (the GPU adds a bin's runs in another order). ``contributions`` as stored (float32 or
    float64); the sums are float64."""
    m, t_e, tiles, bins = layout.m, layout.tile_edges, layout.tiles, layout.bins
    source = np.repeat(np.arange(layout.n), np.diff(offsets))
    stored = np.empty(m, dtype=contributions.dtype)  # expand: each edge to its place in its tile
    stored[np.arange(m) // t_e * t_e + layout.position] = contributions[source]
    # accumulate: the runs, bin b's of tile t at t*t_e + run_start, read back to the bin of each entry
    lengths = layout.run_length.reshape(bins, tiles).astype(np.int64)
    starts = layout.run_start.reshape(bins, tiles).astype(np.int64) + np.arange(tiles) * t_e
    entries = np.repeat(starts.ravel(), lengths.ravel()) + ranks_within(lengths.ravel())
    bin_of_entry = np.repeat(np.arange(bins), lengths.sum(axis=1))
    targets = bin_of_entry * layout.bin_width + layout.local_target[entries]
    return np.bincount(targets, weights=stored[entries].astype(np.float64), minlength=layout.n)


def blocking_device_bytes(n: int, m: int, bin_width: int = BIN_WIDTH, tile_edges: int | None = None,
                          dtype=np.float32) -> int:
    """Device bytes of a propagation-blocking Static/ND run beyond the graph itself: the layout (positions
    and local targets 2m each, the stored contributions m of ``dtype``, the runs' starts and lengths 4
    bytes per (bin, tile), the tiles' sources 4(T+1)) and the run (1/d 8n, two ranks 16n, two
    contributions of ``dtype``, the loop state 48 bytes).

    Raises
    ------
    ValueError
        As :func:`build_blocking` for the shape.
    """
    tile_edges = tile_edges_for(dtype) if tile_edges is None else tile_edges
    check_shape(n, bin_width, tile_edges)
    size = np.dtype(dtype).itemsize
    tiles, bins = max(1, -(-m // tile_edges)), -(-n // bin_width)
    layout = 4 * m + size * m + 4 * tiles * bins + 4 * (tiles + 1)
    return layout + 8 * n + 16 * n + 2 * size * n + 48
