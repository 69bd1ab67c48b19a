"""The default GPU engine's rank step: in-degree classes, and the hub-first relabelling of large graphs.

:class:`ClassRanks` computes one iteration over the degree classes of
:mod:`dynpr.designs` (a thread, a sub-warp, a warp or a block per vertex). With
the default's four classes and precomputed contributions it is one fused launch
per iteration (``kernels/pagerank.cu``) that also ends the iteration on the
device; the baselines use it with other lanes, one launch per class
(``kernels/baselines.cu``). :class:`Relabel` renumbers a large graph hub-first
for Static, ND, DF and DF-P so the hot contributions stay in the L2.
"""

from __future__ import annotations

import numpy as np

from dynpr.designs import (BLOCK, CLASS_BOUNDS, CLASS_LANES, CLASS_PLAN, ITERATION_STATE, KEPT_ROWS,
                           KERNEL_STRUCTS, WIDE_CLASS_BOUNDS)
from dynpr.designs import relabels  # noqa: F401 (the engine's size rule, named here too)
from dynpr.gpu import loader
from dynpr.gpu.device_graph import DeviceGraph, graph_args, grid_for, prefer_l1, resident_grid
from dynpr.gpu.buffers import CLASSES, RELABEL, RunShape, allocate, fill
from dynpr.pagerank.options import PageRankOptions


def class_bounds(n: int, l2_bytes: int) -> tuple[int, int, int]:
    """In-degree bounds of the default's classes for a graph of n vertices on a
    device with ``l2_bytes`` of L2: :data:`WIDE_CLASS_BOUNDS` when the gathered
    contributions (8n bytes) exceed half the L2, else :data:`CLASS_BOUNDS`."""
    return WIDE_CLASS_BOUNDS if 8 * n > l2_bytes // 2 else CLASS_BOUNDS


# Relabelling copies rows of up to RELABEL_ROW_LIMIT in-edges with 8 lanes each;
# longer ones (an R-MAT scale-22 hub has about 1e5 in-edges) in chunks of
# RELABEL_CHUNK edges, a block per chunk.
RELABEL_ROW_LIMIT, RELABEL_CHUNK = 256, 2048


def hub_first_order(in_offsets):
    """The vertices by descending in-degree (CuPy): vertex ``order[i]`` gets id ``i`` in the
    relabelled graph (by out-degree is no better where the two degrees of a vertex go
    together: docs/dynamic.md, "Kernel structure")."""
    return loader.require_cupy().argsort(in_offsets[:-1] - in_offsets[1:])


