"""PageRank on dynamic graphs: Static, Naive-dynamic (ND), Dynamic Traversal (DT),
Dynamic Frontier (DF) and DF with Pruning (DF-P), after the paper *Efficient GPU
Implementation of Static and Incrementally Expanding DF-P PageRank for Dynamic Graphs*.

Every function here checks its inputs (:func:`check_update_inputs`), resolves the backend and
dispatches to an engine: ``dynpr.pagerank.cpu._update`` (NumPy/SciPy) or
``dynpr.gpu.pagerank._update`` (CuPy, imported only when asked for). The engines are private:
they trust what this module checked. Both implement the same semantics.
"""

from __future__ import annotations

import inspect
from dataclasses import replace

import numpy as np

from dynpr.backend import resolve_backend
from dynpr.batches import Batch
from dynpr.designs import APPROACH, APPROACHES, REFERENCE_TOLERANCE, variant as declared
from dynpr.errors import InputError
from dynpr.graph.graph import Graph, array_module
from dynpr.pagerank.options import PageRankOptions, PageRankResult
from dynpr.graph.validate import check_batch, check_rank_values, finite_number
from dynpr.pagerank.personalization import dense_weights, teleport

__all__ = [
    "APPROACHES", "PageRankOptions", "PageRankResult", "static", "naive_dynamic", "dynamic_traversal",
    "dynamic_frontier", "dynamic_frontier_pruned", "update", "reference", "l1_error",
]


def _check_shape(graph, name: str) -> int:
    """O(1) consistency of a Graph handed to the library (full checks run where graphs are read)."""
    if not isinstance(graph, Graph):
        raise InputError(f"{name} must be a dynpr.graph.graph.Graph, not {type(graph).__name__}")
    n = graph.num_vertices
    if n < 1 or len(graph.in_offsets) != n + 1 or len(graph.sources) != len(graph.targets) \
            or int(graph.offsets[-1]) != len(graph.targets) or int(graph.in_offsets[-1]) != len(graph.sources):
        raise InputError(f"{name}: inconsistent array lengths (offsets {len(graph.offsets)}, in_offsets "
                         f"{len(graph.in_offsets)}, targets {len(graph.targets)}, sources {len(graph.sources)})")
    return n


def check_update_inputs(approach: str, old_graph, graph, batch, previous_ranks, *, initial=None,
                        options: PageRankOptions | None = None) -> None:
    """Everything :func:`dynpr.pagerank.update` checks before any engine runs.

    Raises
    ------
    InputError
        For an unknown approach, a missing input, arrays of the wrong shape or
        dtype, ranks that are not finite, batch ids outside the graph (which
        the GPU kernels would use as indices unchecked), or ``options.personalization``
        naming a vertex the graph lacks (or an array of another length).
    """
    if approach not in APPROACH:
        raise InputError(f"approach must be one of {APPROACHES}, got {approach!r}")
    if options is not None and not isinstance(options, PageRankOptions):
        raise InputError(f"options must be a dynpr.pagerank.PageRankOptions, not {type(options).__name__}")
    n = _check_shape(graph, "graph")
    if options is not None and options.personalization is not None:
        dense_weights(options.personalization, graph)
    spec = APPROACH[approach]
    if not spec.from_previous_ranks:
        if initial is not None:
            check_rank_values(initial, n, "initial")
        return
    check_rank_values(previous_ranks, n, "previous_ranks")
    if spec.recomputes_all:
        return
    if not isinstance(batch, Batch):
        raise InputError(f"approach {approach!r} needs the batch (a dynpr.batches.Batch)")
    check_batch(batch, n)
    # without the old graph, DT finds its reach in the new one from the batch (marking.traversal_affected)
    if spec.reachability and old_graph is not None:
        if _check_shape(old_graph, "old_graph") != n:
            raise InputError(f"old graph has {old_graph.num_vertices} vertices, new graph {n}")


def _engine(backend: str, graph: Graph):
    if resolve_backend(backend) == "gpu":
        from dynpr.gpu.pagerank import _update as gpu_update

        if graph.num_vertices and int(np.diff(graph.offsets).min()) == 0:
            # the kernels have no dangling-rank term: the paper's graphs have a self-loop on every vertex
            raise ValueError("the GPU engine needs an out-edge on every vertex (a self-loop on each, the paper's "
                             "convention); run graphs with dangling vertices on the CPU backend")

        return gpu_update
    from dynpr.pagerank.cpu import _update as cpu_update

    return cpu_update


