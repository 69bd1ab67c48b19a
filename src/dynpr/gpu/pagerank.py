"""GPU PageRank: the default engine (variant ``classes``), the variant dispatch and :func:`update`.

Same semantics as the CPU twin ``dynpr.pagerank.cpu`` (seed 003, Alg. 1-5).
The graph on the device lives in :mod:`dynpr.gpu.device`, the designs the
default is measured against (seed 003's baseline, seed 000/001, cuSPARSE) in
:mod:`dynpr.gpu.baseline`, the kernels in ``kernels/pagerank.cu``.

Timing: CUDA events give ``partition_ms`` (degree classes), ``mark_ms``
(initial marking and first expansion, or DT's BFS) and ``compute_ms``
(iterations with convergence detection and expansion). Uploads, allocations,
compilation (a warm-up on the first call) and CUDA-graph capture come first,
untimed.

The default gathers precomputed contributions R[u]/d[u] in four in-degree
classes (thread <= 8 < 8 lanes <= 64 < warp <= 1024 < block;
:func:`class_bounds` widens them on large graphs), all in one launch per
iteration whose last block ends the iteration on the device: it counts it,
tests the L-infinity change (folded per block with an integer ``atomicMax``
on the double's bit pattern, exact for non-negative doubles) and sets
``done``; launches past that return at once. Iterations are replayed from
CUDA graphs, 16 per replay, with one host read per replay. DF/DF-P expand
the affected set inside that launch; DT's BFS is one cooperative launch.

Partition levels (seed 003 Fig. 1): ``in`` and ``in_out`` list the classes
in one ``degree_classes`` launch (the same kernels at both: with the
expansion fused, an out-degree partition has no use); ``none`` has no
partition phase, and the launch (``rank_chunks``) sorts each chunk of 256
vertices by degree in shared memory. Every vertex gets the same lanes and
order at every level, so the ranks agree bit for bit.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from dynpr import APPROACHES
from dynpr.backend import device_name
from dynpr.batches import Batch
from dynpr.gpu import VARIANTS, loader
from dynpr.gpu.baseline import Expansion, PushRanks, run_cusparse, run_partitioned
from dynpr.gpu.device import (BLOCK, MODES, DeviceGraph, check_fits, count_affected, grid_for, phase_times,
                              to_device)
from dynpr.graph import Graph
from dynpr.pagerank.options import PageRankOptions, PageRankResult


# Degree classes of the default: a thread up to 8 in-edges, 8 lanes up to 64,
# a warp up to 1024, a block above. Graphs whose contributions (8n bytes) exceed
# half the L2 take wider classes, WIDE_CLASS_BOUNDS: in one H100 run of
# benchmarks/bench_class_bounds.py, Static on R-MAT scale 22 took 46.5 instead of
# 49.8 ms (scale 20, below the threshold, 10.0 instead of 11.3 ms). The threshold
# is a size selector, not a cache model: the small SNAP graphs were not swept and
# keep the default.
CLASS_LANES, CLASS_BOUNDS, WIDE_CLASS_BOUNDS = (1, 8, 32, BLOCK), (8, 64, 1024), (32, 256, 4096)


def class_bounds(n: int, l2_bytes: int) -> tuple[int, int, int]:
    """In-degree bounds of the default's classes for a graph of n vertices on a
    device with ``l2_bytes`` of L2: :data:`WIDE_CLASS_BOUNDS` when the gathered
    contributions (8n bytes) exceed half the L2, else :data:`CLASS_BOUNDS`."""
    return WIDE_CLASS_BOUNDS if 8 * n > l2_bytes // 2 else CLASS_BOUNDS


def relabels(n: int, l2_bytes: int) -> bool:
    """Whether the default relabels a graph of n vertices for Static/ND: the same
    size selector as :func:`class_bounds` (contributions, 8n bytes, over half the L2)."""
    return 8 * n > l2_bytes // 2


# Relabelling copies rows of up to RELABEL_ROW_LIMIT in-edges with 8 lanes each;
# longer ones (an R-MAT scale-22 hub has about 1e5 in-edges) in chunks of
# RELABEL_CHUNK edges, a block per chunk.
RELABEL_ROW_LIMIT, RELABEL_CHUNK = 256, 2048


class Relabel:
    """Hub-first vertex ids (descending in-degree) for the default's Static/ND on large graphs.

    The pull gathers C[u] at random places of an 8n-byte array; with ids
    sorted by descending degree the hot contributions (hubs) share cache
    lines and stay in the L2. On :meth:`prepare` (timed, in ``partition_ms``)
    the device sorts the vertices, builds the relabelled in-CSR (each row's
    sources renamed but kept in their original order, so every vertex sums
    the same terms in the same order), 1/d and the starting ranks; the
    iterations run on :attr:`graph`, and :meth:`restore` (timed, in
    ``compute_ms``) maps the ranks back. The arrays are allocated here,
    untimed, so CUDA graphs can be captured on them. Static/ND never read
    the out CSR, so :attr:`graph` keeps the original one.

    Measured on the H100 (one run, commit c92ff21), Static on R-MAT scale 22:
    46.4 ms without, 38.9 ms with relabelling (2.7 ms of it relabelling;
    557 against 712 us per iteration), cuSPARSE 60.4 ms, 65 iterations each."""

    def __init__(self, kernels, cupy, g: DeviceGraph, start):
        n, m = g.n, int(g.sources.size)
        self.kernels, self.cupy, self.original = kernels, cupy, g
        self.graph = DeviceGraph(n, g.offsets, g.targets, cupy.zeros(n + 1, dtype=cupy.int64),
                                 cupy.empty(m, dtype=cupy.int32), cupy.empty(n, dtype=cupy.float64))
        self.start = cupy.asarray(start, dtype=cupy.float64)
        self.degree = cupy.empty(n, dtype=cupy.int64)
        self.rank = cupy.empty(n, dtype=cupy.int32)

    def prepare(self, ranks, row_limit: int | None = None) -> None:
        """Relabel the graph and write the relabelled starting ranks into ``ranks``
        (``row_limit``: :data:`RELABEL_ROW_LIMIT` unless given)."""
        cupy, g, r, n = self.cupy, self.original, self.graph, self.original.n
        row_limit = row_limit or RELABEL_ROW_LIMIT
        # Descending in-degree; by out-degree measured the same on R-MAT scale 22 (H100, Static
        # 39.6 against 39.7 ms), where the two degrees of a vertex go together.
        order = cupy.argsort(g.in_offsets[:-1] - g.in_offsets[1:])
        self.kernels["relabel_vertices"](grid_for(n), (BLOCK,), (order, np.int32(n), g.in_offsets, g.inv_degree,
                                                                 self.start, self.rank, self.degree, r.inv_degree,
                                                                 ranks))
        cupy.cumsum(self.degree, out=r.in_offsets[1:])
        self.kernels["relabel_rows"](grid_for(8 * n), (BLOCK,), (order, np.int32(n), g.in_offsets, g.sources,
                                                                 self.rank, r.in_offsets, r.sources,
                                                                 np.int64(row_limit)))
        long_rows = cupy.flatnonzero(self.degree > row_limit)  # reads the count back
        if long_rows.size:
            last = cupy.cumsum((self.degree[long_rows] + RELABEL_CHUNK - 1) // RELABEL_CHUNK)
            self.kernels["relabel_long_rows"]((int(last[-1]),), (BLOCK,), (
                order, long_rows, last, np.int32(long_rows.size), np.int64(RELABEL_CHUNK), g.in_offsets,
                g.sources, self.rank, r.in_offsets, r.sources))

    def restore(self, ranks):
        """Ranks in the original ids from ranks in the relabelled ones."""
        return ranks[self.rank]


def _default_bounds(options: PageRankOptions, g: DeviceGraph) -> tuple[int, int, int]:
    cupy = loader.require_cupy()
    return class_bounds(g.n, cupy.cuda.Device().attributes["L2CacheSize"])


class ClassRanks:
    """Rank step over degree classes: class k takes the vertices with in-degree
    in ``(bounds[k-1], bounds[k]]`` and ``lanes[k]`` lanes per vertex (1 thread,
    8 sub-warp, 32 warp, 256 block), listed by a one-launch classification
    (partition levels ``in``/``in_out``) or selected by degree inside each
    launch (``none``). ``prc`` gathers precomputed contributions R[u]/d[u].
    Every launch is gated by the device-side ``done`` flag.

    With the default classes and ``fuse``, one launch serves all classes and
    ends the iteration itself (``fuses_finish``): ``rank_classes`` over the
    class lists, whose block layout ``degree_classes`` writes on the device,
    or at level ``none`` ``rank_chunks``, which sorts each chunk of 256
    vertices into the same classes in shared memory. Both take work from a
    device counter with a grid fixed on the host, so no host read sizes them.
    Otherwise one launch per class (sized from class counts read back)."""

    def __init__(self, kernels, cupy, graph: DeviceGraph, mode, options: PageRankOptions, lanes, bounds, prc,
                 fuse):
        self.kernels, self.cupy, self.g, self.options = kernels, cupy, graph, options
        self.lanes, self.bounds, self.prc = tuple(lanes), tuple(bounds), prc
        # One class needs no list: every vertex belongs to it.
        self.listed = options.partition in ("in", "in_out") and len(self.lanes) > 1
        self.names = [loader.group_kernel_name(k, self.listed, mode, prc) for k in self.lanes]
        self.fuses_finish = fuse and prc and self.lanes == CLASS_LANES
        self.fused_name = loader.fused_kernel_name(self.listed, mode)
        k = len(self.lanes)
        limits = (-1,) + self.bounds + (1 << 62,)
        self.ranges = [(np.int64(limits[i]), np.int64(limits[i + 1])) for i in range(k)]
        self.counts = [graph.n] * k
        if self.listed:
            self.bounds_dev = cupy.asarray(np.array(self.bounds or (0,), dtype=np.int64))
            # count[0..3], first[0..3], total, ticket (kernels/pagerank.cu, degree_classes)
            self.plan = cupy.zeros(10, dtype=cupy.int32)
            self.ids = cupy.empty((k, graph.n), dtype=cupy.int32)
        if self.fuses_finish:
            self.grid = _fused_grid(cupy, kernels[self.fused_name], graph, self.listed, self.bounds)

    def prepare(self) -> None:
        """Classify by in-degree (timed as ``partition_ms``); only the unfused
        launches read the class sizes back."""
        if self.listed:
            g = self.g
            self.kernels["degree_classes"](grid_for(g.n), (BLOCK,), (g.in_offsets, np.int32(g.n), self.bounds_dev,
                                                                 np.int32(len(self.lanes)), self.plan, self.ids))
            if not self.fuses_finish:
                self.counts = [int(c) for c in self.plan[:len(self.lanes)].get()]

    def step(self, R, C, Rnew, Cnew, dv, dn, delta, state, frontier=None) -> None:
        """One gated iteration R -> Rnew (and C -> Cnew); the L-infinity change goes to ``delta``
        (``state`` = iterations, done, ticket, work counter; only the fused kernels end the
        iteration themselves). The fused kernels take ``frontier`` = (dx_in, dx_out, ever)
        instead of ``dn`` and expand DF/DF-P's affected set themselves
        (``kernels/pagerank.cu``, rank_vertex)."""
        g, o = self.g, self.options
        c0, alpha = np.float64((1.0 - o.alpha) / g.n), np.float64(o.alpha)
        tau_f, tau_p = np.float64(o.frontier_tolerance), np.float64(o.prune_tolerance)
        if self.fuses_finish:
            out = (g.offsets, g.targets, *frontier)
            tail = (c0, alpha, tau_f, tau_p, delta, state, np.float64(o.tolerance), np.int32(o.max_iterations))
            if self.listed:
                args = (self.ids, np.int32(g.n), self.plan, g.in_offsets, g.sources, g.inv_degree, R, C, Rnew, Cnew,
                        dv) + out + tail
            else:
                args = (np.int32(g.n), g.in_offsets, g.sources, g.inv_degree, R, C, Rnew, Cnew, dv) + out + tuple(
                    np.int64(b) for b in self.bounds) + tail
            self.kernels[self.fused_name]((self.grid,), (BLOCK,), args)
            return
        done = state[1:2]
        for k, lanes in enumerate(self.lanes):
            count = self.counts[k]
            if not count:
                continue
            ids = self.ids[k] if self.listed else g.sources  # unlisted kernels ignore the id array
            grid = (count,) if lanes == BLOCK else grid_for(count * lanes)
            lo, hi = self.ranges[k]
            self.kernels[self.names[k]](grid, (BLOCK,), (
                ids, np.int32(count), g.in_offsets, g.sources, g.inv_degree, R, C, Rnew, Cnew, dv, dn, lo, hi,
                c0, alpha, tau_f, tau_p, delta, done))


def _fused_grid(cupy, kernel, g: DeviceGraph, listed: bool, bounds) -> int:
    """Blocks of a fused class launch: about one resident wave (multiprocessors x
    blocks of 256 threads that fit one by registers), or fewer when the work
    has fewer units. The units are counted without a host read: one per 256
    vertices at level ``none``; with class lists, an upper bound from n and m
    (a vertex of class k has more in-edges than bounds[k-1], so at most
    m / (bounds[k-1] + 1) vertices belong to it)."""
    device = cupy.cuda.Device()
    registers = device.attributes["MaxRegistersPerMultiprocessor"]
    per_warp = -(-kernel.num_regs * 32 // 256) * 256  # registers are allocated per warp in units of 256
    resident = max(1, min(device.attributes["MaxThreadsPerMultiProcessor"] // BLOCK,
                          registers // (per_warp * (BLOCK // 32))))
    wave = resident * device.attributes["MultiProcessorCount"]
    n, m = g.n, int(g.sources.size)
    if not listed:
        return max(1, min(wave, -(-n // BLOCK)))
    units = 0
    for lanes, lower in zip(CLASS_LANES, (None,) + tuple(bounds)):
        count = n if lower is None else min(n, m // (lower + 1))
        units += count if lanes == BLOCK else -(-count * lanes // BLOCK)
    return max(1, min(wave, units))


# Iterations per CUDA graph replay: 16, so that a dynamic run (DF-P converges in
# about 14 iterations on sx-mathoverflow) needs one host read; each iteration
# launched past convergence costs a launch whose blocks return at once (~2 us
# on a small graph), a host read about 20 us.
GRAPH_ITERATIONS = (16,)


@dataclass(frozen=True)
class Variant:
    """How a variant computes ranks: its step, whether it serves only Static/ND,
    and whether iterations are replayed from CUDA graphs (else one host read per iteration)."""

    make: object
    static_only: bool
    graphs: bool
    relabel: bool = False


def _classes(lanes, bounds, prc, fuse=True):
    """A ClassRanks factory; ``bounds`` is a tuple or a function of (options, device graph)."""
    return lambda kernels, cupy, g, mode, options: ClassRanks(
        kernels, cupy, g, mode, options, lanes, bounds(options, g) if callable(bounds) else bounds, prc, fuse)


# One entry per name in dynpr.gpu.VARIANTS except "partitioned" (seed 003's
# baseline, driven by baseline.run_partitioned) and "cusparse" (baseline.run_cusparse).
GATED_VARIANTS = {
    "classes": Variant(_classes(CLASS_LANES, _default_bounds, True), False, True, relabel=True),
    "classes_sync": Variant(_classes(CLASS_LANES, _default_bounds, True), False, False),
    "classes_unfused": Variant(_classes(CLASS_LANES, _default_bounds, True, fuse=False), False, False),
    "partitioned_prc": Variant(_classes((1, BLOCK), lambda o, g: (o.degree_switch,), True), False, False),
    "pull_thread": Variant(_classes((1,), (), False), True, False),
    "pull_warp": Variant(_classes((32,), (), False), True, False),
    "pull_block": Variant(_classes((BLOCK,), (), False), True, False),
    "push_atomic": Variant(PushRanks, True, False),
}
DEFAULT_VARIANT = "classes"


def _dt_grid(cupy, n: int) -> int:
    """Blocks of DT's cooperative BFS: two per multiprocessor (the kernel needs 40
    registers per thread, so two blocks of 256 threads always fit, and the
    cooperative launch fails rather than deadlock if they did not), fewer when
    a warp per vertex needs fewer (a grid-wide sync costs more with more blocks)."""
    return min(2 * cupy.cuda.Device().attributes["MultiProcessorCount"], grid_for(32 * n)[0])


def _run_gated(approach, g: DeviceGraph, g_old: DeviceGraph | None, batch, start_ranks, options: PageRankOptions,
               variant: Variant):
    """Every variant but the baseline and cuSPARSE. Convergence is decided on
    the device: the fused ``rank_classes`` kernel (or ``finish_iteration``)
    counts each iteration and sets ``done`` at the first change <= tau (or at
    the cap), and every later kernel returns at once, so the host may launch
    iterations ahead and read the state only now and then. With
    ``variant.graphs`` (fused variants only: their launches need no class
    sizes from the host) the iterations are captured into CUDA graphs before
    the timed phases (capture and instantiation are host work, like
    compilation) and replayed with one host read per replay; otherwise one
    host read per iteration, as in the baseline.

    With the fused kernel a DF/DF-P iteration is that one kernel (it expands
    the affected set itself), and the initial marking with the first expansion
    is one ``mark_frontier`` launch. DT's BFS over both graphs is one
    cooperative ``dt_reachable`` launch, without a host read per level."""
    cupy = loader.require_cupy()
    kernels = loader.pagerank_kernels()
    n = g.n
    affected_mode, frontier_mode, _ = MODES[approach]
    relabel = None
    if variant.relabel and approach in ("static", "nd") and relabels(n, cupy.cuda.Device().attributes["L2CacheSize"]):
        relabel = Relabel(kernels, cupy, g, start_ranks)
        g = relabel.graph
    ranks_step = variant.make(kernels, cupy, g, MODES[approach], options)
    fused = ranks_step.fuses_finish
    expansion = Expansion(kernels, cupy, g, options) if frontier_mode and not fused else None
    prc = ranks_step.prc

    ranks = [cupy.asarray(start_ranks, dtype=cupy.float64)]
    ranks.append(ranks[0].copy())
    contrib = [cupy.empty(n, dtype=cupy.float64) for _ in range(2)] if prc else [ranks[0], ranks[0]]
    dv = cupy.zeros(n, dtype=cupy.uint8)
    # Kernels that take flags they do not use (no frontier) get dv in their place.
    dn, ever, dx = dv, dv, (dv, dv)
    if frontier_mode:
        ever = cupy.zeros(n, dtype=cupy.uint8)
        if fused:
            dx = (cupy.zeros(n, dtype=cupy.uint8), cupy.zeros(n, dtype=cupy.uint8))
        else:
            dn = cupy.zeros(n, dtype=cupy.uint8)
    delta = cupy.zeros(1, dtype=cupy.float64)
    state = cupy.zeros(4, dtype=cupy.int32)  # iterations done, converged flag, block ticket, work counter
    done = state[1:2]
    if affected_mode:
        del_src, del_dst = cupy.asarray(batch.del_src), cupy.asarray(batch.del_dst)
        ins_src = cupy.asarray(batch.ins_src)
        nd, ni = batch.deletions, batch.insertions
    if approach == "dt":
        visited = cupy.zeros(n, dtype=cupy.int32)
        queue = cupy.empty(2 * n, dtype=cupy.int32)
        level_sizes = cupy.zeros(3, dtype=cupy.int32)

    def iteration(j: int) -> None:
        """Iteration j reads buffer j % 2 and writes the other one."""
        a, b = j % 2, 1 - j % 2
        if fused:
            ranks_step.step(ranks[a], contrib[a], ranks[b], contrib[b], dv, dn, delta, state, (dx[a], dx[b], ever))
            return
        if frontier_mode:
            kernels["clear_flags"](grid_for(n), (BLOCK,), (dn, np.int32(n), done))
        ranks_step.step(ranks[a], contrib[a], ranks[b], contrib[b], dv, dn, delta, state)
        kernels["finish_iteration"]((1,), (1,), (delta, state, np.float64(options.tolerance),
                                                 np.int32(options.max_iterations)))
        if frontier_mode:
            expansion.expand(dn, dv, ever, done)

    # The allocations and uploads above ran on the legacy default stream, which
    # a non-blocking stream does not wait for: finish them first (untimed).
    cupy.cuda.Device().synchronize()
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        graphs = []
        if variant.graphs:
            # Every launch's size is known on the host, so the graphs are captured
            # before anything runs (host work outside the timed phases).
            for count in GRAPH_ITERATIONS:  # even counts: a replay ends on buffer 0 again
                stream.begin_capture()
                for j in range(count):
                    iteration(j)
                graphs.append(stream.end_capture())
        events = [cupy.cuda.Event() for _ in range(4)]
        events[0].record()
        if relabel:
            relabel.prepare(ranks[0])
        ranks_step.prepare()
        if expansion:
            expansion.prepare()
        events[1].record()
        if approach == "dt":
            loader.dt_reachable_kernel()((_dt_grid(cupy, n),), (BLOCK,), (
                g_old.offsets, g_old.targets, g.offsets, g.targets, del_src, np.int32(nd), ins_src, np.int32(ni),
                np.int32(n), visited, queue, level_sizes, dv))
        elif frontier_mode and fused:
            kernels["mark_frontier"](grid_for(32 * (nd + ni)), (BLOCK,), (
                del_src, del_dst, np.int32(nd), ins_src, np.int32(ni), g.offsets, g.targets, dv))
        elif frontier_mode:
            kernels["mark_initial"](grid_for(nd + ni), (BLOCK,),
                                    (del_src, del_dst, np.int32(nd), ins_src, np.int32(ni), dv, dn, ever))
            expansion.expand(dn, dv, ever, done)
        events[2].record()
        if prc:
            kernels["contributions"](grid_for(n), (BLOCK,), (ranks[0], g.inv_degree, np.int32(n), contrib[0]))
        launched = 0
        while True:
            if graphs:
                graphs[min(launched, len(graphs) - 1)].launch(stream)
            else:
                iteration(launched)
            launched += 1
            if int(state[1]):  # the read synchronizes the stream
                break
        iterations = int(state[0])
        final = relabel.restore(ranks[iterations % 2]) if relabel else ranks[iterations % 2]
        events[3].record()
        events[3].synchronize()

    return (cupy.asnumpy(final), iterations, phase_times(cupy, events),
            count_affected(cupy, approach, dv, ever, n))


def _dispatch(approach, g, g_old, batch, start, options: PageRankOptions):
    """Run ``options.variant`` (None = the default) for one approach."""
    variant = options.variant or DEFAULT_VARIANT
    if variant not in VARIANTS:
        raise ValueError(f"unknown GPU variant {options.variant!r}; known: {list(VARIANTS)}")
    if variant == "partitioned":
        return run_partitioned(approach, g, g_old, batch, start, options)
    static_only = variant == "cusparse" or GATED_VARIANTS[variant].static_only
    if static_only and approach not in ("static", "nd"):
        raise ValueError(f"GPU variant {variant!r} computes static and nd only, not {approach!r}")
    if variant == "cusparse":
        return run_cusparse(g, start, options)
    return _run_gated(approach, g, g_old, batch, start, options, GATED_VARIANTS[variant])


@functools.cache
def _warm_up() -> None:
    """Run every approach and partition level once on a tiny graph, so that
    compilation and module loading (ours and CuPy's own kernels) stay out of
    every timed call."""
    src = np.array([0, 1, 2, 3, 4, 5, 1, 2, 3], dtype=np.int32)
    dst = np.array([1, 2, 3, 4, 5, 0, 0, 0, 0], dtype=np.int32)
    old = Graph.from_edges(src, dst)
    new = Graph.from_edges(src[1:], dst[1:], old.num_vertices)
    batch = Batch(src[:1], dst[:1], np.empty(0, np.int32), np.empty(0, np.int32))
    start = np.full(old.num_vertices, 1.0 / old.num_vertices)
    g, g_old = to_device(new), to_device(old)
    for variant in VARIANTS:
        for partition in ("none", "in", "in_out"):
            # degree_switch 1 sends the hub (vertex 0) to the block kernels.
            options = PageRankOptions(partition=partition, degree_switch=1, max_iterations=3, variant=variant)
            for approach in APPROACHES:
                if variant in ("partitioned", "classes", "classes_sync", "classes_unfused", "partitioned_prc") \
                        or approach == "static":
                    _dispatch(approach, g, g_old, batch, start, options)
    # The relabelling of large graphs (CuPy's sort, scan and compaction kernels too);
    # row limit 1 sends rows through the long-row path as well.
    cupy = loader.require_cupy()
    relabel = Relabel(loader.pagerank_kernels(), cupy, g, start)
    relabel.prepare(cupy.empty(g.n, dtype=cupy.float64), row_limit=1)
    relabel.restore(relabel.start)


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
    MemoryError
        If the run needs more device memory than is free (checked before a graph is uploaded).
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
    graphs = (graph, old_graph) if approach == "dt" else (graph,)
    variant = options.variant or DEFAULT_VARIANT
    relabel = GATED_VARIANTS[variant].relabel if variant in GATED_VARIANTS else False
    relabel = relabel and approach in ("static", "nd") and relabels(
        n, loader.require_cupy().cuda.Device().attributes["L2CacheSize"])
    check_fits(approach, graphs, batch, options, variant, relabel)
    _warm_up()
    g = to_device(graph)
    g_old = to_device(old_graph) if approach == "dt" else None
    ranks, iterations, phases, affected = _dispatch(approach, g, g_old, batch, start, options)
    return PageRankResult(
        ranks=ranks,
        iterations=iterations,
        time_ms=sum(phases.values()),
        approach=approach,
        backend="gpu",
        device=device_name("gpu"),
        affected=affected,
        phases=phases,
        variant=options.variant or DEFAULT_VARIANT,
    )