class Relabel:
    """Hub-first vertex ids (descending in-degree) for the default's approaches on large graphs.

    The pull gathers C[u] at random places of an 8n-byte array; with ids
    sorted by descending degree the hot contributions (hubs) share cache
    lines and stay in the L2. On :meth:`prepare` (timed, in ``partition_ms``)
    the device sorts the vertices, builds the relabelled in-CSR (each row's
    sources renamed but kept in their original order, so every vertex sums
    the same terms in the same order), 1/d and the starting ranks; the
    iterations run on :attr:`graph`, and :meth:`restore` (timed, in
    ``compute_ms``) maps the ranks back. The arrays are allocated here,
    untimed, so CUDA graphs can be captured on them. No iteration reads
    the out CSR (DF and DF-P pull from the first iteration here; DT
    searches it in the original ids, then renames what it reached), so
    :attr:`graph` keeps the original one. :attr:`new_id` renames original
    ids (a batch's). A personalized run's teleport terms (``teleport``, a device
    array in the original ids) are relabelled into :attr:`teleport` too, so
    the kernels read vertex i's at i. What it gains: docs/dynamic.md, "Kernel structure"."""

    def __init__(self, kernels, cupy, g: DeviceGraph, start, teleport=None):
        n, m = g.n, int(g.sources.size)
        self.kernels, self.cupy, self.original = kernels, cupy, g
        arrays = allocate(cupy, RELABEL, RunShape(n, m, relabel=True, personalized=teleport is not None))
        self.graph = DeviceGraph(n, g.offsets, g.targets, arrays["in_offsets"], arrays["sources"],
                                 arrays["inv_degree"])
        self.start, self.degree, self.new_id = arrays["start"], arrays["degree"], arrays["new_id"]
        self.original_teleport, self.teleport = teleport, arrays.get("teleport")
        fill(self.start, start)

    def prepare(self, ranks, row_limit: int | None = None) -> None:
        """Relabel the graph and write the relabelled starting ranks into ``ranks``
        (``row_limit``: :data:`RELABEL_ROW_LIMIT` unless given)."""
        cupy, g, r, n = self.cupy, self.original, self.graph, self.original.n
        row_limit = row_limit or RELABEL_ROW_LIMIT
        order = hub_first_order(g.in_offsets)
        if self.teleport is not None:  # new vertex i is original vertex order[i]
            cupy.take(self.original_teleport, order, out=self.teleport)
        self.kernels["relabel_vertices"](grid_for(n), (BLOCK,), (order, graph_args(g), self.start, self.new_id,
                                                                 self.degree, r.inv_degree, ranks))
        cupy.cumsum(self.degree, out=r.in_offsets[1:])
        rows = KERNEL_STRUCTS["RelabelArgs"].pack(order=order, rank=self.new_id, in_offsets=g.in_offsets,
                                                  sources=g.sources, new_offsets=r.in_offsets,
                                                  new_sources=r.sources, n=n)
        self.kernels["relabel_rows"](grid_for(8 * n), (BLOCK,), (rows, np.int64(row_limit)))
        long_rows = cupy.flatnonzero(self.degree > row_limit)  # reads the count back
        if long_rows.size:
            last = cupy.cumsum((self.degree[long_rows] + RELABEL_CHUNK - 1) // RELABEL_CHUNK)
            self.kernels["relabel_long_rows"]((int(last[-1]),), (BLOCK,), (
                rows, long_rows, last, np.int32(long_rows.size), np.int64(RELABEL_CHUNK)))

    def restore(self, ranks):
        """Ranks in the original ids from ranks in the relabelled ones."""
        return ranks[self.new_id]


def default_bounds(g: DeviceGraph) -> tuple[int, int, int]:
    """:func:`class_bounds` for a graph on the current device."""
    cupy = loader.require_cupy()
    return class_bounds(g.n, cupy.cuda.Device().attributes["L2CacheSize"])


class ClassRanks:
    """Rank step over degree classes: class k takes the vertices with in-degree
    in ``(bounds[k-1], bounds[k]]`` and ``lanes[k]`` lanes per vertex (a thread,
    a sub-warp, a warp, a block: :data:`dynpr.designs.CLASS_LANES`), listed by a one-launch classification
    (partition levels ``in``/``in_out``) or selected by degree inside each
    launch (``none``). ``prc`` gathers precomputed contributions R[u]/d[u].
    Every launch is gated by the device-side ``done`` flag.

    With the default classes and ``fuse``, one launch serves all classes and
    ends the iteration itself (``fuses_finish``): ``rank_fused`` over the
    class lists, whose block layout ``degree_classes`` writes on the device,
    or at level ``none`` over chunks of 256 vertices sorted into the same
    classes in shared memory; with ``persistent`` one cooperative launch
    (``rank_persistent``) runs every iteration of the solve. They take work
    from a device counter with a grid fixed on the host, so no host read sizes
    them. Otherwise one launch per class (sized from class counts read back).
    ``degree_offsets``: in-offsets to count the class units from where ``graph``'s
    are not written yet (a relabelled graph before :meth:`Relabel.prepare`: the
    original graph's, whose in-degrees are the same, renamed). ``contribution``: the
    dtype the fused kernels store contributions in (that of ``kernels``' module). ``teleport``: a
    personalized run's teleport terms (1 - alpha) p_v on the device, in ``graph``'s ids (None: the
    uniform (1 - alpha) / n); read by the fused kernels only."""

    def __init__(self, kernels, cupy, graph: DeviceGraph, mode, options: PageRankOptions, lanes, bounds, prc,
                 fuse, persistent: bool = False, degree_offsets=None, contribution: str = "float64", teleport=None):
        self.kernels, self.cupy, self.g, self.options = kernels, cupy, graph, options
        self.teleport = teleport
        self.lanes, self.bounds, self.prc = tuple(lanes), tuple(bounds), prc
        # One class needs no list: every vertex belongs to it.
        self.listed = options.partition in ("in", "in_out") and len(self.lanes) > 1
        self.names = [loader.group_kernel_name(k, self.listed, mode, prc) for k in self.lanes]
        self.fuses_finish = fuse and prc and self.lanes == CLASS_LANES
        self.persistent = persistent and self.fuses_finish
        if self.persistent:
            self.kernels = kernels = kernels | loader.persistent_kernels(contribution)
        k = len(self.lanes)
        limits = (-1,) + self.bounds + (1 << 62,)
        self.ranges = [(np.int64(limits[i]), np.int64(limits[i + 1])) for i in range(k)]
        self.counts = [graph.n] * k
        arrays = allocate(cupy, CLASSES, RunShape(graph.n, int(graph.sources.size), classes=k if self.listed else 0,
                                                  bounds=max(len(self.bounds), 1)))
        self.bounds_dev = arrays["bounds"]
        fill(self.bounds_dev, np.array(self.bounds or (0,), dtype=np.int64))
        # without lists the kernels read neither ids nor plan (kernels/layouts.cuh, ClassPlan)
        self.plan = arrays.get("plan")
        self.ids = arrays["ids"].reshape(k, graph.n) if self.listed else None
        # kernels/layouts.cuh's GraphArgs and PlanArgs, the same for every launch of the run
        self.graph_args = graph_args(graph)
        self.plan_args = KERNEL_STRUCTS["PlanArgs"].pack(ids=self.ids, plan=self.plan, bounds=self.bounds_dev)
        self._solve_options = {}
        self.kept_rows = 0
        self.fused_name = loader.fused_kernel_name(self.listed, mode, self.persistent)
        if self.fuses_finish:
            self.grid = _fused_grid(cupy, kernels[self.fused_name], graph, self.listed, self.bounds)
        if self.persistent and self.listed:
            # Blocks keep their unit for the solve where the units are no more than the blocks
            # the device holds: then the kernel with the kept path and shared memory for the kept
            # rows, a block per unit, and the rest of the L1 left to the cache (fewer blocks to
            # synchronise, more cache: docs/dynamic.md); otherwise the swept kernel alone.
            # The units are counted (a read back, untimed) only where ceil(n / BLOCK), their
            # fewest, does not already rule it out.
            name = loader.fused_kernel_name(True, mode, True, keep=True)
            grid = _fused_grid(cupy, kernels[name], graph, True, self.bounds, 4 * KEPT_ROWS)
            degree_offsets = graph.in_offsets if degree_offsets is None else degree_offsets
            if -(-graph.n // BLOCK) <= grid and (units := class_units(cupy, degree_offsets, self.bounds)) <= grid:
                self.kept_rows, self.fused_name, self.grid = KEPT_ROWS, name, units
                prefer_l1(cupy, kernels[name], units, 4 * KEPT_ROWS)

    @property
    def prepared_by_solve(self) -> bool:
        """Whether the solve's launch classifies, writes the starting contributions, announces
        DF/DF-P's batch sources and runs DT's search itself (:meth:`prepare` then does nothing):
        where blocks keep their units."""
        return self.kept_rows > 0

    def prepare(self, contributions=None) -> None:
        """Classify by in-degree and, given ``contributions`` = (R, C, C_other), write the starting
        contributions R / d into C and C_other (timed as ``partition_ms``; the classification's
        launch writes them too where there is one). Only the unfused launches read the class
        sizes back. Nothing where the solve's launch does it (``prepared_by_solve``)."""
        g = self.g
        if self.prepared_by_solve:
            return
        # R -> C and C_other; no pointers where no contributions are written (not read then)
        R, C, C_other = contributions or (None,) * 3
        buffers = KERNEL_STRUCTS["RankBuffers"].pack(R=(R, None), C=(C, C_other))
        if self.listed:
            self.kernels["degree_classes"](grid_for(g.n), (BLOCK,), (
                self.graph_args, self.plan_args, np.int32(len(self.lanes)), buffers,
                np.int32(contributions is not None)))
            if not self.fuses_finish:
                self.counts = [int(c) for c in self.plan[CLASS_PLAN.span("count")][:len(self.lanes)].get()]
        elif contributions is not None:
            self.kernels["start_contributions"](grid_for(g.n), (BLOCK,), (self.graph_args, buffers))

    def solve_options(self, pull_edges):
        """:func:`solve_options` of the run, packed once per ``pull_edges`` (a launch per
        iteration would pack it again each time)."""
        key = float(pull_edges)
        if key not in self._solve_options:
            self._solve_options[key] = solve_options(self.options, self.g.n, key, self.teleport)
        return self._solve_options[key]

    def solve(self, ranks, contributions, dv, dx, ever, slots, work, arrivals, state, pull_edges,
              sources=None) -> None:
        """Every iteration in one cooperative launch (``persistent``): iteration i reads
        buffer i % 2 of ``ranks`` and ``contributions`` (and of ``dx``) and writes the other;
        ``slots`` (six float64), ``work`` (three int32) and ``arrivals`` (four uint64: the
        kept units' barrier counters and the prologue's) start zeroed. Where
        ``prepared_by_solve`` the launch first does what :meth:`prepare` and ``mark_sources``
        do elsewhere: ``contributions[0]`` must then start zeroed, and ``sources`` are
        the batch edges of ``mark_sources`` (DF/DF-P announce the
        sources, DT searches from them; None: no batch), a ``BatchArgs`` (:func:`batch_args`).
        Launches and events less per solve (docs/dynamic.md, "Kept runs")."""
        if sources is None:  # no batch edges: the pointers are not read
            sources = batch_args(None, None, None, 0, 0)
        structs = KERNEL_STRUCTS
        buffers = structs["RankBuffers"].pack(R=ranks, C=contributions)
        flags = structs["FrontierBuffers"].pack(dv=dv, dx=dx, ever=ever)
        scratch = structs["SolveScratch"].pack(slots=slots, work=work, arrivals=arrivals, state=state,
                                               capacity=self.kept_rows, classify=int(self.prepared_by_solve))
        self.kernels[self.fused_name]((self.grid,), (BLOCK,), (
            self.graph_args, self.plan_args, buffers, flags, self.solve_options(pull_edges), scratch, sources),
            shared_mem=4 * self.kept_rows)

    def step(self, R, C, Rnew, Cnew, dv, dn, delta, state, frontier=None) -> None:
        """One gated iteration R -> Rnew (and C -> Cnew); the L-infinity change goes to ``delta``
        (``state``: the int32 array of ``IterationState``; only the fused kernels end the
        iteration themselves). The fused kernels take ``frontier`` = (dx_in, dx_out, ever,
        pull_edges) instead of ``dn``: DF/DF-P expand their affected set themselves, turning
        from push to pull mode after an iteration whose push work exceeds pull_edges edges
        (``kernels/rank_vertex.cuh``, dynamic_vertex)."""
        if self.fuses_finish:
            dx_in, dx_out, ever, pull_edges = frontier
            structs = KERNEL_STRUCTS
            buffers = structs["RankBuffers"].pack(R=(R, Rnew), C=(C, Cnew))
            flags = structs["FrontierBuffers"].pack(dv=dv, dx=(dx_in, dx_out), ever=ever)
            self.kernels[self.fused_name]((self.grid,), (BLOCK,), (
                self.graph_args, self.plan_args, buffers, flags, self.solve_options(pull_edges), delta, state))
            return
        done = state[ITERATION_STATE.span("done")]
        buffers = KERNEL_STRUCTS["RankBuffers"].pack(R=(R, Rnew), C=(C, Cnew))
        options = self.solve_options(-1.0)
        for k, lanes in enumerate(self.lanes):
            count = self.counts[k]
            if not count:
                continue
            grid = (count,) if lanes == BLOCK else grid_for(count * lanes)
            lo, hi = self.ranges[k]
            self.kernels[self.names[k]](grid, (BLOCK,), (
                class_range(self.ids[k] if self.listed else None, count, lo, hi), self.graph_args, buffers, dv, dn,
                options, delta, done))


def solve_options(options: PageRankOptions, n: int, pull_edges: float = -1.0, teleport=None):
    """``SolveOptions`` (kernels/layouts.cuh) of ``options`` on n vertices, turning to pull after
    ``pull_edges`` edges of push work (read by the fused kernels only), with a personalized run's
    ``teleport`` terms (a device array; None: the uniform c0, read by every kernel)."""
    o = options
    return KERNEL_STRUCTS["SolveOptions"].pack(
        teleport=teleport, c0=(1.0 - o.alpha) / n, alpha=o.alpha, tau_f=o.frontier_tolerance, tau_p=o.prune_tolerance,
        tau=o.tolerance, pull_edges=pull_edges, max_iterations=o.max_iterations)


def class_range(ids, count: int, lo: int, hi: int):
    """``ClassRange`` (kernels/layouts.cuh): a class's ids (None: unlisted, every vertex up to
    ``count`` whose degree is in (lo, hi])."""
    return KERNEL_STRUCTS["ClassRange"].pack(ids=ids, lo=lo, hi=hi, count=count)


def batch_args(del_src, del_dst, ins_src, deletions: int, insertions: int, new_id=None):
    """``BatchArgs`` (kernels/layouts.cuh) of a batch's device edge lists, renamed through
    ``new_id`` where given (a relabelled graph)."""
    return KERNEL_STRUCTS["BatchArgs"].pack(del_src=del_src, del_dst=del_dst, ins_src=ins_src, new_id=new_id,
                                            num_del=deletions, num_ins=insertions, renamed=int(new_id is not None))


def _units(counts) -> int:
    """Work units of the class lists for ``counts`` vertices per class: class k of
    :data:`CLASS_LANES` takes ``ceil(count * lanes / BLOCK)`` blocks of BLOCK threads."""
    return sum(-(-int(count) * lanes // BLOCK) for count, lanes in zip(counts, CLASS_LANES))


def class_units(cupy, in_offsets, bounds) -> int:
    """Work units of the default's class lists (``degree_classes``; class k takes the in-degrees
    in ``(bounds[k-1], bounds[k]]``), counted on the device and read back."""
    degree = in_offsets[1:] - in_offsets[:-1]
    classes = cupy.searchsorted(cupy.asarray(np.array(bounds, dtype=np.int64)), degree, side="left")
    return _units(cupy.bincount(classes, minlength=len(CLASS_LANES)).get())


def _fused_grid(cupy, kernel, g: DeviceGraph, listed: bool, bounds, dynamic_shared: int = 0) -> int:
    """Blocks of a fused class launch: about one resident wave
    (:func:`dynpr.gpu.device_graph.resident_grid`), or fewer when the work has fewer
    units. The units are counted without a host read: one per 256 vertices at level
    ``none``; with class lists, an upper bound from n and m (a vertex of class k has
    more in-edges than bounds[k-1], so at most m / (bounds[k-1] + 1) vertices belong to it)."""
    n, m = g.n, int(g.sources.size)
    if not listed:
        return resident_grid(cupy, kernel, -(-n // BLOCK), dynamic_shared)
    counts = [n if lower is None else min(n, m // (lower + 1)) for lower in (None,) + tuple(bounds)]
    return resident_grid(cupy, kernel, _units(counts), dynamic_shared)
