"""G-Shards on the GPU (``kernels/locality.cu``, ``shards_iterate``): CuSha's layout for Static and ND.

:func:`prepare` builds a graph's shards once on the device (:func:`dynpr.shards.build_shards`) and
times it; :func:`pagerank` runs Static or ND on them: one launch per iteration, a block per shard
that adds up its entries, finishes its vertices and writes their contributions into its windows,
the last block ending the iteration on the device, replayed from CUDA graphs with one host read per
replay (:class:`dynpr.gpu.locality.LayoutLoop`). Before the first iteration the same kernel writes
the starting contributions into the windows. Contributions are stored as float32 (the default) or
float64, twice (read one copy, write the other). The host twin of an iteration's sums is
:func:`dynpr.shards.sharded_sums`; the ranks' twin is the CPU engine with the same contributions;
the device memory is :func:`dynpr.shards.sharded_device_bytes`; the design: docs/locality.md.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from dynpr.blocking import bin_width_for
from dynpr.gpu import loader
from dynpr.gpu.blocking import DTYPES, THREADS, fixed_point_accumulator, warp_group, warm_up
from dynpr.gpu.device_graph import DeviceGraph, to_device
from dynpr.gpu.locality import LayoutLoop, check_layout_call, check_layout_fits, kernels, layout_result
from dynpr.pagerank.options import PageRankOptions, PageRankResult
from dynpr.shards import BUILD_CHUNK_EDGES, ShardedLayout, build_shards, sharded_device_bytes


@dataclass
class DeviceShards:
    """A graph's G-Shards on the device, 1/d, the stored dtype and the build time."""

    layout: ShardedLayout
    inv_degree: object
    dtype: str
    layout_ms: float


def build_bytes(n: int, m: int, dtype: str, width: int) -> int:
    """Device bytes :func:`prepare` needs beyond the uploaded graph: the layout and run
    (:func:`dynpr.shards.sharded_device_bytes`) and the build's scratch: one chunk of
    :data:`dynpr.blocking.BUILD_CHUNK_EDGES` edges at 12 int64 arrays (sources, windows, the sort and
    its order, the places) and 8 int64 arrays per window (counts, their sums, starts and places)."""
    shards = -(-n // width)
    return sharded_device_bytes(n, m, width, dtype) + 12 * 8 * min(m, BUILD_CHUNK_EDGES) + 64 * shards * shards


def prepare(graph, *, dtype: str = "float32", width: int | None = None) -> DeviceShards:
    """Build ``graph``'s shards on the device (a :class:`dynpr.graph.Graph`, uploaded once, or a
    :class:`DeviceGraph`) for contributions of ``dtype`` and shards of ``width`` vertices (default
    as propagation blocking's bins, :func:`dynpr.blocking.bin_width_for` the device's
    multiprocessors). The build's wall time, device synchronized at both ends, is ``layout_ms``.

    Raises
    ------
    ValueError
        For a dtype other than float32 and float64, or a width outside (0, 65536].
    MemoryError
        Before allocating, when the build will not fit in the free device memory.
    """
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {DTYPES}, got {dtype!r}")
    cupy = loader.require_cupy()
    g = graph if isinstance(graph, DeviceGraph) else to_device(graph)
    n, m = g.n, int(g.targets.size)
    width = width or bin_width_for(n, cupy.cuda.Device().attributes["MultiProcessorCount"])
    check_layout_fits(build_bytes(n, m, dtype, width), "G-Shards", n, m)
    warm_up(ShardedLoop, _build)
    return _build(cupy, g, dtype, width)


def _build(cupy, g: DeviceGraph, dtype: str, width: int) -> DeviceShards:
    """:func:`prepare` after its checks, timed."""
    cupy.cuda.Device().synchronize()
    t0 = time.perf_counter()
    layout = build_shards(g.offsets, g.targets, width)
    cupy.cuda.Device().synchronize()
    return DeviceShards(layout, g.inv_degree, dtype, (time.perf_counter() - t0) * 1e3)


class ShardedLoop(LayoutLoop):
    """Buffers and launches of one solve on :class:`DeviceShards` (allocated untimed).

    Raises
    ------
    ValueError
        When a shard's accumulator does not fit a block's shared memory.
    """

    def __init__(self, ds: DeviceShards, options: PageRankOptions):
        lay = ds.layout
        super().__init__(lay.n, None, ds.inv_degree, options, ds.dtype)
        self.ds, self.kernel = ds, kernels(ds.dtype)["shards_iterate"]
        self.stored = [self.cupy.empty(lay.m, dtype=ds.dtype) for _ in range(2)]
        self.shared = fixed_point_accumulator(self.kernel, lay.width, "shard width")
        self.group = warp_group(lay.shards)

    def start(self) -> None:
        """Write contributions 0 into the windows of stored copy 0."""
        self.launch(0, fill=True)

    def iteration(self, j: int) -> None:
        self.launch(j % 2)

    def launch(self, a: int, fill: bool = False) -> None:
        """Ranks and contributions ``1 - a`` from ranks ``a`` and stored copy ``a``, and the windows of copy
        ``1 - a`` (``fill``: only the windows of copy ``a``, from contributions ``a``)."""
        lay, o, b = self.ds.layout, self.options, 1 - a
        self.kernel((lay.shards,), (THREADS,), (
            np.int32(lay.n), np.int32(lay.width), np.int32(lay.shards), lay.shard_start, lay.local_target,
            self.stored[a], self.stored[a if fill else b], lay.window_source, lay.window_first, lay.window_cw,
            lay.window_length, np.int32(self.group), self.inv_degree, self.ranks[a], self.ranks[b],
            self.contrib[a if fill else b], np.float64((1.0 - o.alpha) / lay.n), np.float64(o.alpha), self.delta,
            self.state, np.float64(o.tolerance), np.int32(o.max_iterations), np.int32(fill)), shared_mem=self.shared)


def pagerank(approach: str, graph, previous_ranks=None, options: PageRankOptions | None = None, *,
             layout: DeviceShards | None = None, **layout_options) -> PageRankResult:
    """Static or ND on G-Shards (built unless ``layout`` is given; the build is not in ``time_ms``).
    Ranks come back where the graph is, as from :func:`dynpr.gpu.pagerank.update`.

    Raises
    ------
    ValueError
        For an approach other than static or nd, or ND without previous ranks.
    """
    check_layout_call(approach, previous_ranks, "G-Shards")
    options = options or PageRankOptions()
    layout = layout or prepare(graph, **layout_options)
    n = layout.layout.n
    start = previous_ranks if approach == "nd" else np.full(n, 1.0 / n)
    run = ShardedLoop(layout, options).run(start)
    return layout_result(run, graph, approach, f"shards_{'c32' if layout.dtype == 'float32' else 'c64'}", options)

