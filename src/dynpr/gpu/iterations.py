"""The GPU iteration loop with convergence decided on the device, shared by the default and the class baselines.

A rank step (:class:`dynpr.gpu.classes.ClassRanks`, or the push baseline)
computes an iteration; the kernel that ends it (the fused rank launch itself,
or ``finish_iteration`` after unfused launches) counts it and sets ``done`` in
the ``IterationState`` block (``kernels/layouts.cuh``) at the first change <=
tau or at the cap. Every later launch returns at once, so the host may launch
iterations ahead and read the state only now and then: with
``KernelVariant.graphs`` (fused steps only: their launches need no class sizes
from the host) iterations are captured into CUDA graphs before the timed
phases and replayed with one host read per replay; otherwise one host read
per iteration.

Timing: CUDA events give ``partition_ms`` (degree classes, relabelling,
the starting contributions), ``mark_ms`` (initial marking and first
expansion, or DT's BFS) and ``compute_ms`` (iterations with convergence
detection and expansion). A phase that launches nothing (where the solve's
launch classifies and marks itself: ``prepared_by_solve``) records no event
and times 0.
Allocations and CUDA-graph capture come first, untimed, and a short ``hold``
launch keeps the device busy while the host enqueues the timed launches
(:data:`HOLD_US`), so Python's launch latency stays out of the device's timeline.
"""

from __future__ import annotations

import math

import numpy as np

from dynpr.designs import BLOCK, ITERATION_STATE, KERNEL_STRUCTS
from dynpr.gpu import loader
from dynpr.gpu.classes import batch_args
from dynpr.gpu.buffers import DT_SEARCH, LOOP, RunShape, allocate, fill
from dynpr.gpu.device_graph import (MODES, DeviceGraph, EngineRun, count_affected, graph_args, grid_for,
                                    phase_times, resident_grid)

# Microseconds the device is held busy (kernel ``hold``) before a run's first event, longer
# than the host takes to enqueue the launches up to the first host read (docs/dynamic.md,
# "Timing the device's work"): the events then time the device's work, not the gaps
# where it waited for the next launch, as a C++ host's launches would keep up with it.
HOLD_US = 150

# Iterations per CUDA graph replay: 16, so that a typical dynamic run needs one host
# read; an iteration launched past convergence costs a launch whose blocks return at
# once, far less than a host read. Even, so a replay ends on buffer 0.
GRAPH_ITERATIONS = 16


def _dt_grid(cupy, kernel, n: int) -> int:
    """Blocks of DT's cooperative BFS: every block that fits the device at once (a level's
    entries go to groups of 8 lanes), fewer on a graph too small to need them."""
    return resident_grid(cupy, kernel, grid_for(16 * n)[0])


