"""Propagation blocking on the GPU (``kernels/locality.cu``): Static and ND whose per-edge traffic is streamed.

:func:`prepare` builds a graph's layout once on the device (:func:`dynpr.blocking.build_blocking`)
and times it; :func:`pagerank` runs Static or ND on it: per iteration ``blocking_expand`` (a block
per tile of out-edges) and ``blocking_accumulate`` (a block per bin of destinations, which also
finishes them and ends the iteration on the device), replayed from CUDA graphs with one host read
per replay (:class:`dynpr.gpu.locality.LayoutLoop`). Contributions are stored as float32 (the
default) or float64. The host twin of an iteration's sums is :func:`dynpr.blocking.blocked_sums`;
the ranks' twin is the CPU engine with the same contributions; the device memory is
:func:`dynpr.blocking.blocking_device_bytes`; the design and its traffic: docs/locality.md.
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass

import numpy as np

from dynpr.blocking import (BIN_WIDTH, BUILD_CHUNK_EDGES, BlockedLayout, bin_width_for, blocking_device_bytes,
                            build_blocking, tile_edges_for)
from dynpr.gpu import loader
from dynpr.gpu.device_graph import DeviceGraph, to_device
from dynpr.gpu.locality import LayoutLoop, check_layout_call, check_layout_fits, kernels, layout_result
from dynpr.pagerank.options import PageRankOptions, PageRankResult

#: Threads per block of both kernels (``kBlockingThreads``); their shared memory allows one or two per SM.
THREADS = 1024
#: Contributions' dtypes the layout stores.
DTYPES = ("float32", "float64")
#: The accumulate kernel's warps take groups of tiles' runs; at least this many groups each, so that
#: their shares stay even where a bin has few tiles (ncu at rmat-22: warps waited at the block's barrier).
GROUPS_PER_WARP = 4


def warp_group(runs: int) -> int:
    """Runs a warp takes at a time (at most 32, a lane each) of a block's ``runs``: at least
    :data:`GROUPS_PER_WARP` groups per warp of a :data:`THREADS`-thread block."""
    return min(32, max(1, runs // (GROUPS_PER_WARP * THREADS // 32)))


def fixed_point_accumulator(kernel, width: int, what: str) -> int:
    """Bytes of a block's fixed-point accumulator of ``width`` vertices in shared memory, set as
    ``kernel``'s dynamic shared memory.

    Raises
    ------
    ValueError
        When the accumulator and the kernel's own shared memory exceed a block's (``what`` names the
        width in the message).
    """
    shared = width * 8
    limit = loader.require_cupy().cuda.Device().attributes["MaxSharedMemoryPerBlockOptin"]
    if shared + kernel.shared_size_bytes > limit:
        raise ValueError(f"{what} {width}: its accumulator ({shared} bytes) and the kernel's own shared memory "
                         f"exceed a block's {limit} bytes")
    kernel.max_dynamic_shared_size_bytes = shared
    return shared


@dataclass
class DeviceBlocking:
    """A graph's propagation-blocking layout on the device, 1/d, the stored dtype and the build time."""

    layout: BlockedLayout
    offsets: object
    inv_degree: object
    dtype: str
    layout_ms: float


