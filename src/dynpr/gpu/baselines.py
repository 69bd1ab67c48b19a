"""The designs the default engine is measured against (every variant but ``classes`` and ``classes_sync``).

Declared in :data:`dynpr.designs.VARIANTS` (``production=False``) and run
through :func:`run`, which :func:`dynpr.gpu.pagerank._update` calls for them;
the benchmark (``dynpr.evaluation.bench``) compares them with the default. Kernels:
``kernels/baselines.cu``.

- ``partitioned`` is the paper's design (:func:`run_partitioned`): in-degree
  <= ``degree_switch`` takes a thread per vertex, above it a block. At
  partition levels ``in``/``in_out`` a flag/scan/scatter partition lists the
  two groups first (``in_out`` also partitions by out-degree for DF/DF-P's
  expansion); at ``none`` both kernels run over all vertices and each skips
  those of the other group. The host reads the change back every iteration
  and BFS level. :class:`Expansion` (Alg. 5's expandAffected) also serves the
  unfused class designs.
- ``classes_unfused`` and ``partitioned_prc`` (the default's classes, or the
  paper's two, with precomputed contributions), ``pull_thread``/``pull_warp``/
  ``pull_block`` (one class, plain gathers) and ``push_atomic``
  (:class:`PushRanks`, the naive push of *PageRank Algorithm: Complete CUDA
  Implementation*) run one launch per
  class in :class:`dynpr.gpu.iterations.IterationLoop` (:func:`run_unfused`).
- ``cusparse`` (:func:`run_cusparse`) is the cuSPARSE power iteration.
- ``hybrid_thread_warp``, ``pull_tiled`` and ``pull_float32``
  (:class:`SingleLaunchRanks`, ``kernels/static_variants.cu``) are versions 6, 5
  and 4 of *PageRank Algorithm: Complete CUDA Implementation*: a thread per
  vertex below in-degree 32 and a warp from 32 on, in one launch; shared-memory
  tiling of each block's own ranks and degrees; the coalesced pull in float32.

The pull, push and cuSPARSE designs compute Static and ND only.
"""

from __future__ import annotations

import functools

import numpy as np

from dynpr.designs import (APPROACHES, BLOCK, CLASS_LANES, ITERATION_STATE, KERNEL_STRUCTS, PARTITIONS, VARIANTS,
                           KernelVariant)
from dynpr.gpu import loader
from dynpr.gpu.buffers import PARTITION, PUSH, RunShape, allocate
from dynpr.gpu.classes import ClassRanks, class_range, default_bounds, solve_options
from dynpr.gpu.device_graph import (MODES, DeviceGraph, EngineRun, count_affected, graph_args, grid_for,
                                    phase_times)
from dynpr.gpu.iterations import IterationLoop
from dynpr.gpu.warm_up import tiny_case
from dynpr.gpu.resident import upload
from dynpr.pagerank.options import PageRankOptions


class Partition:
    """Vertex ids split by degree, low degrees first (Alg. 4): ``ids[:num_low]``
    take the thread-per-vertex kernel, ``ids[num_low:]`` the block-per-vertex one."""

    def __init__(self, cupy, n: int):
        arrays = allocate(cupy, PARTITION, RunShape(n, 0))
        self.flag, self.scan, self.ids = arrays["flag"], arrays["scan"], arrays["ids"]
        self.num_low = 0

    def compute(self, kernels, cupy, offsets, n: int, degree_switch: int) -> None:
        """Flag, scan and scatter; reads the low count back to size later launches."""
        args = (offsets, np.int32(n), np.int32(degree_switch))
        kernels["degree_flag"](grid_for(n), (BLOCK,), args + (self.flag,))
        cupy.cumsum(self.flag, out=self.scan)
        kernels["partition_scatter"](grid_for(n), (BLOCK,), args + (self.scan, self.ids))
        self.num_low = int(self.scan[-1])