class IterationLoop:
    """Device buffers and launches of one run of ``approach`` with a rank step.

    Parameters
    ----------
    kernels : dynpr.gpu.loader.Kernels
        Holding the step's kernels (and, for unfused steps, ``finish_iteration``,
        ``clear_flags`` and ``mark_initial``).
    step : ClassRanks or PushRanks
        ``prepare(contributions)``, ``step(...)``, ``prc``, ``fuses_finish`` and ``persistent`` (then
        ``solve(...)`` runs every iteration in one launch).
    expansion : object, optional
        Unfused DF/DF-P only: ``prepare()`` and ``expand(dn, dv, ever, done)``.
    relabel : dynpr.gpu.classes.Relabel, optional
        A relabelled graph: ``g`` is then ``relabel.graph``, DF/DF-P pull from the first
        iteration (their initial marking signs the sources' contributions), and DT's search
        runs in the original ids of the out-CSR, its reached set renamed into ``dv``.
    pull_share : float
        Fused DF/DF-P: turn to pull mode after the first iteration whose push work exceeds this share
        of the edges (:data:`dynpr.designs.PULL_SHARE`); 0 pulls from the start (the batch sources then
        announce themselves in the sign of their contributions), ``inf`` never.
    rank_dtype : numpy dtype
        Of the two rank buffers: float64, or float32 for a single-precision step (``pull_float32``).
    contribution : str
        Of the two contribution buffers of a step with precomputed contributions: float64, or
        float32 for the default's kernels built for them (``KernelVariant.contribution``).
    """

    def __init__(self, kernels, cupy, approach: str, g: DeviceGraph, batch, start_ranks, options, step,
                 expansion=None, relabel=None, pull_share: float = math.inf, rank_dtype=np.float64,
                 contribution: str = "float64"):
        self.kernels, self.cupy, self.approach, self.g = kernels, cupy, approach, g
        self.batch, self.options, self.step, self.expansion, self.relabel = batch, options, step, expansion, relabel
        n = g.n
        affected_mode, self.frontier, _ = MODES[approach]
        self.fused = step.fuses_finish
        self.shape = RunShape(
            n, int(g.sources.size), batch.deletions if batch else 0, batch.insertions if batch else 0,
            prc=step.prc, fused=self.fused, affected=affected_mode, frontier=self.frontier,
            dt_search=approach == "dt" and not step.prepared_by_solve, relabel=relabel is not None,
            rank_dtype=np.dtype(rank_dtype).str, contribution=contribution)
        # zeroed (buffers.LOOP): a launch that announces batch sources ORs the starting
        # contributions into contribution0
        arrays = allocate(cupy, LOOP, self.shape)
        fill(arrays["rank0"], start_ranks)
        arrays["rank1"][...] = arrays["rank0"]
        self.ranks = [arrays["rank0"], arrays["rank1"]]
        self.contrib = [arrays["contribution0"], arrays["contribution1"]] if step.prc else self.ranks
        self.dv = arrays["dv"]
        # Kernels that take flags they do not use (no frontier) get dv in their place.
        self.ever, self.dn = arrays.get("ever", self.dv), arrays.get("dn", self.dv)
        self.dx = (arrays.get("dx0", self.dv), arrays.get("dx1", self.dv))
        self.delta = arrays["delta"]  # the iteration's change, and its push work in edges
        # a whole-solve launch's rings of three (change, push work) slots, work counters and barrier counters
        self.slots, self.work, self.arrivals = arrays["slots"], arrays["work"], arrays["arrivals"]
        self.state = arrays["state"]  # kernels/layouts.cuh, IterationState
        self.done = self.state[ITERATION_STATE.span("done")]
        if relabel and self.frontier:
            pull_share = 0.0  # only the in-CSR is relabelled: no push expansion
        self.pull_edges = np.float64(pull_share * int(g.sources.size) if pull_share > 0 else -1.0)
        self.announce = self.fused and self.frontier and pull_share == 0
        # whether a solve's launch that prepares itself takes the batch (DF/DF-P announce it, DT searches)
        self.batch_to_solve = self.announce or approach == "dt"
        if self.announce:
            self.state[ITERATION_STATE.index("pull")] = 1
        if affected_mode:
            for name in ("del_src", "del_dst", "ins_src"):
                fill(arrays[name], getattr(batch, name))
            self.edges = (arrays["del_src"], arrays["del_dst"], arrays["ins_src"])
        if self.shape.dt_search:
            search = allocate(cupy, DT_SEARCH, self.shape)  # kernels/dt_bfs.cu
            self.bfs = (search["visited"], search["levels"], search["control"])
            # the vertices reached, in the original ids of the out-CSR it searches (renamed into dv)
            self.reached = search.get("reached", self.dv)

    def iteration(self, j: int) -> None:
        """Launch iteration j: it reads buffer j % 2 and writes the other one."""
        a, b = j % 2, 1 - j % 2
        R, C = self.ranks, self.contrib
        if self.fused:
            frontier = (self.dx[a], self.dx[b], self.ever, self.pull_edges)
            self.step.step(R[a], C[a], R[b], C[b], self.dv, self.dn, self.delta, self.state, frontier)
            return
        n, k = np.int32(self.g.n), self.kernels
        if self.frontier:
            k["clear_flags"](grid_for(self.g.n), (BLOCK,), (self.dn, n, self.done))
        self.step.step(R[a], C[a], R[b], C[b], self.dv, self.dn, self.delta, self.state)
        k["finish_iteration"]((1,), (1,), (self.delta, self.state, np.float64(self.options.tolerance),
                                           np.int32(self.options.max_iterations)))
        if self.frontier:
            self.expansion.expand(self.dn, self.dv, self.ever, self.done)

    def sources(self):
        """``BatchArgs`` of the batch edges whose sources DF/DF-P announce, where they pull from
        the start, or from which DT searches, renamed where the graph is relabelled; else None."""
        if not self.batch_to_solve:
            return None
        del_src, del_dst, ins_src = self.edges
        return batch_args(del_src, del_dst, ins_src, self.batch.deletions, self.batch.insertions,
                          self.relabel.new_id if self.relabel else None)

    def marks(self) -> bool:
        """Whether :meth:`mark` launches anything: not where the solve's launch announces the
        batch sources or runs DT's search (``step.prepared_by_solve``)."""
        return MODES[self.approach][0] and not (self.batch_to_solve and self.step.prepared_by_solve)

    def mark(self) -> None:
        """The affected set before the first iteration: DT's BFS (one cooperative launch; it
        finds the old graph's reach too, ``kernels/dt_bfs.cu``), or DF/DF-P's initial marking and
        first expansion (none where the solve's launch does it, :meth:`marks`)."""
        if not self.marks():
            return
        del_src, del_dst, ins_src = self.edges
        nd, ni, n, g = np.int32(self.batch.deletions), np.int32(self.batch.insertions), self.g.n, self.g
        if self.approach == "dt":
            kernel = loader.dt_reachable_kernel()
            kernel((_dt_grid(self.cupy, kernel, n),), (BLOCK,), (
                graph_args(g), batch_args(del_src, del_dst, ins_src, nd, ni), *self.bfs, self.reached))
            if self.relabel:
                self.kernels["rename_flags"](grid_for(n), (BLOCK,), (self.reached, self.relabel.new_id, np.int32(n),
                                                                     self.dv))
        elif self.announce:
            self.kernels["mark_sources"](grid_for(int(nd) + int(ni)), (BLOCK,), (
                self.sources(), self.contrib[0], self.dv))
        elif self.fused:
            flags = KERNEL_STRUCTS["FrontierBuffers"].pack(dv=self.dv, dx=(None, None), ever=self.ever)
            self.kernels["mark_frontier"](grid_for(32 * (int(nd) + int(ni))), (BLOCK,), (
                batch_args(del_src, del_dst, ins_src, nd, ni), graph_args(g), flags, self.pull_edges, self.delta,
                self.state))
        else:
            self.kernels["mark_initial"](grid_for(int(nd) + int(ni)), (BLOCK,),
                                         (del_src, del_dst, nd, ins_src, ni, self.dv, self.dn, self.ever))
            self.expansion.expand(self.dn, self.dv, self.ever, self.done)

    def run(self, graphs: bool) -> EngineRun:
        """Run to convergence (or the cap); ``graphs``: replay captured CUDA graphs."""
        cupy = self.cupy
        # The allocations and uploads ran on the legacy default stream, which a
        # non-blocking stream does not wait for: finish them first (untimed).
        cupy.cuda.Device().synchronize()
        stream = cupy.cuda.Stream(non_blocking=True)
        with stream:
            replay = None
            persistent = self.step.persistent
            if graphs and not persistent:
                # Every launch's size is known on the host, so the graph is captured
                # before anything runs (host work outside the timed phases).
                stream.begin_capture()
                for j in range(GRAPH_ITERATIONS):
                    self.iteration(j)
                replay = stream.end_capture()
            events = [cupy.cuda.Event() for _ in range(4)]
            self.kernels["hold"]((1,), (1,), (np.int64(HOLD_US * 1000),))
            events[0].record()
            if self.relabel:
                self.relabel.prepare(self.ranks[0])
                if self.approach == "dt":  # it copies no rank it does not compute: the buffers start equal
                    self.ranks[1].data.copy_from_device_async(self.ranks[0].data, self.ranks[0].nbytes)
            # The starting contributions come before the marking, which may sign them.
            self.step.prepare((self.ranks[0], *self.contrib) if self.step.prc else None)
            if self.expansion:
                self.expansion.prepare()
            # A phase that launches nothing records no event (an event costs the device about
            # a microsecond) and times 0: its work is in the solve's launch.
            _end_phase(events, 1, bool(self.relabel or self.expansion) or not self.step.prepared_by_solve)
            self.mark()
            _end_phase(events, 2, self.marks())
            if persistent:
                self.step.solve(self.ranks, self.contrib, self.dv, self.dx, self.ever, self.slots, self.work,
                                self.arrivals, self.state, self.pull_edges,
                                self.sources() if self.step.prepared_by_solve else None)
            launched = 0
            while not persistent:
                if replay is not None:
                    replay.launch(stream)
                else:
                    self.iteration(launched)
                launched += 1
                if int(self.done[0]):  # the read synchronizes the stream
                    break
            if not self.relabel:
                events[3].record()  # the solve's end: reading its state back is a transfer (5.1.5)
            state = self.state.get()
            iterations = int(state[ITERATION_STATE.index("iterations")])
            final = self.ranks[iterations % 2]
            if self.relabel:  # which buffer to map back is known once the state is read
                final = self.relabel.restore(final)
                events[3].record()
            events[3].synchronize()
        return EngineRun(final, iterations, bool(state[ITERATION_STATE.index("converged")]),
                         phase_times(cupy, events), count_affected(cupy, self.approach, self.dv, self.ever, self.g.n))


def _end_phase(events, i: int, launched) -> None:
    """Record ``events[i]``, the end of a timed phase, or where the phase ``launched``
    nothing make it ``events[i - 1]`` (the phase then times 0)."""
    if launched:
        events[i].record()
    else:
        events[i] = events[i - 1]
