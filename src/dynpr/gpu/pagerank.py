"""GPU PageRank: the default engine (variant ``classes``) and :func:`update`.

Same semantics as the CPU twin :mod:`dynpr.pagerank.cpu` (the paper's Alg.
1-5). The default gathers precomputed contributions R[u]/d[u] in four
in-degree classes (:data:`dynpr.designs.CLASS_LANES`: a thread up to 8
in-edges, 8 lanes up to 64, a warp up to 512, a block above;
:func:`dynpr.gpu.classes.class_bounds` widens them on large graphs), all in one
launch per iteration whose last block ends the iteration on the device: it
counts it, tests the L-infinity change (folded per block with an integer
``atomicMax`` on the double's bit pattern, exact for non-negative doubles) and
sets ``done``; launches past that return at once. Iterations are replayed from
CUDA graphs with one host read per replay (:mod:`dynpr.gpu.iterations`); a
graph of fewer than :data:`dynpr.designs.PERSISTENT_EDGES` edges runs its whole
solve in one cooperative launch instead, a grid-wide sync ending each iteration.
DT, DF and DF-P compute only affected vertices and copy no rank where the two
rank buffers agree; DF/DF-P expand the affected set inside that launch, first
pushing marks to out-neighbours and, once the initial marking's or an
iteration's work exceeds :data:`dynpr.designs.PULL_SHARE` of the edges,
pulling (every vertex gathers and learns from the sign of its in-neighbours'
contributions whether one expanded: the direction-optimizing BFS's bottom-up
step). Graphs whose contributions overflow the L2 are relabelled hub-first for
Static, ND, DF and DF-P (DF/DF-P then pull from the first iteration). DT's BFS
is one cooperative launch. The kernels are ``kernels/pagerank.cu``; measured
costs in docs/dynamic.md.

Partition levels (the paper's Fig. 1): ``in`` and ``in_out`` list the classes
in one ``degree_classes`` launch (the same kernels at both: with the
expansion fused, an out-degree partition has no use); ``none`` has no
partition phase, and the launch (``rank_fused`` without lists) sorts each
chunk of 256 vertices by degree in shared memory. Every vertex gets the same lanes and
order at every level, so the ranks agree bit for bit.

Personalized PageRank (``PageRankOptions.personalization``): the teleport terms
(1 - alpha) p_v are computed on the host as the CPU twin computes them, uploaded
(untimed) and read by the rank kernels through ``SolveOptions.teleport``
(relabelled with the graph where it is); unpersonalized runs pass a null pointer
and read no such array. The default designs only (``classes*``).

The designs the default is measured against (``PageRankOptions.variant``
other than ``classes``, declared in :data:`dynpr.designs.VARIANTS`) live in
:mod:`dynpr.gpu.baselines`; :func:`update` hands them over unchanged.
"""

from __future__ import annotations

import functools
from dataclasses import replace

import numpy as np

from dynpr.backend import device_name
from dynpr.designs import (APPROACHES, CLASS_LANES, KEPT_PULL_SHARE, PARTITIONS, PULL_SHARE, RELABEL_APPROACHES,
                           STATIC_APPROACHES, KernelVariant, variant as declared)
from dynpr.errors import InputError
from dynpr.gpu import loader
from dynpr.gpu.classes import ClassRanks, Relabel, default_bounds, relabels
from dynpr.gpu.buffers import TELEPORT, RunShape, allocate, fill
from dynpr.gpu.device_graph import MODES, DeviceGraph, EngineRun, check_fits, to_device
from dynpr.gpu.iterations import IterationLoop
from dynpr.gpu.warm_up import tiny_case
from dynpr.graph.graph import on_device
from dynpr.pagerank.options import PageRankOptions, PageRankResult, check_converged
from dynpr.pagerank.personalization import teleport as teleport_vector


def _relabels(design: KernelVariant, approach: str, n: int) -> bool:
    """Whether the default relabels this run hub-first: a design that relabels, an approach of
    :data:`dynpr.designs.RELABEL_APPROACHES`, and n vertices whose contributions overflow half
    of the current device's L2 (:func:`dynpr.gpu.classes.relabels`)."""
    return design.relabel and approach in RELABEL_APPROACHES and relabels(
        n, loader.require_cupy().cuda.Device().attributes["L2CacheSize"])