def update(
    approach: str,
    old_graph: Graph | None,
    graph: Graph,
    batch: Batch | None,
    previous_ranks: np.ndarray | None,
    options: PageRankOptions | None = None,
    *,
    backend: str = "auto",
) -> PageRankResult:
    """Run the approach named by its code on the updated graph.

    Parameters
    ----------
    approach : {"static", "nd", "dt", "df", "dfp"}
        Approach code; ``"static"`` ignores ``old_graph``, ``batch`` and ``previous_ranks``.
    old_graph : Graph or None
        Graph before the batch (read by ``dt``; None: its reach is found in ``graph`` from the
        batch's deleted edges, which must have been edges of it; the paper's design
        ``partitioned`` needs it on the GPU).
    graph : Graph
        Graph after the batch, with a self-loop on every vertex.
    batch : Batch or None
        The edge deletions and insertions that turned ``old_graph`` into ``graph``.
    previous_ranks : numpy.ndarray or None
        Ranks of ``old_graph`` (float64, one per vertex; a CuPy array is used where it is).
    options : PageRankOptions, optional
        Parameters; the paper's defaults (alpha 0.85, tau 1e-10, tau_f = tau_p = 1e-6, 500 iterations).
    backend : {"cpu", "gpu", "auto"}
        Where to run; ``"auto"`` picks the GPU when CuPy sees a device.

    Returns
    -------
    PageRankResult
        Ranks (float64) where the graph is: on the host, or a CuPy array for a graph
        resident on the GPU (:mod:`dynpr.gpu.resident`); iterations, ``time_ms`` and
        ``phases``, affected vertices.

    Raises
    ------
    dynpr.errors.InputError
        (a ``ValueError``) on an unknown approach or backend, or inputs that do
        not fit the graph: every check runs here, before any engine
        (:func:`check_update_inputs`), so no engine sees a batch
        id outside the graph.
    dynpr.errors.NoGpuError
        (a ``RuntimeError``) if ``backend="gpu"`` and no GPU is usable.
    """
    check_update_inputs(approach, old_graph, graph, batch, previous_ranks, options=options)
    if not APPROACH[approach].from_previous_ranks:
        old_graph = batch = previous_ranks = None
    return _engine(backend, graph)(approach, old_graph, graph, batch, previous_ranks, options)


def static(
    graph: Graph,
    options: PageRankOptions | None = None,
    *,
    backend: str = "auto",
    initial: np.ndarray | None = None,
) -> PageRankResult:
    """Static PageRank (the paper's Alg. 1): synchronous pull from ``1/n`` (or ``initial``).

    Parameters
    ----------
    graph : Graph
        Graph with a self-loop on every vertex.
    options : PageRankOptions, optional
        Parameters; the paper's defaults when omitted.
    backend : {"cpu", "gpu", "auto"}
        Where to run.
    initial : numpy.ndarray, optional
        Starting ranks instead of ``1/n`` each.

    Returns
    -------
    PageRankResult
        See :func:`update`.
    """
    check_update_inputs("static", None, graph, None, None, initial=initial, options=options)
    return _engine(backend, graph)("static", None, graph, None, None, options, initial=initial)


# The dynamic approaches share update's parameters; each states only what it does.
_DYNAMIC_SECTIONS = """
Parameters
----------
old_graph, graph, batch, previous_ranks, options, backend
    See :func:`update`.

Returns
-------
PageRankResult
    See :func:`update`.
"""


def _dynamic_doc(func):
    func.__doc__ = inspect.cleandoc(func.__doc__) + "\n" + _DYNAMIC_SECTIONS
    return func


@_dynamic_doc
def naive_dynamic(old_graph, graph, batch, previous_ranks, options=None, *, backend="auto") -> PageRankResult:
    """Naive-dynamic PageRank: Static over every vertex, started from ``previous_ranks``."""
    return update("nd", old_graph, graph, batch, previous_ranks, options, backend=backend)


@_dynamic_doc
def dynamic_traversal(old_graph, graph, batch, previous_ranks, options=None, *, backend="auto") -> PageRankResult:
    """Dynamic Traversal PageRank: recompute only vertices reachable from updated edges' sources.

    Every vertex reachable (sources included) from the source of a deleted or
    inserted edge in the old or the new graph is affected; the others keep their
    previous ranks throughout.
    """
    return update("dt", old_graph, graph, batch, previous_ranks, options, backend=backend)


