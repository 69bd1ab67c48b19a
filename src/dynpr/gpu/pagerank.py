"""GPU engine for Static, ND, DT, DF and DF-P PageRank (seed 003, Alg. 1-5).

Host code drives the kernels of ``kernels/pagerank.cu`` through CuPy. The
semantics are those of the CPU twin (``dynpr.pagerank.cpu``): synchronous
pull iterations over R and Rnew, L-infinity convergence, DF/DF-P marking and
expansion over the new graph, DT's affected set by BFS in the old and the new
graph.

Timing uses CUDA events on the current stream: ``partition_ms`` (degree
partitions), ``mark_ms`` (initial marking and expansion, or DT's BFS) and
``compute_ms`` (iterations, convergence detection and per-iteration
expansion). Uploads, allocations and compilation happen before the first
event, and the first call in a process runs a small warm-up so that every
kernel (ours and CuPy's) is compiled and loaded before anything is timed.
Convergence: the rank kernels fold each block's largest change into one
double per iteration with an integer ``atomicMax`` on its bit pattern (exact
for non-negative doubles, see ``kernels/common.cuh``), and the host reads that
one value back per iteration.
"""

from __future__ import annotations

import functools
import weakref
from dataclasses import dataclass

import numpy as np

from dynpr import APPROACHES
from dynpr.gpu import loader
from dynpr.pagerank.options import PageRankOptions, PageRankResult

BLOCK = 256  # must equal dynpr::kBlock in kernels/common.cuh
# (AFFECTED, FRONTIER, PRUNE) template flags of the rank kernels per approach.
MODES = {
    "static": loader.RANK_MODES[0],
    "nd": loader.RANK_MODES[0],
    "dt": loader.RANK_MODES[1],
    "df": loader.RANK_MODES[2],
    "dfp": loader.RANK_MODES[3],
}