def run_classes(approach: str, g: DeviceGraph, batch, start_ranks,
                options: PageRankOptions, design: KernelVariant, bounds: tuple[int, int, int] | None = None,
                pull_share: float | None = None, teleport: np.ndarray | None = None) -> EngineRun:
    """The default's fused class kernels (``classes``; ``classes_graphs`` and ``classes_persistent``
    force a launch per iteration or one per solve, ``classes_sync`` has no CUDA graphs), with the
    in-degree ``bounds`` of :func:`dynpr.gpu.classes.class_bounds` unless given, and DF/DF-P turning
    from push to pull at ``pull_share`` (:class:`dynpr.gpu.iterations.IterationLoop`; unless given,
    :data:`dynpr.designs.KEPT_PULL_SHARE` where the blocks keep their units, else
    :data:`dynpr.designs.PULL_SHARE`). ``teleport``: a personalized run's normalised teleport
    vector p on the host (None: uniform)."""
    cupy = loader.require_cupy()
    kernels = loader.pagerank_kernels(design.contribution)
    terms = None
    if teleport is not None:  # (1 - alpha) p_v, the product the CPU twin adds, uploaded untimed
        terms = allocate(cupy, TELEPORT, RunShape(g.n, int(g.sources.size), personalized=True))["teleport"]
        fill(terms, (1.0 - options.alpha) * teleport)
    relabel = None
    if _relabels(design, approach, g.n):
        relabel = Relabel(kernels, cupy, g, start_ranks, terms)
        g = relabel.graph
        terms = relabel.teleport
    persistent = int(g.sources.size) < design.persistent_below
    step = ClassRanks(kernels, cupy, g, MODES[approach], options, CLASS_LANES, bounds or default_bounds(g), True, True,
                      persistent, degree_offsets=relabel.original.in_offsets if relabel else None,
                      contribution=design.contribution, teleport=terms)
    if pull_share is None:
        pull_share = KEPT_PULL_SHARE if step.kept_rows else PULL_SHARE
    loop = IterationLoop(kernels, cupy, approach, g, batch, start_ranks, options, step, relabel=relabel,
                         pull_share=pull_share, contribution=design.contribution)
    return loop.run(design.graphs)


def _dispatch(approach, g, g_old, batch, start, options: PageRankOptions, pull_share: float | None = None,
              teleport: np.ndarray | None = None) -> EngineRun:
    """Run ``options.variant`` (None = the default) for one approach (``teleport``: see
    :func:`run_classes`)."""
    design = declared(options.variant)
    if design.static_only and approach not in STATIC_APPROACHES:
        raise ValueError(f"GPU variant {design.name!r} computes static and nd only, not {approach!r}")
    if design.fused:
        return run_classes(approach, g, batch, start, options, design, pull_share=pull_share, teleport=teleport)
    from dynpr.gpu import baselines  # the designs measured against, loaded on first use

    return baselines.run(approach, g, g_old, batch, start, options, design)


@functools.cache
def _warm_up(contribution: str = "float64") -> None:
    """Run every approach and partition level of the default once on a tiny graph, a launch
    per iteration and one per solve, with ``contribution`` stored contributions, so that
    compilation and module loading (ours and CuPy's own kernels) stay out of every timed call;
    :func:`dynpr.gpu.baselines.run` warms the baselines up."""
    g, _, batch, start = tiny_case()
    for variant in ("classes_graphs", "classes_persistent"):
        design = replace(declared(variant), contribution=contribution)
        for partition in PARTITIONS:
            options = PageRankOptions(partition=partition, max_iterations=3, variant=variant)
            for approach in APPROACHES:
                run_classes(approach, g, batch, start, options, design)
    # The relabelling of large graphs (CuPy's sort, scan and compaction kernels too);
    # row limit 1 sends rows through the long-row path as well.
    cupy = loader.require_cupy()
    relabel = Relabel(loader.pagerank_kernels(contribution), cupy, g, start, teleport=cupy.asarray(start))
    relabel.prepare(cupy.empty(g.n, dtype=cupy.float64), row_limit=1)
    relabel.restore(relabel.start)