@_dynamic_doc
def dynamic_frontier(old_graph, graph, batch, previous_ranks, options=None, *, backend="auto") -> PageRankResult:
    """Dynamic Frontier PageRank (the paper's Alg. 2): an affected set that grows from the batch.

    Starts from the out-neighbours (new graph) of every updated edge's source and
    the target of every deletion; each iteration marks the out-neighbours of every
    vertex whose relative rank change exceeds ``options.frontier_tolerance``.
    """
    return update("df", old_graph, graph, batch, previous_ranks, options, backend=backend)


@_dynamic_doc
def dynamic_frontier_pruned(old_graph, graph, batch, previous_ranks, options=None, *,
                            backend="auto") -> PageRankResult:
    """Dynamic Frontier with Pruning (DF-P): DF that also drops converged vertices.

    Ranks use the closed form of Eq. 2-3 (the self-loop's recursion solved);
    a vertex whose relative change is at most ``options.prune_tolerance`` leaves
    the affected set (it keeps its new rank). Ranks then sum to 1 only approximately.
    """
    return update("dfp", old_graph, graph, batch, previous_ranks, options, backend=backend)


def reference(
    graph: Graph,
    options: PageRankOptions | None = None,
    *,
    backend: str = "auto",
    tolerance: float = REFERENCE_TOLERANCE,
    max_iterations: int = 500,
    static_result: PageRankResult | None = None,
) -> np.ndarray:
    """Reference ranks: Static at tolerance 1e-100, capped at 500 iterations (paper 5.1.5).

    Parameters
    ----------
    graph : Graph
        Graph with a self-loop on every vertex.
    options : PageRankOptions, optional
        Source of ``alpha`` and ``personalization``; its tolerance and iteration cap are replaced, and
        a variant that stores
        float32 contributions by the default: the reference is float64 (it does not go on from
        such a variant's ``static_result`` either).
    backend : {"cpu", "gpu", "auto"}
        Where to run.
    tolerance, max_iterations : float, int
        The reference run's L-inf tolerance and cap.
    static_result : PageRankResult, optional
        Static's run on ``graph`` with ``options`` (:func:`static`, from ``1/n``). Its
        iterations are the reference run's first ones, so the reference goes on from its
        ranks instead of starting over, to the same ranks bit for bit, when a change of at
        most ``tolerance`` can only be zero (``tolerance`` below half an ulp of the smallest
        Static rank, ``(1 - alpha) / n``, personalized ``(1 - alpha) min(p)``; 1e-100 always is,
        unless some vertex has no teleport weight): the reference then stops at the
        first iteration that changes nothing, and going on from a Static run that stopped
        there (or earlier) changes nothing either. Otherwise, or when Static ran past
        ``max_iterations``, it starts over.

    Returns
    -------
    numpy.ndarray
        float64 ranks (where the graph is, as :func:`update`'s).
    """
    # named here: PageRankOptions would report a bad value as `tolerance`
    finite_number("reference tolerance", tolerance, low=0)
    options = options or PageRankOptions()
    if declared(options.variant).contribution != "float64":
        options, static_result = replace(options, variant=None), None
    reference_options = replace(options, tolerance=tolerance, max_iterations=max_iterations)
    p = teleport(options.personalization, graph)
    smallest_rank = (1.0 - options.alpha) / graph.num_vertices if p is None else (1.0 - options.alpha) * p.min()
    smallest_change = smallest_rank * 2.0 ** -53
    if static_result is None or tolerance >= smallest_change or static_result.iterations > max_iterations:
        return static(graph, reference_options, backend=backend).ranks
    remaining = max_iterations - static_result.iterations
    if remaining == 0:  # Static stopped at the reference's cap
        return static_result.ranks
    return static(graph, replace(reference_options, max_iterations=remaining), backend=backend,
                  initial=static_result.ranks).ranks


def l1_error(ranks: np.ndarray, reference: np.ndarray) -> float:
    """L1 norm of ``ranks - reference``.

    Parameters
    ----------
    ranks, reference : numpy.ndarray or cupy.ndarray
        Rank vectors of one length, both on the host or both on the device
        (summed there: device ranks never cross the bus).

    Returns
    -------
    float
        ``sum |ranks - reference|``.

    Raises
    ------
    InputError
        (a ``ValueError``) If the lengths differ.
    """
    xp = array_module(ranks)
    ranks = xp.asarray(ranks, dtype=np.float64)
    reference = xp.asarray(reference, dtype=np.float64)
    if ranks.shape != reference.shape:
        raise InputError(f"ranks and reference differ in shape: {ranks.shape} vs {reference.shape}")
    difference = xp.subtract(ranks, reference)
    return float(xp.abs(difference, out=difference).sum())  # one n-sized temporary, not two
