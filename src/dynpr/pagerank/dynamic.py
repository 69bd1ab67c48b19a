"""Incremental PageRank as an object: a graph and its ranks, updated batch by batch.

>>> from dynpr import DynamicPageRank                                 # doctest: +SKIP
>>> pr = DynamicPageRank(graph, approach="dfp", backend="gpu")        # doctest: +SKIP
>>> ranks = pr.update(batch)   # the graph stays on the GPU between calls   # doctest: +SKIP
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from dynpr.backend import resolve_backend
from dynpr.batches import Batch, apply_batch
from dynpr.designs import APPROACHES
from dynpr.errors import BatchError, InputError
from dynpr.graph.graph import Graph, to_host
from dynpr.pagerank import static, update
from dynpr.pagerank.options import PageRankOptions, PageRankResult
from dynpr.pagerank.personalization import dense_weights


class DynamicPageRank:
    """PageRank of a graph that changes by batches of edge deletions and insertions.

    The constructor computes Static ranks; each :meth:`update` applies a batch
    and updates the ranks with the chosen approach, starting from the previous
    ones. With the GPU backend the graph is uploaded once and every batch is
    applied on the device (:mod:`dynpr.gpu.resident`), and the ranks stay there
    too: per update only the batch and the returned ranks cross the bus.

    Parameters
    ----------
    graph : Graph
        The initial graph (self-loops on every vertex, as prepared graphs have).
    approach : str
        ``static nd dt df dfp`` (default ``dfp``, Dynamic Frontier with Pruning).
    backend : str
        ``auto``, ``cpu`` or ``gpu``.
    options : PageRankOptions, optional
        Paper defaults when omitted.
    personalization : Mapping or array-like, optional
        Personalized PageRank's teleport weights, as networkx's ``personalization`` (a mapping
        ``{original vertex id: weight}``, absent vertices 0, or one weight per vertex; normalised):
        ``options.personalization`` replaced. Kept for every update; the graph's vertices are
        fixed, so the mapping's ids stay valid.

    Attributes
    ----------
    graph : Graph
        The current graph (CuPy arrays with the GPU backend).
    result : PageRankResult
        The last run: ranks (on the device with the GPU backend; read-only on the host, as the next
        update starts from them), iterations, time.
    """

    def __init__(self, graph: Graph, approach: str = "dfp", backend: str = "auto",
                 options: PageRankOptions | None = None, personalization=None):
        if approach not in APPROACHES:
            raise InputError(f"approach must be one of {APPROACHES}, got {approach!r}")
        self.approach = approach
        self.backend = resolve_backend(backend)
        self.options = options or PageRankOptions()
        if personalization is not None:
            self.options = replace(self.options, personalization=personalization)
        if self.options.personalization is not None:
            # one weight per vertex, mapped once (the ids of a mapping are looked up here, not per update)
            self.options = replace(self.options, personalization=dense_weights(self.options.personalization, graph))
        if self.backend == "gpu":
            from dynpr.gpu.resident import to_resident

            graph = to_resident(graph)
        self._graph = graph
        self.result: PageRankResult = _sealed(static(graph, self.options, backend=self.backend))

    @property
    def graph(self) -> Graph:
        """The current graph, the one :attr:`result` holds the ranks of."""
        return self._graph

    @graph.setter
    def graph(self, _other) -> None:
        raise InputError("DynamicPageRank.graph is the graph its ranks belong to and cannot be replaced; "
                         "make a new DynamicPageRank(graph) for another graph")

    @property
    def ranks(self) -> np.ndarray:
        """The current ranks, float64 on the host: a copy, the caller's to change."""
        ranks = self.result.ranks
        # The next update starts from the object's ranks: a caller normalising what it got in place
        # must not change them (to_host copies device arrays already).
        return ranks.copy() if isinstance(ranks, np.ndarray) else to_host(ranks)

    def update(self, batch: Batch) -> np.ndarray:
        """Apply ``batch`` (deletions first, :func:`dynpr.batches.apply_batch`) and update the ranks.

        Returns
        -------
        numpy.ndarray
            The new ranks, a copy (as :attr:`ranks`).

        Raises
        ------
        InputError
            If ``batch`` is not a :class:`~dynpr.batches.Batch`.
        BatchError
            If it does not fit the current graph (an edge deleted that is missing, or inserted that is
            present): a batch made for another graph, or applied twice.
        """
        if not isinstance(batch, Batch):
            raise InputError(f"DynamicPageRank.update needs a dynpr.batches.Batch, not {type(batch).__name__}")
        if self.backend == "gpu":
            from dynpr.gpu.resident import to_resident_batch

            batch = to_resident_batch(batch)  # one upload for the apply and the run
        try:
            new = apply_batch(self._graph, batch, strict=True)
        except BatchError:
            raise
        except ValueError as err:
            raise BatchError(f"the batch does not fit the current graph (made for another graph, or applied "
                             f"twice?): {err}") from None
        self.result = _sealed(update(self.approach, self._graph, new, batch, self.result.ranks, self.options,
                                     backend=self.backend))
        self._graph = new
        return self.ranks


def _sealed(result: PageRankResult) -> PageRankResult:
    """``result`` with its host ranks made read-only: the next update starts from them, so a change
    through ``pr.result.ranks`` would corrupt it silently (CuPy arrays have no such flag)."""
    if isinstance(result.ranks, np.ndarray):
        result.ranks.flags.writeable = False
    return result
