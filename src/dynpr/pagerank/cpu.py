"""CPU engine of every PageRank approach, vectorized with SciPy sparse (the paper's Alg. 1-5).

One pull matrix per call: the transpose CSR of the graph (``in_offsets``,
``sources``) with data ``1/d[u]``, so ``W @ R`` gives every vertex's contribution
sum ``c[v] = sum_{u in in(v)} R[u]/d[u]`` in one SpMV. Measured on web-NotreDame
(1.8 M edges, 2 cores): weighting the matrix once (4 ms; untimed, like the GPU's upload) and multiplying R costs
2.05 ms per iteration against 2.15 ms for an unweighted matrix times ``R/d``.

DT, DF and DF-P compute only the affected rows: a row subset of ``W`` times R
while the affected rows hold less than ``1/SUBSET_SHARE`` of the edges, a full
SpMV otherwise (row indexing costs as much as a full SpMV at about 1/6 of the
edges on web-NotreDame). The results are identical either way. Likewise the frontier's
expansion (DF, DF-P) gathers the out-neighbours of the expanding vertices while they hold less than
``1/SUBSET_SHARE`` of the edges, and otherwise marks every vertex with an in-neighbour among them
by one SpMV of the pull matrix (positive weights: a sum is non-zero exactly when a term is) over
their indicator: the same marks, where a large frontier's gather cost about twice an SpMV.

With a variant that stores float32 contributions (``KernelVariant.contribution``, ``classes_c32``)
this engine is its twin: the matrix is unweighted and multiplies ``R[u]/d[u]`` rounded to float32
and widened back, every vertex's contributions each iteration (O(n) more per iteration), so
the sums, ranks and convergence test stay float64 as on the GPU.
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp

from dynpr.backend import device_name
from dynpr.batches import Batch
from dynpr.designs import APPROACH, variant as declared
from dynpr.graph.graph import Graph
from dynpr.graph.hostmem import CPU_ENGINE_BYTES_PER_EDGE, CPU_ENGINE_BYTES_PER_VERTEX, check_host_fits
from dynpr.pagerank import marking
from dynpr.pagerank.options import PageRankOptions, PageRankResult, check_converged
from dynpr.pagerank.personalization import teleport
from dynpr.errors import InputError

# Row-subset SpMV while the affected rows hold fewer than 1/SUBSET_SHARE of all edges.
SUBSET_SHARE = 8

# Denominator floor of the relative rank change (the kernels' kSmallestRank).
SMALLEST_RANK = np.finfo(np.float64).tiny


def _update(approach: str, old_graph: Graph | None, graph: Graph, batch: Batch | None,
             previous_ranks: np.ndarray | None, options: PageRankOptions | None = None, *,
            initial: np.ndarray | None = None) -> PageRankResult:
    """Run one approach on the CPU; the contract of :func:`dynpr.pagerank.update`, which checked the
    inputs (:func:`dynpr.pagerank.check_update_inputs`) and is the only caller.

    Parameters
    ----------
    approach, old_graph, graph, batch, previous_ranks, options
        See :func:`dynpr.pagerank.update` (the backend is already resolved).
    initial : numpy.ndarray, optional
        Starting ranks of ``static`` (default ``1/n`` each).

    Returns
    -------
    PageRankResult
        Ranks (float64), iterations, time and phases, affected vertex count.

    Raises
    ------
    InputError
        For an approach other than Static and ND on a graph with dangling vertices.
    MemoryError
        ``PageRank on the CPU of ... needs X GiB of host memory, Y GiB available``, before allocating.
    """
    options = options or PageRankOptions()
    spec = APPROACH[approach]
    n = graph.num_vertices
    # The readers checked the build (88 bytes per vertex); a run then holds the graph and the engine's
    # matrix and vectors (114 per vertex measured on a Matrix Market file of few entries): checked here,
    # before the engine allocates, so a graph that was read but cannot be run on stops with one line.
    check_host_fits(CPU_ENGINE_BYTES_PER_EDGE * graph.num_edges + CPU_ENGINE_BYTES_PER_VERTEX * n,
                    f"PageRank on the CPU of {n:,} vertices and {graph.num_edges:,} edges")
    batch = batch.to_host() if batch is not None else None
    given = previous_ranks if spec.from_previous_ranks else initial
    # a copy: the caller's ranks are never modified
    start = np.full(n, 1.0 / n) if given is None else np.array(given, dtype=np.float64)
    degree = np.diff(graph.offsets)
    dangling = np.flatnonzero(degree == 0)
    if dangling.size and not spec.recomputes_all:
        raise InputError(f"approach {approach!r} needs an out-edge on every vertex (the paper adds a self-loop "
                         f"to each); this graph has {dangling.size} dangling vertices: only static and nd run on it")

    # Not timed: wrapping the graph's arrays with their 1/d weights, what the GPU
    # engine does when it uploads a graph (transfers are outside the measurement, 5.1.5).
    in_offsets = graph.in_offsets
    if graph.num_edges < np.iinfo(np.int32).max:
        in_offsets = in_offsets.astype(np.int32)  # SciPy would otherwise copy the int32 sources to int64
    inv_degree = 1.0 / np.maximum(degree, 1)  # dangling vertices have no out-edge to weight
    pull, weigh = _gather(graph, in_offsets, inv_degree, declared(options.variant))
    # the teleport term (1 - alpha) * p_v: a scalar for the uniform p = 1/n, so that path is unchanged
    p = teleport(options.personalization, graph)
    base = (1.0 - options.alpha) / n if p is None else (1.0 - options.alpha) * p
    t0 = t_mark = time.perf_counter()
    if spec.recomputes_all:
        affected = None
    elif spec.reachability:
        affected = marking.traversal_affected(old_graph, graph, batch)
    else:
        affected = marking.frontier_initial(graph, batch)
    t_iter = time.perf_counter()
    if affected is None:
        ranks, iterations, converged = _iterate_all(pull, weigh, start, options, dangling, base, p)
        count = n
    else:
        ranks, iterations, converged, count = _iterate_affected(
            graph, pull, weigh, inv_degree, start, affected, options, base,
            frontier=spec.flags.frontier, pruned=spec.flags.prune)
    t_end = time.perf_counter()
    # Like the GPU engine: mark_ms = initial marking (DT's BFS, DF's initial expansion);
    # per-iteration expansion belongs to compute_ms.
    mark_ms = (t_iter - t_mark) * 1e3
    total_ms = (t_end - t0) * 1e3
    result = PageRankResult(
        ranks=ranks, iterations=iterations, time_ms=total_ms, approach=approach, backend="cpu",
        device=device_name("cpu"), affected=count,
        phases={"partition_ms": 0.0, "mark_ms": mark_ms, "compute_ms": total_ms - mark_ms}, converged=converged,
    )
    check_converged(result, options)
    return result


def _float32_contributions(inv_degree: np.ndarray):
    """``weigh(R)`` for stored float32 contributions (``classes_c32``): ``R/d`` rounded to float32 and
    widened back, as the GPU stores and reads them."""
    return lambda ranks: (ranks * inv_degree).astype(np.float32).astype(np.float64)


def _gather(graph: Graph, in_offsets: np.ndarray, inv_degree: np.ndarray, design):
    """The pull matrix and what it multiplies, ``weigh(R)``: for float64 contributions ``W`` with
    weights 1/d[u] times R itself and ``weigh = None``; otherwise the unweighted in-CSR times a
    :func:`_float32_contributions`, so each sum adds the terms the GPU adds (``R[u] * (1/d[u])``, the
    same product either way)."""
    n = graph.num_vertices
    if design.contribution == "float64":
        return sp.csr_array((inv_degree[graph.sources], graph.sources, in_offsets), shape=(n, n)), None
    ones = np.ones(graph.num_edges)
    return sp.csr_array((ones, graph.sources, in_offsets), shape=(n, n)), _float32_contributions(inv_degree)


def _iterate_all(pull: sp.csr_array, weigh, ranks: np.ndarray, options: PageRankOptions, dangling: np.ndarray,
                 base, p: np.ndarray | None):
    """Static / ND: synchronous pull over every vertex until the L-inf change is at most tau
    (``pull @ weigh(R)`` sums the contributions, ``pull @ R`` without ``weigh``: :func:`_gather`),
    ``base`` the teleport term (1 - alpha) p (a scalar for the uniform ``p`` = None).

    Dangling vertices (none under the paper's self-loop convention) spread their
    rank as the teleport does (over every vertex, or by ``p``), as NetworkX's default does.

    Returns ranks, iterations and whether the last change met tau (False at the cap).
    """
    alpha = options.alpha
    n = pull.shape[0]
    iterations = 0
    while True:
        new = pull @ (ranks if weigh is None else weigh(ranks))
        new *= alpha
        if not dangling.size:
            new += base
        elif p is None:
            new += base + alpha * ranks[dangling].sum() / n
        else:
            new += base + alpha * ranks[dangling].sum() * p
        delta = float(np.max(np.abs(new - ranks)))
        ranks = new
        iterations += 1
        converged = delta <= options.tolerance
        if converged or iterations >= options.max_iterations:
            return ranks, iterations, converged


def _pull_rows(pull: sp.csr_array, x: np.ndarray, rows: np.ndarray | None, row_edges: int) -> np.ndarray:
    """Contribution sums c[v] of the vertices ``rows`` (``None`` = all), ``x`` = ``weigh(R)`` of
    :func:`_gather`: row subset or full SpMV."""
    if rows is None:
        return pull @ x
    if row_edges * SUBSET_SHARE < pull.nnz:
        return pull[rows] @ x
    return (pull @ x)[rows]


def _expand(graph: Graph, pull: sp.csr_array, out_degree: np.ndarray, affected: np.ndarray,
            expanding: np.ndarray) -> None:
    """Mark, in place, the out-neighbours of ``expanding`` (:func:`dynpr.pagerank.marking.expand`):
    by gathering them, or by one SpMV over every edge once that is the cheaper (module docstring)."""
    if int(out_degree[expanding].sum()) * SUBSET_SHARE < pull.nnz:
        marking.expand(graph, affected, expanding)
        return
    indicator = np.zeros(graph.num_vertices)
    indicator[expanding] = 1.0
    affected |= (pull @ indicator) > 0


def _iterate_affected(graph, pull, weigh, inv_degree, ranks, affected, options, base, *, frontier, pruned):
    """DT / DF / DF-P iterations over the affected vertices only (the paper's Alg. 2-3, 5), ``base``
    the teleport term as in :func:`_iterate_all`.

    ``frontier``: expand from vertices whose relative change exceeds tau_f (DF, DF-P);
    ``pruned``: closed-form ranks and un-marking at relative change <= tau_p (DF-P).

    Returns ranks, iterations, whether the last change met tau, and the number of vertices
    ever marked affected.
    """
    alpha, n = options.alpha, graph.num_vertices
    personalized = np.ndim(base) > 0
    in_degree, out_degree = np.diff(graph.in_offsets), np.diff(graph.offsets)
    ever = affected.copy()
    # Without pruning the affected set only grows, so a vertex that has expanded
    # once has all its out-neighbours marked already: expanding it again is a no-op.
    expanded = None if pruned else np.zeros(n, dtype=bool)
    # Two buffers that agree everywhere except on the rows written last iteration,
    # so keeping unaffected Rnew[v] = R[v] costs O(affected) per iteration, not O(n).
    new = ranks.copy()
    written = None
    iterations = 0
    changed = True
    while True:
        if changed:
            rows = np.flatnonzero(affected)
            if len(rows) == n:
                rows = None  # every vertex: whole-vector operations, no gathers
            row_edges = int(in_degree[rows].sum()) if rows is not None else pull.nnz
            row_inv = inv_degree if rows is None else inv_degree[rows]
            row_base = base[rows] if personalized and rows is not None else base
            changed = False
        old = ranks if rows is None else ranks[rows]
        c = _pull_rows(pull, ranks if weigh is None else weigh(ranks), rows, row_edges)
        if pruned:
            # Eq. 2-3: closed form of the self-loop's recursion; c includes the self-loop term.
            r = (row_base + alpha * (c - old * row_inv)) / (1.0 - alpha * row_inv)
        else:
            r = row_base + alpha * c
        change = np.abs(r - old)
        if frontier:
            # the smallest normal double below: a vertex unchanged at rank 0 (personalized, no teleport
            # weight reaching it) changes by 0, not 0/0, as in the kernels (rank_vertex.cuh)
            relative = change / np.maximum(np.maximum(r, old), SMALLEST_RANK)
            ids = np.arange(n) if rows is None else rows
            if pruned:
                prune = ids[relative <= options.prune_tolerance]
                if prune.size:
                    affected[prune] = False
                    changed = True
            expanding = ids[relative > options.frontier_tolerance]
        if rows is None:
            new = r
        else:
            if written is None:
                new[:] = ranks
            else:
                new[written] = ranks[written]
            new[rows] = r
        ranks, new = new, ranks
        written = rows
        iterations += 1
        delta = float(change.max()) if change.size else 0.0
        converged = delta <= options.tolerance
        if converged or iterations >= options.max_iterations:
            return ranks, iterations, converged, int(ever.sum())
        if frontier:
            if expanded is not None:
                expanding = expanding[~expanded[expanding]]
                expanded[expanding] = True
            if expanding.size:
                _expand(graph, pull, out_degree, affected, expanding)
                ever |= affected  # O(n) bool OR: cheaper than scattering every gathered edge twice
                changed = True
