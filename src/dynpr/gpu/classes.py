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
                           WIDE_CLASS_BOUNDS)
from dynpr.designs import relabels  # noqa: F401 (the engine's size rule, named here too)
from dynpr.gpu import loader
from dynpr.gpu.device_graph import DeviceGraph, grid_for, prefer_l1, resident_grid
from dynpr.gpu.resident import upload
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
    relabelled graph. By out-degree measured the same on R-MAT scale 22 (H100, Static 39.6
    against 39.7 ms), where the two degrees of a vertex go together."""
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
    ids (a batch's).

    Measured on the H100 (one run), Static on R-MAT scale 22:
    46.4 ms without, 38.9 ms with relabelling (2.7 ms of it relabelling;
    557 against 712 us per iteration), cuSPARSE 60.4 ms, 65 iterations each."""

    def __init__(self, kernels, cupy, g: DeviceGraph, start):
        n, m = g.n, int(g.sources.size)
        self.kernels, self.cupy, self.original = kernels, cupy, g
        self.graph = DeviceGraph(n, g.offsets, g.targets, cupy.zeros(n + 1, dtype=cupy.int64),
                                 cupy.empty(m, dtype=cupy.int32), cupy.empty(n, dtype=cupy.float64))
        self.start = upload(start, np.float64)
        self.degree = cupy.empty(n, dtype=cupy.int64)
        self.new_id = cupy.empty(n, dtype=cupy.int32)

    def prepare(self, ranks, row_limit: int | None = None) -> None:
        """Relabel the graph and write the relabelled starting ranks into ``ranks``
        (``row_limit``: :data:`RELABEL_ROW_LIMIT` unless given)."""
        cupy, g, r, n = self.cupy, self.original, self.graph, self.original.n
        row_limit = row_limit or RELABEL_ROW_LIMIT
        order = hub_first_order(g.in_offsets)
        self.kernels["relabel_vertices"](grid_for(n), (BLOCK,), (order, np.int32(n), g.in_offsets, g.inv_degree,
                                                                 self.start, self.new_id, self.degree, r.inv_degree,
                                                                 ranks))
        cupy.cumsum(self.degree, out=r.in_offsets[1:])
        self.kernels["relabel_rows"](grid_for(8 * n), (BLOCK,), (order, np.int32(n), g.in_offsets, g.sources,
                                                                 self.new_id, r.in_offsets, r.sources,
                                                                 np.int64(row_limit)))
        long_rows = cupy.flatnonzero(self.degree > row_limit)  # reads the count back
        if long_rows.size:
            last = cupy.cumsum((self.degree[long_rows] + RELABEL_CHUNK - 1) // RELABEL_CHUNK)
            self.kernels["relabel_long_rows"]((int(last[-1]),), (BLOCK,), (
                order, long_rows, last, np.int32(long_rows.size), np.int64(RELABEL_CHUNK), g.in_offsets,
                g.sources, self.new_id, r.in_offsets, r.sources))

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
    original graph's, whose in-degrees are the same, renamed)."""

    def __init__(self, kernels, cupy, graph: DeviceGraph, mode, options: PageRankOptions, lanes, bounds, prc,
                 fuse, persistent: bool = False, degree_offsets=None):
        self.kernels, self.cupy, self.g, self.options = kernels, cupy, graph, options
        self.lanes, self.bounds, self.prc = tuple(lanes), tuple(bounds), prc
        # One class needs no list: every vertex belongs to it.
        self.listed = options.partition in ("in", "in_out") and len(self.lanes) > 1
        self.names = [loader.group_kernel_name(k, self.listed, mode, prc) for k in self.lanes]
        self.fuses_finish = fuse and prc and self.lanes == CLASS_LANES
        self.persistent = persistent and self.fuses_finish
        if self.persistent:
            self.kernels = kernels = kernels | loader.persistent_kernels()
        k = len(self.lanes)
        limits = (-1,) + self.bounds + (1 << 62,)
        self.ranges = [(np.int64(limits[i]), np.int64(limits[i + 1])) for i in range(k)]
        self.counts = [graph.n] * k
        self.bounds_dev = cupy.asarray(np.array(self.bounds or (0,), dtype=np.int64))
        if self.listed:
            self.plan = cupy.zeros(CLASS_PLAN.words, dtype=cupy.int32)  # kernels/layouts.cuh, ClassPlan
            self.ids = cupy.empty((k, graph.n), dtype=cupy.int32)
        else:  # the fused kernels take them, unused without lists
            self.plan, self.ids = self.bounds_dev, self.bounds_dev
        self.kept_rows = 0
        self.fused_name = loader.fused_kernel_name(self.listed, mode, self.persistent)
        if self.fuses_finish:
            self.grid = _fused_grid(cupy, kernels[self.fused_name], graph, self.listed, self.bounds)
        if self.persistent and self.listed:
            # Blocks keep their unit for the solve where the units are no more than the blocks
            # the device holds: then the kernel with the kept path and shared memory for the kept
            # rows, a block per unit, and the rest of the L1 left to the cache (H100,
            # sx-mathoverflow Static: a block per unit instead of the resident grid 0.355 ->
            # 0.321 ms, the L1 left over 0.283 -> 0.271 ms); otherwise the swept kernel alone.
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
        if self.listed:
            R, C, C_other = contributions or (g.inv_degree,) * 3  # not written without contributions
            self.kernels["degree_classes"](grid_for(g.n), (BLOCK,), (
                g.in_offsets, np.int32(g.n), self.bounds_dev, np.int32(len(self.lanes)), self.plan, self.ids,
                np.int32(contributions is not None), R, g.inv_degree, C, C_other))
            if not self.fuses_finish:
                self.counts = [int(c) for c in self.plan[CLASS_PLAN.span("count")][:len(self.lanes)].get()]
        elif contributions is not None:
            R, C, C_other = contributions
            self.kernels["contributions"](grid_for(g.n), (BLOCK,), (R, g.inv_degree, np.int32(g.n), C, C_other))

    def _fused_args(self, ranks, dv, dx, ever, scratch, state, pull_edges) -> tuple:
        """Arguments of ``rank_fused`` (ranks = R, C, Rnew, Cnew; dx = dx_in, dx_out;
        scratch = the change slots) or ``rank_persistent`` (ranks = R0, C0, R1, C1;
        dx = dx0, dx1; scratch = the change slots, the work counters, the barriers'
        arrival counters, the kept rows' capacity, whether the launch prepares, and the
        batch sources it announces)."""
        g, o = self.g, self.options
        c0, alpha = np.float64((1.0 - o.alpha) / g.n), np.float64(o.alpha)
        tau_f, tau_p = np.float64(o.frontier_tolerance), np.float64(o.prune_tolerance)
        return ((self.ids, np.int32(g.n), self.plan, self.bounds_dev, g.in_offsets, g.sources, g.inv_degree, *ranks,
                 dv, c0, alpha, tau_f, tau_p, g.offsets, g.targets, *dx, ever, *scratch, state,
                 np.float64(o.tolerance), np.int32(o.max_iterations), np.float64(pull_edges)))

    def solve(self, ranks, contributions, dv, dx, ever, slots, work, arrivals, state, pull_edges,
              sources=None) -> None:
        """Every iteration in one cooperative launch (``persistent``): iteration i reads
        buffer i % 2 of ``ranks`` and ``contributions`` (and of ``dx``) and writes the other;
        ``slots`` (six float64), ``work`` (three int32) and ``arrivals`` (four uint64: the
        kept units' barrier counters and the prologue's) start zeroed. Where
        ``prepared_by_solve`` the launch first does what :meth:`prepare` and ``mark_sources``
        do elsewhere: ``contributions[0]`` must then start zeroed, and ``sources`` are
        ``mark_sources``' arguments but the contributions and flags (DF/DF-P announce the
        sources, DT searches from them; None: no batch).
        Measured on the H100 against those launches of their own (commit 1a91359;
        sx-mathoverflow, temporal, 40 batches, medians, two rounds each): DF-P 0.076-0.080 ->
        0.074 ms at 1e-5, Static 0.266-0.272 -> 0.262-0.267 ms; CollegeMsg Static 0.186 ->
        0.178-0.182 ms."""
        if sources is None:  # no batch edges: the pointers are not read
            sources = (self.plan, self.plan, np.int32(0), self.plan, np.int32(0), np.int32(0), self.plan)
        args = self._fused_args((ranks[0], contributions[0], ranks[1], contributions[1]), dv, dx, ever,
                                (slots, work, arrivals, np.int32(self.kept_rows), np.int32(self.prepared_by_solve),
                                 *sources), state, pull_edges)
        self.kernels[self.fused_name]((self.grid,), (BLOCK,), args, shared_mem=4 * self.kept_rows)

    def step(self, R, C, Rnew, Cnew, dv, dn, delta, state, frontier=None) -> None:
        """One gated iteration R -> Rnew (and C -> Cnew); the L-infinity change goes to ``delta``
        (``state``: the int32 array of ``IterationState``; only the fused kernels end the
        iteration themselves). The fused kernels take ``frontier`` = (dx_in, dx_out, ever,
        pull_edges) instead of ``dn``: DF/DF-P expand their affected set themselves, turning
        from push to pull mode after an iteration whose push work exceeds pull_edges edges
        (``kernels/rank_vertex.cuh``, dynamic_vertex)."""
        g, o = self.g, self.options
        c0, alpha = np.float64((1.0 - o.alpha) / g.n), np.float64(o.alpha)
        tau_f, tau_p = np.float64(o.frontier_tolerance), np.float64(o.prune_tolerance)
        if self.fuses_finish:
            dx_in, dx_out, ever, pull_edges = frontier
            args = self._fused_args((R, C, Rnew, Cnew), dv, (dx_in, dx_out), ever, (delta,), state, pull_edges)
            self.kernels[self.fused_name]((self.grid,), (BLOCK,), args)
            return
        done = state[ITERATION_STATE.span("done")]
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
