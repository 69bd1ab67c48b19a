"""One call from a graph file to ranks by original id: :func:`pagerank_file`.

>>> import dynpr                                                        # doctest: +SKIP
>>> ranks = dynpr.pagerank_file("edges.csv", undirected=True)           # doctest: +SKIP
>>> ranks["alice"]                                                      # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from dynpr.io.edge_lists import EdgeListOptions
from dynpr.errors import InputError
from dynpr.pagerank import static
from dynpr.pagerank.options import PageRankOptions
from dynpr.io.prepare import read_graph_with_ids
from dynpr.io.ranks import by_id


def pagerank_file(path: str | Path, *, alpha: float = 0.85, tolerance: float = 1e-10, max_iterations: int = 500,
                  nstart: Mapping | pd.Series | None = None, self_loops: bool = True, backend: str = "auto",
                  delimiter: str | None = None, header: bool | None = None, labels: bool | None = None,
                  undirected: bool = False, temporal: bool = False) -> pd.Series:
    """Static PageRank of a graph file (or catalog name), by original vertex id.

    Parameters
    ----------
    path : str or Path
        A graph file (text edge list, Matrix Market, SuiteSparse ``.tar.gz``, prepared ``.npz``) or a
        catalog name (:func:`dynpr.io.prepare.read_graph_with_ids`).
    alpha : float
        Damping factor.
    tolerance : float
        Largest change of a rank in an iteration at which to stop (L-inf, absolute); networkx's
        ``tol`` maps to it by :func:`dynpr.tolerance_from_networkx`.
    max_iterations : int
        Iteration cap; reaching it first raises, as networkx does.
    nstart : mapping or pandas.Series, optional
        Starting ranks by original id, as networkx's ``nstart``: normalised to sum 1, a vertex
        missing counts 0. Default: ``1/n`` each.
    self_loops : bool
        True: the paper's convention, a self-loop added on every vertex (no dangling vertex);
        False: networkx's, the input's edges as they are and a dangling vertex's rank spread over
        all vertices (as networkx's default ``dangling=None``), on the CPU.
    backend : {"auto", "cpu", "gpu"}
        Where to run.
    delimiter, header, labels, undirected, temporal
        How a text edge list is read (:class:`dynpr.io.edge_lists.EdgeListOptions`; None: found
        from the file). A third column is a weight, ignored (PageRank here is unweighted), unless
        ``temporal``.

    Returns
    -------
    pandas.Series
        Float64 ranks named ``rank``, indexed by original id (``vertex``): integers as in the file,
        or string labels; ``.to_dict()`` is networkx's ``{node: rank}``.

    Raises
    ------
    dynpr.errors.InputError
        (a ``ValueError``) For a file that does not parse, options that do not fit it, or an
        ``nstart`` that sums to zero or holds a negative or non-finite value.
    dynpr.errors.ConvergenceError
        When ``max_iterations`` is reached first (its ``result`` holds the last ranks by dense index).
    dynpr.errors.NoGpuError
        For ``backend="gpu"`` without a usable GPU.
    """
    if not self_loops:
        if backend == "gpu":
            raise InputError("self_loops=False runs on the CPU only (the GPU kernels assume a self-loop on "
                             "every vertex); pass backend='cpu' or 'auto'")
        backend = "cpu"
    options = PageRankOptions(alpha=alpha, tolerance=tolerance, max_iterations=max_iterations,
                              raise_on_max_iterations=True)
    edge_list = EdgeListOptions(delimiter=delimiter, header=header, labels=labels, undirected=undirected,
                                temporal=temporal)
    graph, _, vertex_ids = read_graph_with_ids(path, self_loops=self_loops, edge_list=edge_list)
    initial = None if nstart is None else _starting_ranks(nstart, vertex_ids)
    return by_id(static(graph, options, backend=backend, initial=initial).ranks, vertex_ids)


def _starting_ranks(nstart: Mapping | pd.Series, vertex_ids: np.ndarray) -> np.ndarray:
    """networkx's ``nstart`` by original id as ranks by dense index: missing ids 0, normalised to sum 1."""
    values = pd.Series(nstart, dtype=np.float64) if isinstance(nstart, Mapping) else nstart.astype(np.float64)
    ranks = values.reindex(vertex_ids, fill_value=0.0).to_numpy()
    total = float(ranks.sum())
    if not (np.isfinite(ranks).all() and ranks.min(initial=0) >= 0 and total > 0):
        raise InputError("nstart: the starting ranks of the graph's vertices must be finite, non-negative and "
                         f"not all 0 (they sum to {total:g})")
    return ranks / total