class PartitionedRanks:
    """The paper's rank step: thread-per-vertex for in-degree <= switch,
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
        tail = (graph_args(g), KERNEL_STRUCTS["RankBuffers"].pack(R=(R, Rnew), C=(None, None)), dv, dn,
                solve_options(o, g.n), delta_slot)
        for kind, ranges in _split(self.partition, g.n, o.degree_switch):
            for grid, rows in ranges:
                self.kernels[self.names[kind]](grid, (BLOCK,), (rows,) + tail)


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

    def expand(self, dn, dv, ever, done) -> None:
        """Launch the expansion; it does nothing once ``done[0]`` is set."""
        g = self.g
        tail = (graph_args(g), dn, dv, ever, done)
        for kind, ranges in _split(self.partition, g.n, self.options.degree_switch):
            for grid, rows in ranges:
                self.kernels[loader.expand_kernel_name(kind, self.listed)](grid, (BLOCK,), (rows,) + tail)


def _split(partition, n: int, degree_switch: int):
    """The launches of a thread/block kernel pair: (kind, [(grid, ClassRange)]) for ``thread``
    (degrees up to ``degree_switch``) and ``block`` (above), over the partition's ids, or, without
    one, over every vertex (each kernel keeps its own degrees: the thread kernel reads hi, the
    block kernel lo)."""
    thread, block = (-1, degree_switch), (degree_switch, 1 << 62)
    if partition is None:
        return (("thread", [(grid_for(n), class_range(None, n, *thread))]),
                ("block", [((n,), class_range(None, n, *block))]))
    low, ids = partition.num_low, partition.ids
    high = n - low
    return (("thread", [(grid_for(low), class_range(ids, low, *thread))] if low else []),
            ("block", [((high,), class_range(ids[low:], high, *block))] if high else []))


def _reachable(kernels, cupy, graph: DeviceGraph, del_src, ins_src, frontier, nxt, visited, found) -> None:
    """Multi-source BFS from every batch source; ``visited`` ends as the reachable set."""
    nd, ni = len(del_src), len(ins_src)
    frontier.fill(0)
    visited.fill(0)
    kernels["bfs_seed"](grid_for(nd + ni), (BLOCK,), (del_src, np.int32(nd), ins_src, np.int32(ni), frontier, visited))
    while True:
        nxt.fill(0)
        found.fill(0)
        kernels["bfs_step"](grid_for(graph.n), (BLOCK,),
                            (np.int32(graph.n), graph.offsets, graph.targets, frontier, nxt, visited, found))
        if not int(found[0]):
            return
        frontier, nxt = nxt, frontier


def run_partitioned(approach, g: DeviceGraph, g_old: DeviceGraph | None, batch, start_ranks,
                    options: PageRankOptions):
    """The paper's design (variant ``partitioned``): allocate, then time
    partition / marking / iterations with CUDA events, one host read of the
    change per iteration."""
    cupy = loader.require_cupy()
    kernels = loader.baseline_kernels()
    n = g.n
    affected_mode, frontier_mode, _ = MODES[approach]
    ranks_step = PartitionedRanks(kernels, cupy, g, MODES[approach], options)
    expansion = Expansion(kernels, cupy, g, options) if frontier_mode else None

    R = upload(start_ranks, np.float64, copy=True)
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
    never_done = cupy.zeros(1, dtype=cupy.int32)  # the baseline checks convergence on the host
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
        kernels["mark_initial"](grid_for(nd + ni), (BLOCK,),
                                (del_src, del_dst, np.int32(nd), ins_src, np.int32(ni), dv, dn, ever))
        expansion.expand(dn, dv, ever, never_done)
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
            expansion.expand(dn, dv, ever, never_done)
    events[3].record()
    events[3].synchronize()
    return EngineRun(R, iterations, change <= options.tolerance, phase_times(cupy, events),
                     count_affected(cupy, approach, dv, ever, n))


class PushRanks:
    """The naive push of *PageRank Algorithm: Complete CUDA Implementation*
    ("GPU Naive"): every vertex adds R[u]/d[u] to its
    out-neighbours with atomicAdd, then a map finishes the ranks (Static and ND
    only). A step of :class:`dynpr.gpu.iterations.IterationLoop`."""

    prc = False
    fuses_finish = False
    persistent = False
    prepared_by_solve = False

    def __init__(self, kernels, cupy, graph: DeviceGraph, mode, options: PageRankOptions):
        self.kernels, self.g, self.options = kernels, graph, options
        self.acc = allocate(cupy, PUSH, RunShape(graph.n, 0))["accumulator"]

    def prepare(self, contributions=None) -> None:
        """Nothing to partition, and no contributions (``prc`` is False)."""

    def step(self, R, C, Rnew, Cnew, dv, dn, delta, state, frontier=None) -> None:
        g, o = self.g, self.options
        n = np.int32(g.n)
        done = state[ITERATION_STATE.span("done")]
        self.kernels["push_scatter"](grid_for(g.n), (BLOCK,), (n, g.offsets, g.targets, R, g.inv_degree, self.acc,
                                                             done))
        self.kernels["push_finish"](grid_for(g.n), (BLOCK,), (n, R, Rnew, self.acc, np.float64((1.0 - o.alpha) / g.n),
                                                            np.float64(o.alpha), delta, done))


class SingleLaunchRanks:
    """A Static pull design that computes every vertex in one launch (``kernels/static_variants.cu``:
    ``hybrid_thread_warp``, ``pull_tiled``, ``pull_float32``; Static and ND only), a step of
    :class:`dynpr.gpu.iterations.IterationLoop`. ``pull_float32`` gathers float32 ranks with
    float32 inverse degrees (converted once, untimed, like the float64 ones uploaded with the graph)."""

    prc = False
    fuses_finish = False
    persistent = False
    prepared_by_solve = False

    def __init__(self, kernels, graph: DeviceGraph, options: PageRankOptions, design: str):
        self.kernels, self.g, self.options = kernels, graph, options
        self.name = f"rank_{design}"
        self.dtype = np.float32 if design == "pull_float32" else np.float64
        self.inv_degree = graph.inv_degree.astype(self.dtype, copy=False)

    def prepare(self, contributions=None) -> None:
        """Nothing to partition, and no contributions (``prc`` is False)."""

    def step(self, R, C, Rnew, Cnew, dv, dn, delta, state, frontier=None) -> None:
        g, o = self.g, self.options
        done = state[ITERATION_STATE.span("done")]
        if self.dtype == np.float32:  # its own types: float32 1/d, ranks and constants
            c0, alpha = self.dtype((1.0 - o.alpha) / g.n), self.dtype(o.alpha)
            args = (graph_args(g), self.inv_degree, R, Rnew, c0, alpha, delta, done)
        else:
            args = (graph_args(g), KERNEL_STRUCTS["RankBuffers"].pack(R=(R, Rnew), C=(None, None)),
                    solve_options(o, g.n), delta, done)
        self.kernels[self.name](grid_for(g.n), (BLOCK,), args)


def run_single_launch(approach: str, g: DeviceGraph, start_ranks, options: PageRankOptions,
                      design: KernelVariant) -> EngineRun:
    """A :class:`SingleLaunchRanks` design, one host read per iteration; float32 ranks come back
    widened to float64 (the same values)."""
    cupy = loader.require_cupy()
    kernels = loader.baseline_kernels() | loader.static_variant_kernels()
    step = SingleLaunchRanks(kernels, g, options, design.name)
    run = IterationLoop(kernels, cupy, approach, g, None, start_ranks, options, step,
                        rank_dtype=step.dtype).run(graphs=False)
    return run._replace(ranks=run.ranks.astype(np.float64, copy=False))


def run_cusparse(g: DeviceGraph, start_ranks, options: PageRankOptions):
    """Power iteration as a CuPy user would write it: a cuSPARSE CSR matvec with
    the pull matrix (weights 1/d[u]), an elementwise update and a max
    reduction, the change read by the host every iteration. The matrix is
    built before timing (like an upload)."""
    cupy = loader.require_cupy()
    import cupyx.scipy.sparse as cusparse

    pull = cusparse.csr_matrix((g.inv_degree[g.sources], g.sources, g.in_offsets.astype(cupy.int32)),
                               shape=(g.n, g.n))
    R = upload(start_ranks, np.float64)  # read, never written
    c0, alpha = (1.0 - options.alpha) / g.n, options.alpha
    start, end = cupy.cuda.Event(), cupy.cuda.Event()
    start.record()
    iterations = 0
    while True:
        Rnew = c0 + alpha * (pull @ R)
        change = float(cupy.abs(Rnew - R).max())
        R = Rnew
        iterations += 1
        if change <= options.tolerance or iterations >= options.max_iterations:
            break
    end.record()
    end.synchronize()
    phases = {"partition_ms": 0.0, "mark_ms": 0.0, "compute_ms": cupy.cuda.get_elapsed_time(start, end)}
    return EngineRun(R, iterations, change <= options.tolerance, phases, g.n)


def _class_step(design: KernelVariant, kernels, cupy, g: DeviceGraph, mode, options: PageRankOptions):
    """The rank step of an unfused design: its classes (lanes and in-degree bounds) or the push."""
    if design.name == "push_atomic":
        return PushRanks(kernels, cupy, g, mode, options)
    lanes, bounds = {
        "classes_unfused": (CLASS_LANES, default_bounds(g)),
        "partitioned_prc": ((1, BLOCK), (options.degree_switch,)),
        "pull_thread": ((1,), ()),
        "pull_warp": ((32,), ()),
        "pull_block": ((BLOCK,), ()),
    }[design.name]
    return ClassRanks(kernels, cupy, g, mode, options, lanes, bounds, design.prc, False)


def run_unfused(approach: str, g: DeviceGraph, batch, start_ranks,
                options: PageRankOptions, design: KernelVariant) -> EngineRun:
    """One launch per class, then ``finish_iteration`` (and DF/DF-P's separate
    expansion); one host read per iteration."""
    cupy = loader.require_cupy()
    kernels = loader.baseline_kernels()
    step = _class_step(design, kernels, cupy, g, MODES[approach], options)
    expansion = Expansion(kernels, cupy, g, options) if MODES[approach][1] else None
    return IterationLoop(kernels, cupy, approach, g, batch, start_ranks, options, step,
                         expansion=expansion).run(graphs=False)


def run(approach: str, g: DeviceGraph, g_old: DeviceGraph | None, batch, start_ranks, options: PageRankOptions,
        design: KernelVariant) -> EngineRun:
    """Run a baseline design (compiled and warmed up on first use, untimed)."""
    _warm_up()
    return _run(approach, g, g_old, batch, start_ranks, options, design)


#: The designs of :class:`SingleLaunchRanks`.
SINGLE_LAUNCH = ("hybrid_thread_warp", "pull_tiled", "pull_float32")


def _run(approach, g, g_old, batch, start_ranks, options, design) -> EngineRun:
    if design.name == "partitioned":
        return run_partitioned(approach, g, g_old, batch, start_ranks, options)
    if design.name == "cusparse":
        return run_cusparse(g, start_ranks, options)
    if design.name in SINGLE_LAUNCH:
        return run_single_launch(approach, g, start_ranks, options, design)
    return run_unfused(approach, g, batch, start_ranks, options, design)


@functools.cache
def _warm_up() -> None:
    """Every baseline, approach and partition level once on a tiny graph (see
    :func:`dynpr.gpu.pagerank._warm_up`)."""
    g, g_old, batch, start = tiny_case()
    for design in VARIANTS.values():
        if design.production or design.fused:
            continue
        for partition in PARTITIONS:
            # degree_switch 1 sends the hub (vertex 0) to the block kernels.
            options = PageRankOptions(partition=partition, degree_switch=1, max_iterations=3, variant=design.name)
            for approach in APPROACHES:
                if not design.static_only or approach == "static":
                    _run(approach, g, g_old, batch, start, options, design)