def _grid(count: int) -> tuple[int]:
    return (max(1, -(-count // BLOCK)),)


@dataclass(eq=False)
class DeviceGraph:
    """A :class:`dynpr.graph.Graph` on the device, plus ``1/out-degree`` (float64)."""

    n: int
    offsets: object
    targets: object
    in_offsets: object
    sources: object
    inv_degree: object


_UPLOADED: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def to_device(graph) -> DeviceGraph:
    """Copy a graph to the device once; later calls with the same object reuse it."""
    cached = _UPLOADED.get(graph)
    if cached is None:
        cupy = loader.require_cupy()
        offsets = cupy.asarray(graph.offsets)
        cached = DeviceGraph(
            graph.num_vertices,
            offsets,
            cupy.asarray(graph.targets),
            cupy.asarray(graph.in_offsets),
            cupy.asarray(graph.sources),
            1.0 / cupy.diff(offsets),
        )
        _UPLOADED[graph] = cached
    return cached


class Partition:
    """Vertex ids split by degree, low degrees first (Alg. 4): ``ids[:num_low]``
    take the thread-per-vertex kernel, ``ids[num_low:]`` the block-per-vertex one."""

    def __init__(self, cupy, n: int):
        self.flag = cupy.empty(n, dtype=cupy.int32)
        self.scan = cupy.empty(n, dtype=cupy.int32)
        self.ids = cupy.empty(n, dtype=cupy.int32)
        self.num_low = 0

    def compute(self, kernels, cupy, offsets, n: int, degree_switch: int) -> None:
        """Flag, scan and scatter; reads the low count back to size later launches."""
        args = (offsets, np.int32(n), np.int32(degree_switch))
        kernels["degree_flag"](_grid(n), (BLOCK,), args + (self.flag,))
        cupy.cumsum(self.flag, out=self.scan)
        kernels["partition_scatter"](_grid(n), (BLOCK,), args + (self.scan, self.ids))
        self.num_low = int(self.scan[-1])


class PartitionedRanks:
    """Seed 003's rank step: thread-per-vertex for in-degree <= switch,
    block-per-vertex above, over a partition (``listed``) or selectively
    inside one launch pair over all vertices (partition level ``none``)."""

    def __init__(self, kernels, cupy, graph: DeviceGraph, mode, options: PageRankOptions):
        self.kernels, self.cupy, self.g, self.mode = kernels, cupy, graph, mode
        self.options = options
        self.listed = options.partition in ("in", "in_out")
        self.partition = Partition(cupy, graph.n) if self.listed else None
        self.names = {kind: loader.rank_kernel_name(kind, self.listed, mode) for kind in ("thread", "block")}

    def prepare(self) -> None:
        """Partition by in-degree (timed as ``partition_ms``)."""
        if self.listed:
            g = self.g
            self.partition.compute(self.kernels, self.cupy, g.in_offsets, g.n, self.options.degree_switch)

    def step(self, R, Rnew, dv, dn, delta_slot) -> None:
        """One synchronous iteration R -> Rnew; the L-infinity change goes to ``delta_slot``."""
        g, o = self.g, self.options
        tail = (g.in_offsets, g.sources, g.inv_degree, R, Rnew, dv, dn, np.int32(o.degree_switch),
                np.float64((1.0 - o.alpha) / g.n), np.float64(o.alpha),
                np.float64(o.frontier_tolerance), np.float64(o.prune_tolerance), delta_slot)
        if self.listed:
            low, ids = self.partition.num_low, self.partition.ids
            high = g.n - low
            if low:
                self.kernels[self.names["thread"]](_grid(low), (BLOCK,), (ids, np.int32(low)) + tail)
            if high:
                self.kernels[self.names["block"]]((high,), (BLOCK,), (ids[low:], np.int32(high)) + tail)
        else:
            # Unlisted kernels ignore the id array; any int32 array fills the slot.
            n = np.int32(g.n)
            self.kernels[self.names["thread"]](_grid(g.n), (BLOCK,), (g.sources, n) + tail)
            self.kernels[self.names["block"]]((g.n,), (BLOCK,), (g.sources, n) + tail)


# One rank-step class per entry of dynpr.gpu.VARIANTS (issue 7 adds more).
RANK_STEPS = {"partitioned": PartitionedRanks}


class Expansion:
    """dv |= out-neighbours of every vertex with dn (Alg. 5, expandAffected),
    by out-degree partition (level ``in_out``) or selectively (``none``, ``in``)."""

    def __init__(self, kernels, cupy, graph: DeviceGraph, options: PageRankOptions):
        self.kernels, self.cupy, self.g, self.options = kernels, cupy, graph, options
        self.listed = options.partition == "in_out"
        self.partition = Partition(cupy, graph.n) if self.listed else None

    def prepare(self) -> None:
        """Partition by out-degree (timed as ``partition_ms``)."""
        if self.listed:
            g = self.g
            self.partition.compute(self.kernels, self.cupy, g.offsets, g.n, self.options.degree_switch)

    def expand(self, dn, dv, ever) -> None:
        g = self.g
        tail = (g.offsets, g.targets, np.int32(self.options.degree_switch), dn, dv, ever)
        thread = loader.expand_kernel_name("thread", self.listed)
        block = loader.expand_kernel_name("block", self.listed)
        if self.listed:
            low, ids = self.partition.num_low, self.partition.ids
            high = g.n - low
            if low:
                self.kernels[thread](_grid(low), (BLOCK,), (ids, np.int32(low)) + tail)
            if high:
                self.kernels[block]((high,), (BLOCK,), (ids[low:], np.int32(high)) + tail)
        else:
            n = np.int32(g.n)
            self.kernels[thread](_grid(g.n), (BLOCK,), (g.targets, n) + tail)
            self.kernels[block]((g.n,), (BLOCK,), (g.targets, n) + tail)


def _reachable(kernels, cupy, graph: DeviceGraph, del_src, ins_src, frontier, nxt, visited, found) -> None:
    """Multi-source BFS from every batch source; ``visited`` ends as the reachable set."""
    nd, ni = len(del_src), len(ins_src)
    frontier.fill(0)
    visited.fill(0)
    kernels["bfs_seed"](_grid(nd + ni), (BLOCK,), (del_src, np.int32(nd), ins_src, np.int32(ni), frontier, visited))
    while True:
        nxt.fill(0)
        found.fill(0)
        kernels["bfs_step"](_grid(graph.n), (BLOCK,),
                            (np.int32(graph.n), graph.offsets, graph.targets, frontier, nxt, visited, found))
        if not int(found[0]):
            return
        frontier, nxt = nxt, frontier


def _run(approach, g: DeviceGraph, g_old: DeviceGraph | None, batch, start_ranks, options: PageRankOptions):
    """Allocate, then time partition / marking / iterations with CUDA events."""
    cupy = loader.require_cupy()
    kernels = loader.pagerank_kernels()
    n = g.n
    affected_mode, frontier_mode, _ = MODES[approach]
    variant = options.variant or "partitioned"
    if variant not in RANK_STEPS:
        raise ValueError(f"unknown GPU variant {options.variant!r}; known: {sorted(RANK_STEPS)}")
    ranks_step = RANK_STEPS[variant](kernels, cupy, g, MODES[approach], options)
    expansion = Expansion(kernels, cupy, g, options) if frontier_mode else None

    R = cupy.asarray(start_ranks, dtype=cupy.float64)
    Rnew = R.copy()
    dv = cupy.zeros(n, dtype=cupy.uint8)
    dn = cupy.zeros(n, dtype=cupy.uint8)
    ever = cupy.zeros(n, dtype=cupy.uint8)
    delta = cupy.zeros(options.max_iterations, dtype=cupy.float64)  # one slot per iteration: no reset needed
    if affected_mode:
        del_src, del_dst = cupy.asarray(batch.del_src), cupy.asarray(batch.del_dst)
        ins_src = cupy.asarray(batch.ins_src)
    if approach == "dt":
        bfs = [cupy.zeros(n, dtype=cupy.uint8) for _ in range(3)] + [cupy.zeros(1, dtype=cupy.int32)]
    events = [cupy.cuda.Event() for _ in range(4)]

    events[0].record()
    ranks_step.prepare()
    if expansion:
        expansion.prepare()
    events[1].record()
    if approach == "dt":
        for graph in (g_old, g):
            _reachable(kernels, cupy, graph, del_src, ins_src, *bfs)
            cupy.bitwise_or(dv, bfs[2], out=dv)
    elif frontier_mode:
        nd, ni = batch.deletions, batch.insertions
        kernels["mark_initial"](_grid(nd + ni), (BLOCK,),
                                (del_src, del_dst, np.int32(nd), ins_src, np.int32(ni), dv, dn, ever))
        expansion.expand(dn, dv, ever)
    events[2].record()
    iterations = 0
    while True:
        if frontier_mode:
            dn.fill(0)
        ranks_step.step(R, Rnew, dv, dn, delta[iterations:iterations + 1])
        change = float(delta[iterations])
        iterations += 1
        R, Rnew = Rnew, R
        if change <= options.tolerance or iterations >= options.max_iterations:
            break
        if frontier_mode:
            expansion.expand(dn, dv, ever)
    events[3].record()
    events[3].synchronize()

    phases = {
        "partition_ms": cupy.cuda.get_elapsed_time(events[0], events[1]),
        "mark_ms": cupy.cuda.get_elapsed_time(events[1], events[2]),
        "compute_ms": cupy.cuda.get_elapsed_time(events[2], events[3]),
    }
    if approach == "dt":
        affected = int(cupy.count_nonzero(dv))
    elif frontier_mode:
        affected = int(cupy.count_nonzero(ever))
    else:
        affected = n
    return cupy.asnumpy(R), iterations, phases, affected


@functools.cache
def _warm_up() -> None:
    """Run every approach and partition level once on a tiny graph, so that
    compilation and module loading (ours and CuPy's own kernels) stay out of
    every timed call."""
    from dynpr.batches import Batch
    from dynpr.graph import Graph

    src = np.array([0, 1, 2, 3, 4, 5, 1, 2, 3], dtype=np.int32)
    dst = np.array([1, 2, 3, 4, 5, 0, 0, 0, 0], dtype=np.int32)
    old = Graph.from_edges(src, dst)
    new = Graph.from_edges(src[1:], dst[1:], old.num_vertices)
    batch = Batch(src[:1], dst[:1], np.empty(0, np.int32), np.empty(0, np.int32))
    start = np.full(old.num_vertices, 1.0 / old.num_vertices)
    g, g_old = to_device(new), to_device(old)
    for partition in ("none", "in", "in_out"):
        # degree_switch 1 sends the hub (vertex 0) to the block kernels.
        options = PageRankOptions(partition=partition, degree_switch=1, max_iterations=3)
        for approach in APPROACHES:
            _run(approach, g, g_old, batch, start, options)


def update(approach: str, old_graph, graph, batch, previous_ranks, options: PageRankOptions | None = None,
           *, initial=None) -> PageRankResult:
    """Run one approach on the GPU; the same contract as ``dynpr.pagerank.update``.

    Parameters
    ----------
    approach : str
        One of ``static nd dt df dfp``.
    old_graph, graph : dynpr.graph.Graph
        The graph before and after ``batch`` (``old_graph`` is used by DT only).
    batch : dynpr.batches.Batch
        Deleted and inserted edges (ignored by Static and ND).
    previous_ranks : numpy.ndarray
        Converged ranks of ``old_graph`` (ignored by Static).
    options : PageRankOptions, optional
    initial : numpy.ndarray, optional
        Static's starting ranks instead of 1/n.

    Returns
    -------
    PageRankResult
        Host ranks, iterations, event-timed milliseconds and phases.

    Raises
    ------
    ValueError
        For an unknown approach or variant, or ranks of the wrong length.
    RuntimeError
        If CuPy or a CUDA device is missing.
    """
    if approach not in APPROACHES:
        raise ValueError(f"approach must be one of {APPROACHES}, got {approach!r}")
    options = options or PageRankOptions()
    n = graph.num_vertices
    if approach == "static":
        start = np.full(n, 1.0 / n) if initial is None else np.asarray(initial, dtype=np.float64)
    else:
        start = np.asarray(previous_ranks, dtype=np.float64)
    if start.shape != (n,):
        raise ValueError(f"starting ranks have shape {start.shape}, the graph has {n} vertices")
    if approach == "dt" and old_graph.num_vertices != n:
        raise ValueError(f"old graph has {old_graph.num_vertices} vertices, new graph {n}")
    _warm_up()
    g = to_device(graph)
    g_old = to_device(old_graph) if approach == "dt" else None
    ranks, iterations, phases, affected = _run(approach, g, g_old, batch, start, options)
    from dynpr.backend import device_name

    return PageRankResult(
        ranks=ranks,
        iterations=iterations,
        time_ms=sum(phases.values()),
        approach=approach,
        backend="gpu",
        device=device_name("gpu"),
        affected=affected,
        phases=phases,
    )
