"""The experiments of the paper's section 5, as functions that return result rows.

* :func:`run_batches` with ``"temporal"`` — real-world dynamic graphs (5.3.1):
  per batch fraction, start from the base graph with Static ranks and apply
  the consecutive batches one after another; every approach carries its own
  ranks from batch to batch.
* :func:`run_batches` with ``"random"`` — static graphs with random batches
  (5.3.2): every batch is applied to the full graph on its own and every
  approach starts from the full graph's Static ranks.
* :func:`run_kahn` — level-synchronous Kahn (after the report *CUDA-Based Cycle
  Detection in Directed Graphs Using Kahn's Algorithm*) on the graph without
  its self-loops.

Each returns a list of rows (:func:`dynpr.evaluation.results.make_row`); the L1 error of
an approach is measured against :func:`dynpr.pagerank.reference` on the
updated graph.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Sequence

import numpy as np

from dynpr.backend import resolve_backend
from dynpr.batches import (Batch, GraphSlot, apply_batch, apply_batch_in_place, batch_file_edges, read_batch_params,
                           read_batches, undo_batch_in_place)
from dynpr.designs import REFERENCE_TOLERANCE
from dynpr.graph.graph import Graph, on_device, to_host
from dynpr.graph.hostmem import GIB, rss_line
from dynpr.pagerank import l1_error, reference, static, update
from dynpr.pagerank.options import PageRankOptions, PageRankResult
from dynpr.evaluation.results import git_commit, make_row, timestamp
from dynpr.pipeline.jobs import Log, fraction_label, no_lap, no_log, read_input


def options_from_config(pagerank: Mapping) -> tuple[PageRankOptions, float]:
    """PageRank options and the reference tolerance from the ``pagerank`` config section.

    Keys that are not fields of :class:`PageRankOptions` (``reference_tolerance``)
    are not passed to it; absent keys keep the paper's defaults.

    Returns
    -------
    options : PageRankOptions
    reference_tolerance : float
    """
    names = {f.name for f in dataclasses.fields(PageRankOptions)}
    options = PageRankOptions(**{k: v for k, v in pagerank.items() if k in names})
    return options, float(pagerank.get("reference_tolerance", REFERENCE_TOLERANCE))


def _row(dataset, experiment, res: PageRankResult, *, fraction, batch_index, repeat, batch, graph,
         error, commit) -> dict:
    phases = res.phases or {}
    return make_row(
        dataset=dataset, experiment=experiment, approach=res.approach, backend=res.backend,
        device=res.device, batch_fraction=float(fraction), batch_index=batch_index, repeat=repeat,
        deletions=batch.deletions, insertions=batch.insertions, vertices=graph.num_vertices,
        edges=graph.num_edges, iterations=res.iterations, converged=res.converged, time_ms=res.time_ms,
        l1_error=error,
        partition_ms=phases.get("partition_ms", math.nan), mark_ms=phases.get("mark_ms", math.nan),
        compute_ms=phases.get("compute_ms", math.nan), affected=res.affected,
        variant=res.variant, git_commit=commit, timestamp=timestamp(),
    )


def _warm_up(approaches, old, new, batch, ranks, options, backend) -> None:
    # One untimed call per approach keeps first-use costs out of every measured row (5.1.5):
    # kernel compilation on the GPU, SciPy's and the allocator's first calls on the CPU.
    for approach in approaches:
        update(approach, old, new, batch, ranks, options, backend=backend)


def _no_phase(name: str):
    return contextlib.nullcontext()


def _score(ranks, ref) -> float:
    """L1 error against the reference, which waits on the host while the approaches run: uploaded
    for the sum (where the ranks are: the same sum on the device as before, bit for bit)."""
    if on_device(ranks) and not on_device(ref):
        from dynpr.gpu.resident import upload

        ref = upload(ref)
    return l1_error(ranks, ref)


def _measure_batch(dataset, experiment, approaches, old, new, batch, previous, options, *, backend, repeat,
                   reference_tolerance, fraction, index, count, commit, log, clock,
                   phase=_no_phase) -> tuple[list[dict], dict]:
    """Every approach on one batch, ``repeat`` timed runs each, scored against one reference.

    ``previous`` maps each approach to the ranks it starts from; the returned
    mapping holds, for the temporal experiment, the ranks each approach ended with
    (the last repeat's), which the next batch starts from. Static runs first, and the
    reference goes on from its ranks (:func:`dynpr.pagerank.reference`); every other
    run is scored as it ends and only its row kept, so a batch holds the ranks of
    Static's repeats, the reference and what the temporal experiment carries.
    ``clock`` (a :class:`Stopwatch`) gathers the wall time of runs, reference and scoring, and
    ``phase`` (:meth:`dynpr.gpu.memory.PoolPeak.phase` on the GPU) the device pool's peak of each
    approach and of the reference. The reference's ranks wait on the host while the other
    approaches run (8 bytes per vertex less on the device), uploaded to score each run.
    """
    ref = None
    rows, final = [], {}
    for approach in sorted(approaches, key=lambda a: a != "static"):  # stable: the others keep their order
        results, errors = [], []
        with phase(approach):
            for _ in range(repeat):
                with clock("runs"):
                    res = update(approach, old, new, batch, previous[approach], options, backend=backend)
                clock.timed += res.time_ms / 1e3
                if ref is not None:  # scored now; the ranks go unless carried to the next batch
                    with clock("score"):
                        errors.append(_score(res.ranks, ref))
                    res = res if experiment == "temporal" else dataclasses.replace(res, ranks=None)
                results.append(res)
        if ref is None:
            with clock("reference"), phase("reference"):
                ref = reference(new, options, backend=backend, tolerance=reference_tolerance,
                                max_iterations=options.max_iterations,
                                static_result=results[-1] if approach == "static" else None)
            with clock("score"):
                errors = [l1_error(res.ranks, ref) for res in results]
                ref = to_host(ref)
        for r, (res, err) in enumerate(zip(results, errors)):
            rows.append(_row(dataset, experiment, res, fraction=fraction, batch_index=index, repeat=r,
                             batch=batch, graph=new, error=err, commit=commit))
        if experiment == "temporal":
            final[approach] = results[-1].ranks
        log(f"{dataset} {approach} fraction={fraction_label(fraction)} batch {index + 1}/{count}: "
            f"median {np.median([res.time_ms for res in results]):.3f} ms of {repeat}, {results[-1].iterations} iterations, "
            f"L1 error {errors[-1]:.3e}")
        del results
    return rows, final


def run_batches(
    experiment: str,
    dataset: str,
    graph: Graph | GraphSlot,
    batches: Mapping[float, Sequence[Batch]],
    approaches: Sequence[str],
    options: PageRankOptions | None = None,
    *,
    backend: str = "auto",
    reference_tolerance: float = REFERENCE_TOLERANCE,
    repeat: int = 1,
    log: Log = no_log,
    commit: str | None = None,
    plan_bytes: int | None = None,
) -> list[dict]:
    """The temporal or the random-batch experiment: every approach on every batch.

    Each fraction's batches start from ``graph`` and every approach from its
    Static ranks. With the GPU backend the graph is uploaded once and every
    batch applied on the device; ranks, reference and L1 errors stay there too,
    so a batch costs no graph-sized host work or copy. ``"temporal"`` applies the batches one after another, each
    approach carrying its own ranks from batch to batch (Static ignores them);
    ``"random"`` applies each batch to ``graph`` on its own: in place, one CSR at a time, and
    undone after its runs (:func:`dynpr.batches.apply_batch_in_place`), so the device never holds
    two graphs; the approaches get no old graph (DT finds its reach from the batch), unless
    :func:`keeps_old_graph`.

    Parameters
    ----------
    experiment : {"temporal", "random"}
        Which experiment; written in every row.
    dataset : str
        Name written in every row.
    graph : Graph or GraphSlot
        The base graph (temporal: first ``base_fraction`` of the temporal edges,
        self-loops on all vertices) or the full prepared graph (random); in a slot that
        holds the only reference to it, for its memory to go while a batch is applied
        (the slot holds the base graph again at the end).
    batches : mapping of float to sequence of Batch
        Per batch fraction, the consecutive (temporal) or independent (random) batches;
        read fraction by fraction (:class:`BatchFiles` reads each file only then).
    approaches : sequence of str
        Approach codes (``static nd dt df dfp``).
    options : PageRankOptions, optional
        Paper defaults when omitted.
    backend : str
        ``auto``, ``cpu`` or ``gpu``.
    reference_tolerance : float
        Iteration tolerance of the reference Static run (capped at ``options.max_iterations``).
    repeat : int
        Timed runs per approach and batch, after one untimed warm-up per approach; one row each
        (the summary and the claims take each batch's median).
    log : callable, optional
        Receives one progress line per approach and batch.
    commit : str, optional
        Git commit for the rows; looked up when omitted.
    plan_bytes : int, optional
        The device memory plan's peak, logged with the pool's peak of each phase (GPU).

    Returns
    -------
    list of dict
        One row per fraction × batch × approach × repeat, ``batch_index`` counting from 0.

    Raises
    ------
    ValueError
        On an unknown experiment.
    """
    if experiment not in ("temporal", "random"):
        raise ValueError(f"experiment must be 'temporal' or 'random', got {experiment!r}")
    options = options or PageRankOptions()
    backend = resolve_backend(backend)
    commit = commit if commit is not None else git_commit()
    slot = graph if isinstance(graph, GraphSlot) else GraphSlot(graph)
    del graph  # the slot holds it: applying a batch in place gives the old graph's memory back
    phase = _no_phase
    pool = None
    if backend == "gpu":
        from dynpr.gpu.memory import PoolPeak
        from dynpr.gpu.resident import to_resident, to_resident_batch

        pool = PoolPeak(plan_bytes)
        phase = pool.phase
        # uploaded once: every batch is then applied on the device (apply_batch runs where the graph is)
        with phase("load"):
            slot.put(to_resident(slot.take()), slot.loops_complete)
    # the temporal experiment goes back to its base graph after each fraction's sequence: kept, with
    # each batch's old graph (its graphs are the small real ones)
    keep_old = experiment == "temporal" or keeps_old_graph(approaches, options)
    with phase("base static"):
        base_ranks = static(slot.graph, options, backend=backend).ranks
    rows: list[dict] = []
    warmed = False
    for fraction in batches:
        clock = Stopwatch()
        with clock("load"):
            sequence = batches[fraction]  # a lazy mapping reads the fraction's file here
        previous = {a: base_ranks for a in approaches}
        start = slot.graph if experiment == "temporal" else None
        for i, batch in enumerate(sequence):
            with clock("apply"), phase("apply"):
                if backend == "gpu":
                    batch = to_resident_batch(batch)  # one upload for the apply and every approach
                old = slot.graph if keep_old else None
                if keep_old:  # the old graph stays beside the new one
                    slot.put(apply_batch(old, batch))
                else:  # one CSR at a time: the old graph's memory goes as the new one is built
                    undo = apply_batch_in_place(slot, batch)[1]
            if not warmed:
                with clock("warm-up"), phase("warm-up"):
                    _warm_up(approaches, old, slot.graph, batch, base_ranks, options, backend)
                warmed = True
            batch_rows, final = _measure_batch(
                dataset, experiment, approaches, old, slot.graph, batch, previous, options, backend=backend,
                repeat=repeat, reference_tolerance=reference_tolerance, fraction=fraction, index=i,
                count=len(sequence), commit=commit, log=log, clock=clock, phase=phase)
            rows += batch_rows
            if experiment == "temporal":
                previous = final
            else:  # every batch of the random experiment starts from the full graph
                with clock("restore"), phase("restore"):
                    if keep_old:
                        slot.put(old)
                    else:
                        undo_batch_in_place(slot, undo)
            log(f"{dataset} fraction={fraction_label(fraction)} batch {i + 1}/{len(sequence)}: {clock.report()}"
                + (f"; {pool.line()}" if pool else "") + f"; {rss_line()}")
            clock.clear()
            del old, final, batch_rows
        if start is not None:
            slot.put(start)
        del sequence, previous, start
    return rows


def keeps_old_graph(approaches, options: PageRankOptions) -> bool:
    """Whether :func:`run_batches` keeps each batch's old graph beside the new one: only for DT in the
    paper's design (variant ``partitioned``), whose GPU search reads the old graph; every other
    approach and design finds what it needs in the new graph and the batch."""
    return "dt" in approaches and options.variant == "partitioned"


class Stopwatch:
    """Wall seconds per named step of a batch, and the timed PageRank inside its runs, for the run log."""

    def __init__(self):
        self.seconds: dict[str, float] = {}
        self.timed = 0.0  # event-timed PageRank seconds within the "runs" step

    @contextlib.contextmanager
    def __call__(self, step: str):
        start = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[step] = self.seconds.get(step, 0.0) + time.perf_counter() - start

    def clear(self) -> None:
        self.seconds.clear()
        self.timed = 0.0

    def report(self) -> str:
        """``load 0.01 s, apply 0.20 s, runs 1.31 s (timed PageRank 0.93 s), ...`` in the order the steps came."""
        return ", ".join(f"{step} {sec:.2f} s" + (f" (timed PageRank {self.timed:.2f} s)" if step == "runs" else "")
                         for step, sec in self.seconds.items())


class BatchFiles(Mapping):
    """Batch files by fraction, each read when its fraction comes (one fraction's batches in memory
    at a time: at fraction 0.1 of a billion-edge graph a file holds a hundred million edges)."""

    def __init__(self, paths: Mapping[float, str | Path]):
        self.paths = dict(paths)

    def __getitem__(self, fraction: float) -> list[Batch]:
        return read_input(self.paths[fraction], read_batches)

    def __iter__(self) -> Iterator[float]:
        return iter(self.paths)

    def __len__(self) -> int:
        return len(self.paths)


def run_dataset(
    experiment: str,
    dataset: str,
    graph_path: str | Path,
    batch_paths: Mapping[float, str | Path],
    approaches: Sequence[str],
    options: PageRankOptions | None = None,
    *,
    base_path: str | Path | None = None,
    backend: str = "auto",
    reference_tolerance: float = REFERENCE_TOLERANCE,
    repeat: int = 1,
    log: Log = no_log,
    commit: str | None = None,
    lap: Log = no_lap,
) -> list[dict]:
    """One dataset's experiment from its files, as the workflow's ``run_experiment`` runs it.

    The prepared graph is memory-mapped and checked (:meth:`Graph.load`); every batch
    file is checked against the graph it was made for before any run. With the GPU
    backend the experiment's device memory is planned first
    (:func:`dynpr.gpu.memory.check_experiment_fits`, one line when it does not fit), every
    kernel module of the run is built at once (:func:`dynpr.gpu.loader.build_modules`),
    the graph is uploaded and its host copy dropped, so the host holds one copy of
    the graph at most, and only while it loads. Then :func:`run_batches` and
    :func:`run_kahn` on the full graph.

    Parameters
    ----------
    experiment, dataset, approaches, options, backend, reference_tolerance, repeat, log, commit
        As for :func:`run_batches`.
    graph_path : path
        The prepared graph (``results/graphs/{dataset}.npz``).
    batch_paths : mapping of float to path
        Batch file of each fraction, in run order.
    base_path : path, optional
        The temporal experiment's base graph (``temporal_base.npz``).
    lap : callable
        Books the time since its previous call to a phase (:meth:`dynpr.pipeline.jobs.JobLog.lap`):
        ``load and checks`` here, with the GPU upload and the kernel builds
        (:func:`dynpr.gpu.loader.build_modules`, every module of the run at once).

    Returns
    -------
    list of dict
        :func:`run_batches`' rows, then :func:`run_kahn`'s.
    """
    from dynpr.graph.validate import check_made_for

    options = options or PageRankOptions()
    backend = resolve_backend(backend)
    commit = commit if commit is not None else git_commit()
    started = time.perf_counter()
    graph = read_input(graph_path, Graph.load)
    start = read_input(base_path, Graph.load) if experiment == "temporal" else graph
    largest_batch = 0
    for path in batch_paths.values():
        params = read_input(path, read_batch_params)
        # a batch file made for another graph (a stale or copied file) is refused, not applied
        check_made_for(path, params, start, str(base_path if experiment == "temporal" else graph_path))
        largest_batch = max(largest_batch, batch_file_edges(path))
    log(f"{dataset}: graph {graph.num_vertices} vertices, {graph.num_edges} edges "
        f"({graph.nbytes / GIB:.2f} GiB) loaded and checked in {time.perf_counter() - started:.1f} s; {rss_line()}")
    if backend == "gpu":
        from dynpr.gpu.loader import build_modules
        from dynpr.gpu.memory import check_experiment_fits
        from dynpr.gpu.resident import to_resident

        plan, plan_bytes = check_experiment_fits(
            start.num_vertices, max(start.num_edges, graph.num_edges), largest_batch, approaches, options,
            repeat=repeat, temporal=experiment == "temporal")
        log(f"{dataset}: GPU memory plan: {plan}")
        log(f"{dataset}: GPU kernels built or loaded in {build_modules():.1f} s (all at once, not batch by batch)")
        uploading = time.perf_counter()
        start = to_resident(start)
        graph = to_resident(graph) if experiment == "temporal" else None
        log(f"{dataset}: uploaded in {time.perf_counter() - uploading:.1f} s; host copy dropped; {rss_line()}")
    else:
        plan_bytes = None
        graph = graph if experiment == "temporal" else None
    lap("load and checks")
    slot = GraphSlot(start)
    del start  # the slot's is the only reference (the random experiment's graph is the start)
    rows = run_batches(experiment, dataset, slot, BatchFiles(batch_paths), approaches, options, backend=backend,
                       reference_tolerance=reference_tolerance, repeat=repeat, log=log, commit=commit,
                       plan_bytes=plan_bytes)
    graph = graph if graph is not None else slot.take()
    return rows + run_kahn(dataset, graph, backend=backend, repeat=repeat, log=log, commit=commit)


def run_kahn(
    dataset: str,
    graph: Graph,
    *,
    backend: str = "auto",
    repeat: int = 1,
    log: Log = no_log,
    commit: str | None = None,
) -> list[dict]:
    """Kahn's algorithm on ``graph`` without its self-loops (a self-loop alone makes a cycle).

    Returns
    -------
    list of dict
        ``repeat`` rows with ``experiment == approach == "kahn"``: ``iterations``
        = levels, ``affected`` = processed vertices, ``edges`` = edges without
        self-loops.
    """
    from dynpr.kahn import kahn

    backend = resolve_backend(backend)
    commit = commit if commit is not None else git_commit()
    plain = graph.without_self_loops()
    kahn(plain, backend=backend)  # warm-up: compilation and first calls outside the timed runs
    rows = []
    for r in range(repeat):
        res = kahn(plain, backend=backend)
        rows.append(make_row(
            dataset=dataset, experiment="kahn", approach="kahn", backend=res.backend, device=res.device,
            batch_fraction=math.nan, batch_index=0, repeat=r, deletions=0, insertions=0,
            vertices=plain.num_vertices, edges=plain.num_edges, iterations=res.levels,
            time_ms=res.time_ms, l1_error=math.nan, affected=res.processed, git_commit=commit,
            timestamp=timestamp(),
        ))
        log(f"{dataset} kahn repeat {r + 1}/{repeat}: {res.time_ms:.3f} ms, {res.levels} levels, "
            f"{res.processed}/{plain.num_vertices} processed ({'DAG' if res.is_dag else 'has cycles'})")
    return rows
