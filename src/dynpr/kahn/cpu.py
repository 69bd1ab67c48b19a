"""Kahn's algorithm on the CPU (NumPy): the twin of :mod:`dynpr.gpu.kahn`, and the result type
both return. :func:`dynpr.kahn.kahn` picks the engine.

Each level removes every vertex whose in-degree has reached zero and decrements
the in-degree of their out-neighbours (once per edge). The graph is a DAG when
every vertex gets removed; the vertices left lie on a cycle or downstream of one.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from dynpr.backend import device_name
from dynpr.graph.graph import VERTEX_DTYPE, Graph
from dynpr.pagerank.marking import csr_gather


@dataclass
class KahnResult:
    """Outcome of :func:`dynpr.kahn.kahn`.

    Attributes
    ----------
    is_dag : bool
        True when every vertex was processed (no cycle; a self-loop is a cycle).
    processed : int
        Vertices removed with in-degree zero.
    levels : int
        Number of non-empty frontiers (= topological generations of a DAG).
    remaining : numpy.ndarray
        Sorted int32 ids of the vertices never processed.
    time_ms : float
        Time of the level loop (excluding the upload on the GPU).
    backend, device : str
        Where it ran.
    """

    is_dag: bool
    processed: int
    levels: int
    remaining: np.ndarray
    time_ms: float
    backend: str
    device: str


def kahn(graph: Graph) -> KahnResult:
    """Level-synchronous Kahn on the CSR (the contract of :func:`dynpr.kahn.kahn`, on the CPU)."""
    n = graph.num_vertices
    t0 = time.perf_counter()
    indegree = np.diff(graph.in_offsets)
    frontier = np.flatnonzero(indegree == 0)
    processed = levels = 0
    while frontier.size:
        processed += len(frontier)
        levels += 1
        # unique-with-counts decrements each out-neighbour once per edge in
        # O(k log k) for k edges of the level; a bincount of length n per level
        # would cost O(n * levels), quadratic on deep DAGs such as a path.
        touched, counts = np.unique(csr_gather(graph.offsets, graph.targets, frontier), return_counts=True)
        indegree[touched] -= counts
        frontier = touched[indegree[touched] == 0]
    # A vertex is processed exactly when its in-degree reaches zero.
    remaining = np.flatnonzero(indegree > 0).astype(VERTEX_DTYPE)
    time_ms = (time.perf_counter() - t0) * 1e3
    return KahnResult(is_dag=processed == n, processed=processed, levels=levels, remaining=remaining,
                      time_ms=time_ms, backend="cpu", device=device_name("cpu"))


def kahn_dense(matrix: np.ndarray) -> KahnResult:
    """Level-synchronous Kahn on a dense adjacency matrix (``matrix[u, v] != 0`` for an edge u -> v):
    the CPU twin of the GPU's dense driver (``dynpr.gpu.kahn``, the report's section 6.1).

    In-degrees are the column sums; each level takes every vertex at in-degree zero, subtracts
    the frontier's rows from the in-degrees and marks the frontier processed (-1), as the
    report's ``remove_active_nodes`` does. Same result as :func:`kahn` on the graph of the matrix.
    """
    n = len(matrix)
    t0 = time.perf_counter()
    indegree = matrix.sum(axis=0, dtype=np.int64)
    frontier = np.flatnonzero(indegree == 0)
    processed = levels = 0
    while frontier.size:
        processed += len(frontier)
        levels += 1
        indegree -= matrix[frontier].sum(axis=0, dtype=np.int64)
        indegree[frontier] = -1
        frontier = np.flatnonzero(indegree == 0)
    remaining = np.flatnonzero(indegree > 0).astype(VERTEX_DTYPE)
    time_ms = (time.perf_counter() - t0) * 1e3
    return KahnResult(is_dag=processed == n, processed=processed, levels=levels, remaining=remaining,
                      time_ms=time_ms, backend="cpu", device=device_name("cpu"))
