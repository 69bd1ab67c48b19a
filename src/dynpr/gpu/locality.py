"""CSR segmenting on the GPU (``kernels/locality.cu``): Static and ND over a layout whose gathers hit the L2.

:func:`prepare` builds the segmented layout of a graph once (:func:`dynpr.locality.build_layout`
on the device, after the default's hub-first relabelling unless ``order="given"``) and times it;
:func:`solve` runs Static or ND on it: per iteration and segment a launch that sums the
segment's sub-rows into an accumulator and one that adds up the pieces of its long sub-rows,
then a finishing launch whose last block ends the iteration on the device. Iterations are
replayed from CUDA graphs with one host read per replay, as the default's are
(:mod:`dynpr.gpu.iterations`), by :class:`LayoutLoop`, which propagation blocking
(:mod:`dynpr.gpu.blocking`) shares. The host twin is :func:`dynpr.locality.static_segmented`;
the device memory is :func:`dynpr.locality.layout_device_bytes`; the designs and their traffic:
docs/locality.md.
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass

import numpy as np

from dynpr.arrays import on_device, to_host
from dynpr.backend import device_name
from dynpr.designs import BLOCK, ITERATION_STATE, STATIC_APPROACHES
from dynpr.gpu import loader
from dynpr.gpu.classes import Relabel
from dynpr.gpu.device_graph import DeviceGraph, EngineRun, grid_for, phase_times, to_device
from dynpr.gpu.iterations import GRAPH_ITERATIONS, HOLD_US
from dynpr.gpu.memory import DEFAULT_RESERVE_BYTES, free_device_bytes
from dynpr.gpu.resident import upload
from dynpr.hostmem import GIB
from dynpr.locality import (DEFAULT_L2_SHARE, ORDERS, PIECE_EDGES, SHORT_EDGES, SegmentLayout, build_layout,
                            layout_device_bytes, num_segments, segment_width)
from dynpr.pagerank.options import PageRankOptions, PageRankResult, check_converged

KERNELS = ("segment_gather", "segment_long_rows", "segmented_finish", "blocking_expand", "blocking_accumulate",
           "shards_iterate")
WARPS = BLOCK // 32


def kernels(contribution: str = "float64"):
    """The kernels of ``kernels/locality.cu``, storing contributions as ``contribution``."""
    return loader.module("locality.cu", (), KERNELS, contribution=contribution)


@dataclass(frozen=True)
class SegmentLaunch:
    """One segment's launches: its sub-rows, long sub-rows and pieces (first, count) and grid sizes."""

    first_row: int
    row_count: int
    first_long: int
    long_count: int
    first_piece: int
    piece_count: int

    @property
    def short_blocks(self) -> int:
        return -(-self.row_count // BLOCK)

    @property
    def blocks(self) -> int:
        return self.short_blocks + -(-self.piece_count // WARPS)


@dataclass
class DeviceLayout:
    """A graph's segmented layout on the device, what a solve needs besides it, and its build time.

    ``new_id`` renames the graph's ids into the layout's (None: ``order="given"``), ``inv_degree``
    is 1/d in the layout's ids, ``launches`` one :class:`SegmentLaunch` per segment.
    """

    layout: SegmentLayout
    order: str
    new_id: object
    inv_degree: object
    launches: tuple
    layout_ms: float

    @property
    def segments(self) -> int:
        return self.layout.segments

    @property
    def sub_rows(self) -> int:
        return int(self.layout.rows.size)


def _launches(layout: SegmentLayout) -> tuple:
    """Every segment's :class:`SegmentLaunch`, from the layout's bounds (read back once)."""
    rows, longs = layout.segment_rows.get(), layout.segment_long.get()
    pieces = layout.piece_first[layout.segment_long].get()
    return tuple(SegmentLaunch(int(rows[s]), int(rows[s + 1] - rows[s]), int(longs[s]), int(longs[s + 1] - longs[s]),
                               int(pieces[s]), int(pieces[s + 1] - pieces[s])) for s in range(layout.segments))


def check_layout_fits(needed: int, design: str, n: int, m: int, detail: str = "") -> None:
    """Raise MemoryError, before a layout's build allocates, when its ``needed`` bytes and the reserve
    exceed the free device memory; the message names the ``design`` and the graph (and ``detail``)."""
    free = free_device_bytes()
    if needed + DEFAULT_RESERVE_BYTES > free:
        raise MemoryError(f"{design} needs {needed / GIB:.2f} GiB on the GPU, {free / GIB:.2f} GiB free ({n} vertices, "
                          f"{m} edges{detail})")


def build_bytes(n: int, m: int, segments: int, order: str, short_edges: int = SHORT_EDGES) -> int:
    """Device bytes :func:`prepare` needs beyond the uploaded graph: the layout and run
    (:func:`dynpr.locality.layout_device_bytes` at its bound), the relabelled in-CSR and the
    relabelling's scratch while it is built (``order="hub"``: 8(n+1) + 4m + 36n), and the
    segment index of every edge plus one segment's positions and rows (4m + 17m at most)."""
    relabel = 8 * (n + 1) + 4 * m + 36 * n if order == "hub" else 0
    return layout_device_bytes(n, m, segments, short_edges=short_edges) + relabel + 21 * m


def prepare(graph, *, l2_share: float = DEFAULT_L2_SHARE, width: int | None = None, order: str = "hub",
            l2_bytes: int | None = None, short_edges: int = SHORT_EDGES) -> DeviceLayout:
    """Build ``graph``'s segmented layout on the device (a :class:`dynpr.graph.Graph`, uploaded once,
    or a :class:`DeviceGraph`), ``width`` source ids per segment, unless given
    :func:`dynpr.locality.segment_width` of ``l2_share`` of the device's L2 (or of ``l2_bytes``);
    sub-rows of more than ``short_edges`` edges are summed by warps in pieces.
    The wall time of the build, device synchronized at both ends, is ``layout_ms``.

    Raises
    ------
    ValueError
        For an unknown order.
    MemoryError
        Before allocating, when the build will not fit in the free device memory.
    """
    if order not in ORDERS:
        raise ValueError(f"order must be one of {ORDERS}, got {order!r}")
    cupy = loader.require_cupy()
    g = graph if isinstance(graph, DeviceGraph) else to_device(graph)
    n, m = g.n, int(g.sources.size)
    if width is None:
        width = segment_width(n, l2_bytes or cupy.cuda.Device().attributes["L2CacheSize"], l2_share)
    check_layout_fits(build_bytes(n, m, num_segments(n, width), order, short_edges), "the segmented layout", n, m,
                      f", {num_segments(n, width)} segments")
    _warm_up()
    return _build(cupy, g, width, order, short_edges)


def _build(cupy, g: DeviceGraph, width: int, order: str, short_edges: int = SHORT_EDGES) -> DeviceLayout:
    """:func:`prepare` after its checks, timed."""
    n = g.n
    cupy.cuda.Device().synchronize()
    t0 = time.perf_counter()
    new_id, in_offsets, sources, inv_degree = None, g.in_offsets, g.sources, g.inv_degree
    if order == "hub":
        relabel = Relabel(loader.pagerank_kernels(), cupy, g, g.inv_degree)  # its start ranks: any n doubles
        relabel.prepare(cupy.empty(n, dtype=cupy.float64))
        new_id, in_offsets, sources = relabel.new_id, relabel.graph.in_offsets, relabel.graph.sources
        inv_degree = relabel.graph.inv_degree
    layout = build_layout(in_offsets, sources, width, short_edges)
    del in_offsets, sources
    if order == "hub":
        del relabel  # the relabelled in-CSR: the layout holds its edges now
    launches = _launches(layout)
    cupy.cuda.Device().synchronize()
    return DeviceLayout(layout, order, new_id, inv_degree, launches, (time.perf_counter() - t0) * 1e3)


class LayoutLoop:
    """What a solve on a prepared layout keeps besides the layout: ranks and stored contributions (two
    of each, contributions as ``contribution``), the largest change and the loop state; the subclass
    launches an iteration (:meth:`iteration`). ``new_id`` renames the graph's ids into the layout's
    (None: the same ids); ``inv_degree`` is 1/d in the layout's ids."""

    def __init__(self, n: int, new_id, inv_degree, options: PageRankOptions, contribution: str = "float64"):
        cupy = loader.require_cupy()
        self.cupy, self.n, self.new_id, self.inv_degree, self.options = cupy, n, new_id, inv_degree, options
        self.ranks = [cupy.empty(n, dtype=cupy.float64) for _ in range(2)]
        self.contrib = [cupy.empty(n, dtype=contribution) for _ in range(2)]
        self.delta = cupy.zeros(1, dtype=cupy.float64)
        self.state = cupy.zeros(ITERATION_STATE.words, dtype=cupy.int32)  # kernels/layouts.cuh, IterationState
        self.done = self.state[ITERATION_STATE.span("done")]

    def iteration(self, j: int) -> None:
        """Launch iteration j: it reads buffer j % 2 and writes the other one."""
        raise NotImplementedError

    def start(self) -> None:
        """Launch what the first iteration needs besides contributions 0 (nothing unless the layout
        keeps its own copies of them)."""

    def run(self, start) -> EngineRun:
        """Solve from ``start`` (ranks in the graph's ids, host or device); ranks come back in them."""
        cupy, new_id = self.cupy, self.new_id
        start = upload(start, np.float64)
        cupy.cuda.Device().synchronize()  # allocations ran on the legacy stream (see IterationLoop.run)
        stream = cupy.cuda.Stream(non_blocking=True)
        with stream:
            stream.begin_capture()
            for j in range(GRAPH_ITERATIONS):
                self.iteration(j)
            replay = stream.end_capture()
            events = [cupy.cuda.Event() for _ in range(4)]
            loader.pagerank_kernels()["hold"]((1,), (1,), (np.int64(HOLD_US * 1000),))
            events[0].record()
            if new_id is None:
                self.ranks[0][...] = start
            else:
                self.ranks[0][new_id] = start
            cupy.multiply(self.ranks[0], self.inv_degree, out=self.contrib[0], casting="same_kind")
            self.start()
            events[1].record()
            events[2] = events[1]  # no marking
            while True:
                replay.launch(stream)
                if int(self.done[0]):
                    break
            state = self.state.get()
            iterations = int(state[ITERATION_STATE.index("iterations")])
            final = self.ranks[iterations % 2]
            final = final[new_id] if new_id is not None else final.copy()
            events[3].record()
            events[3].synchronize()
        return EngineRun(final, iterations, bool(state[ITERATION_STATE.index("converged")]), phase_times(cupy, events),
                         self.n)


class SegmentedLoop(LayoutLoop):
    """Buffers and launches of one solve on a :class:`DeviceLayout` (allocated untimed)."""

    def __init__(self, dl: DeviceLayout, options: PageRankOptions):
        super().__init__(dl.layout.n, dl.new_id, dl.inv_degree, options)
        self.dl, self.kernels = dl, kernels()
        self.acc = self.cupy.zeros(dl.layout.n, dtype=self.cupy.float64)
        self.partial = self.cupy.zeros(max(1, int(dl.layout.piece_row.size)), dtype=self.cupy.float64)

    def iteration(self, j: int) -> None:
        a, b = j % 2, 1 - j % 2
        k, lay, o = self.kernels, self.dl.layout, self.options
        for s in self.dl.launches:
            if s.blocks:
                k["segment_gather"]((s.blocks,), (BLOCK,), (
                    lay.rows, lay.row_offsets, lay.sources, lay.long_rows, lay.piece_first, lay.piece_row,
                    self.contrib[a], np.int64(s.first_row), np.int64(s.row_count), np.int64(s.first_piece),
                    np.int64(s.piece_count), np.int64(s.short_blocks), np.int64(lay.short_edges),
                    np.int64(PIECE_EDGES), self.acc, self.partial, self.state))
            if s.long_count:
                k["segment_long_rows"](grid_for(s.long_count), (BLOCK,), (
                    lay.rows, lay.long_rows, lay.piece_first, self.partial, np.int64(s.first_long),
                    np.int64(s.long_count), self.acc, self.state))
        n = lay.n
        k["segmented_finish"](grid_for(n), (BLOCK,), (
            np.int32(n), self.acc, self.inv_degree, self.ranks[a], self.ranks[b], self.contrib[b],
            np.float64((1.0 - o.alpha) / n), np.float64(o.alpha), self.delta, self.state, np.float64(o.tolerance),
            np.int32(o.max_iterations)))


def solve(dl: DeviceLayout, options: PageRankOptions | None = None, start=None) -> EngineRun:
    """Static from ``start`` (default 1/n; ND passes the previous ranks) on a prepared layout.
    Event-timed phases: ``partition_ms`` maps the starting ranks into the layout's ids and writes
    their contributions, ``compute_ms`` the iterations and mapping the ranks back."""
    options = options or PageRankOptions()
    n = dl.layout.n
    return SegmentedLoop(dl, options).run(np.full(n, 1.0 / n) if start is None else start)


def check_layout_call(approach: str, previous_ranks, design: str) -> None:
    """Raise ValueError unless ``approach`` is one a layout's solve computes (Static or ND) and ND has
    previous ranks; ``design`` names the layout in the message."""
    if approach not in STATIC_APPROACHES:
        raise ValueError(f"{design} computes {STATIC_APPROACHES}, not {approach!r}")
    if approach == "nd" and previous_ranks is None:
        raise ValueError("nd needs previous_ranks")


def layout_result(run: EngineRun, graph, approach: str, variant: str, options: PageRankOptions) -> PageRankResult:
    """A solve on a layout as :func:`dynpr.gpu.pagerank.update` returns one: the ranks where the graph
    is, ``time_ms`` the sum of the phases; checked for convergence (:func:`check_converged`)."""
    result = PageRankResult(ranks=run.ranks if on_device(graph.offsets) else to_host(run.ranks),
                            iterations=run.iterations, time_ms=sum(run.phases.values()), approach=approach,
                            backend="gpu", device=device_name("gpu"), affected=run.affected, phases=run.phases,
                            variant=variant, converged=run.converged)
    check_converged(result, options)
    return result


def pagerank(approach: str, graph, previous_ranks=None, options: PageRankOptions | None = None, *,
             layout: DeviceLayout | None = None, **layout_options) -> PageRankResult:
    """Static or ND with the segmented layout (built unless ``layout`` is given; the build is not
    in ``time_ms``). Ranks come back where the graph is, as from :func:`dynpr.gpu.pagerank.update`.

    Raises
    ------
    ValueError
        For an approach other than static or nd, or ND without previous ranks.
    """
    check_layout_call(approach, previous_ranks, "the segmented layout")
    options = options or PageRankOptions()
    layout = layout or prepare(graph, **layout_options)
    run = solve(layout, options, previous_ranks if approach == "nd" else None)
    return layout_result(run, graph, approach, "segmented", options)


@functools.cache
def _warm_up() -> None:
    """Compile and load the kernels, the builder's CuPy kernels and the solve's scatter and gather
    once, untimed (a tiny graph, two segments, both orders); every solve runs on a prepared layout,
    so after this."""
    from dynpr.gpu.pagerank import tiny_case

    cupy, g = loader.require_cupy(), tiny_case()[0]
    for order in ORDERS:
        dl = _build(cupy, g, 4, order)
        SegmentedLoop(dl, PageRankOptions(max_iterations=3)).run(np.full(g.n, 1.0 / g.n))