def _update(approach: str, old_graph, graph, batch, previous_ranks, options: PageRankOptions | None = None,
            *, initial=None, pull_share: float | None = None) -> PageRankResult:
    """Run one approach on the GPU; the contract of ``dynpr.pagerank.update``, which checked the inputs
    (:func:`dynpr.pagerank.check_update_inputs`) and calls it (benchmarks call it for ``pull_share``).

    Parameters
    ----------
    approach : str
        One of ``static nd dt df dfp``.
    old_graph, graph : dynpr.graph.graph.Graph
        The graph before and after ``batch`` (``old_graph`` is read by DT only, and on the
        device only by the paper's design, ``partitioned``).
    batch : dynpr.batches.Batch
        Deleted and inserted edges (ignored by Static and ND).
    previous_ranks : numpy.ndarray or cupy.ndarray
        Converged ranks of ``old_graph`` (ignored by Static); never written.
    options : PageRankOptions, optional
    initial : numpy.ndarray or cupy.ndarray, optional
        Static's starting ranks instead of 1/n.
    pull_share : float, optional
        The default's DF/DF-P turn from push to pull mode after an iteration whose push work
        exceeds this share of the edges (0: pull from the start, ``inf``: never; unless given,
        :data:`dynpr.designs.KEPT_PULL_SHARE` on graphs whose units the blocks keep for the
        solve, else :data:`dynpr.designs.PULL_SHARE`). The ranks do not depend on it; benchmarks
        sweep it.

    Returns
    -------
    PageRankResult
        Ranks where the graph is (a CuPy array for a graph resident on the device,
        :mod:`dynpr.gpu.resident`; else host float64), iterations, whether they converged,
        event-timed milliseconds and phases.

    Raises
    ------
    ValueError
        For an unknown variant, or one that does not compute the approach; an
        :class:`~dynpr.errors.InputError` for personalization with a design other than the
        default ones (``classes*``).
    RuntimeError
        If CuPy or a CUDA device is missing.
    MemoryError
        If the run needs more device memory than is free (checked before a graph is uploaded).
    dynpr.errors.ConvergenceError
        With ``options.raise_on_max_iterations`` when the run stopped at ``max_iterations``.
    """
    options = options or PageRankOptions()
    design = declared(options.variant)
    n = graph.num_vertices
    teleport = teleport_vector(options.personalization, graph)
    if teleport is not None and not design.fused:
        raise InputError(f"personalization runs on the default GPU designs (classes, classes_*), not on "
                         f"{design.name!r}; leave PageRankOptions.variant unset, or use the CPU backend")
    resident = on_device(graph.offsets)
    given = previous_ranks if approach != "static" else initial
    if given is None:
        start = (loader.require_cupy() if resident else np).full(n, 1.0 / n)
    else:  # engines copy the start before writing to it; device ranks stay on the device
        start = given.astype(np.float64, copy=False) if on_device(given) else np.asarray(given, dtype=np.float64)
    # Only the paper's design searches the old graph for DT; the others find its reach in the new one.
    old_on_device = approach == "dt" and design.name == "partitioned"
    if old_on_device and old_graph is None:
        raise InputError("DT in the paper's design (variant 'partitioned') searches the old graph: pass old_graph")
    graphs = (graph, old_graph) if old_on_device else (graph,)
    check_fits(approach, graphs, batch, options, design.name, _relabels(design, approach, n))
    _warm_up(design.contribution)
    g = to_device(graph)
    g_old = to_device(old_graph) if old_on_device else None
    run = _dispatch(approach, g, g_old, batch, start, options, pull_share, teleport)
    result = PageRankResult(
        ranks=run.ranks if resident else run.ranks.get(),
        iterations=run.iterations,
        time_ms=sum(run.phases.values()),
        approach=approach,
        backend="gpu",
        device=device_name("gpu"),
        affected=run.affected,
        phases=run.phases,
        variant=design.name,
        converged=run.converged,
    )
    check_converged(result, options)
    return result