def build_bytes(n: int, m: int, dtype: str, bin_width: int = BIN_WIDTH, tile_edges: int | None = None) -> int:
    """Device bytes :func:`prepare` needs beyond the uploaded graph: the layout and run
    (:func:`dynpr.blocking.blocking_device_bytes`) and the build's scratch: one chunk of
    :data:`dynpr.blocking.BUILD_CHUNK_EDGES` edges at 8 int64 arrays (indices, keys, order and the
    sort's) and the runs' int64 counts, their sum and starts (24 bytes per (bin, tile))."""
    tile_edges = tile_edges or tile_edges_for(dtype)
    runs = -(-m // tile_edges) * -(-n // bin_width)
    return (blocking_device_bytes(n, m, bin_width, tile_edges, dtype) + 8 * 8 * min(m, BUILD_CHUNK_EDGES)
            + 24 * runs)


def prepare(graph, *, dtype: str = "float32", bin_width: int | None = None,
            tile_edges: int | None = None) -> DeviceBlocking:
    """Build ``graph``'s layout on the device (a :class:`dynpr.graph.Graph`, uploaded once, or a
    :class:`DeviceGraph`) for contributions of ``dtype``, tiles of ``tile_edges`` out-edges (default as
    many as a block's shared memory stages, :func:`dynpr.blocking.tile_edges_for`) and bins of
    ``bin_width`` destinations (default
    :func:`dynpr.blocking.bin_width_for` the device's multiprocessors). The build's wall time, device
    synchronized at both ends, is ``layout_ms``.

    Raises
    ------
    ValueError
        For a dtype other than float32 and float64, or a bin width outside (0, 65536].
    MemoryError
        Before allocating, when the build will not fit in the free device memory.
    """
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {DTYPES}, got {dtype!r}")
    cupy = loader.require_cupy()
    g = graph if isinstance(graph, DeviceGraph) else to_device(graph)
    n, m = g.n, int(g.targets.size)
    bin_width = bin_width or bin_width_for(n, cupy.cuda.Device().attributes["MultiProcessorCount"])
    check_layout_fits(build_bytes(n, m, dtype, bin_width, tile_edges), "propagation blocking", n, m)
    warm_up(BlockedLoop, _build)
    return _build(cupy, g, dtype, bin_width, tile_edges)


def _build(cupy, g: DeviceGraph, dtype: str, bin_width: int, tile_edges: int | None = None) -> DeviceBlocking:
    """:func:`prepare` after its checks, timed."""
    cupy.cuda.Device().synchronize()
    t0 = time.perf_counter()
    layout = build_blocking(g.offsets, g.targets, bin_width, tile_edges or tile_edges_for(dtype))
    cupy.cuda.Device().synchronize()
    return DeviceBlocking(layout, g.offsets, g.inv_degree, dtype, (time.perf_counter() - t0) * 1e3)


class BlockedLoop(LayoutLoop):
    """Buffers and launches of one solve on a :class:`DeviceBlocking` (allocated untimed).

    Raises
    ------
    ValueError
        When a bin's accumulator does not fit a block's shared memory.
    """

    def __init__(self, db: DeviceBlocking, options: PageRankOptions):
        lay = db.layout
        super().__init__(lay.n, None, db.inv_degree, options, db.dtype)
        functions = kernels(db.dtype)
        self.db, self.expand, self.accumulate = db, functions["blocking_expand"], functions["blocking_accumulate"]
        self.stored = self.cupy.empty(lay.m, dtype=db.dtype)
        self.expand_shared = lay.tile_edges * self.stored.itemsize
        self.expand.max_dynamic_shared_size_bytes = self.expand_shared
        self.accumulate_shared = fixed_point_accumulator(self.accumulate, lay.bin_width, "bin width")
        self.group = warp_group(lay.tiles)

    def iteration(self, j: int) -> None:
        self.launch_expand(j % 2)
        self.launch_accumulate(j % 2)

    def launch_expand(self, a: int) -> None:
        """Store contributions ``a``'s per edge in the tiles' bin order."""
        lay = self.db.layout
        self.expand((lay.tiles,), (THREADS,), (
            np.int32(lay.n), self.db.offsets, lay.tile_source, lay.position, self.contrib[a], np.int64(lay.m),
            np.int32(lay.tile_edges), self.stored, self.state), shared_mem=self.expand_shared)

    def launch_accumulate(self, a: int) -> None:
        """Sum the stored contributions per bin into ranks and contributions ``1 - a`` from ranks ``a``."""
        lay, o, b = self.db.layout, self.options, 1 - a
        self.accumulate((lay.bins,), (THREADS,), (
            np.int32(lay.n), self.stored, lay.local_target, lay.run_start, lay.run_length, np.int32(lay.tiles),
            np.int32(self.group), np.int32(lay.tile_edges), np.int32(lay.bin_width), self.inv_degree, self.ranks[a], self.ranks[b],
            self.contrib[b], np.float64((1.0 - o.alpha) / lay.n), np.float64(o.alpha), self.delta, self.state,
            np.float64(o.tolerance), np.int32(o.max_iterations)), shared_mem=self.accumulate_shared)

    def phase_ms(self, repeats: int = 5) -> dict:
        """Median milliseconds of each kernel of an iteration, launched one by one from ranks 1/n (CUDA
        events; the loop's state allows ``repeats`` + 1 iterations, a warm-up one first)."""
        cupy, n = self.cupy, self.n
        self.options = PageRankOptions(tolerance=0.0, max_iterations=repeats + 1)
        self.ranks[0][...] = 1.0 / n
        cupy.multiply(self.ranks[0], self.inv_degree, out=self.contrib[0], casting="same_kind")
        times = {"expand_ms": [], "accumulate_ms": []}
        events = [cupy.cuda.Event() for _ in range(3)]
        for j in range(repeats + 1):
            events[0].record()
            self.launch_expand(j % 2)
            events[1].record()
            self.launch_accumulate(j % 2)
            events[2].record()
            events[2].synchronize()
            if j:
                times["expand_ms"].append(cupy.cuda.get_elapsed_time(events[0], events[1]))
                times["accumulate_ms"].append(cupy.cuda.get_elapsed_time(events[1], events[2]))
        return {name: float(np.median(values)) for name, values in times.items()}


def pagerank(approach: str, graph, previous_ranks=None, options: PageRankOptions | None = None, *,
             layout: DeviceBlocking | None = None, **layout_options) -> PageRankResult:
    """Static or ND with propagation blocking (the layout built unless ``layout`` is given; the build
    is not in ``time_ms``). Ranks come back where the graph is, as from :func:`dynpr.gpu.pagerank.update`.

    Raises
    ------
    ValueError
        For an approach other than static or nd, or ND without previous ranks.
    """
    check_layout_call(approach, previous_ranks, "propagation blocking")
    options = options or PageRankOptions()
    layout = layout or prepare(graph, **layout_options)
    n = layout.layout.n
    start = previous_ranks if approach == "nd" else np.full(n, 1.0 / n)
    run = BlockedLoop(layout, options).run(start)
    return layout_result(run, graph, approach, f"blocking_{'c32' if layout.dtype == 'float32' else 'c64'}", options)


@functools.cache
def warm_up(loop, build) -> None:
    """Compile and load a streamed layout's kernels and its builder's CuPy kernels once, untimed: a
    tiny graph built by ``build(cupy, graph, dtype, 4)`` (four vertices per bin or shard) and run a
    few iterations by ``loop(layout, options)``, for both dtypes."""
    from dynpr.gpu.pagerank import tiny_case

    cupy, g = loader.require_cupy(), tiny_case()[0]
    for dtype in DTYPES:
        loop(build(cupy, g, dtype, 4), PageRankOptions(max_iterations=3)).run(np.full(g.n, 1.0 / g.n))
