"""Cycle detection with Kahn's algorithm, level-synchronous (the report "CUDA-Based Cycle Detection in
Directed Graphs Using Kahn's Algorithm", section 5).

Each level removes every vertex whose in-degree has reached zero and decrements
the in-degree of their out-neighbours (once per edge). The graph is a DAG when
every vertex gets removed; the vertices left lie on a cycle or downstream of one. The
engines: :mod:`dynpr.kahn.cpu` (NumPy) and :mod:`dynpr.gpu.kahn` (CuPy); :func:`kahn` picks one.
"""

from __future__ import annotations

from dynpr.backend import resolve_backend
from dynpr.errors import InputError
from dynpr.graph.graph import Graph
from dynpr.kahn.cpu import KahnResult, kahn_dense
from dynpr.kahn.cpu import kahn as cpu_kahn

__all__ = ["KahnResult", "kahn", "kahn_dense"]


def kahn(graph: Graph, *, backend: str = "auto") -> KahnResult:
    """Detect cycles with level-synchronous Kahn's algorithm.

    Parameters
    ----------
    graph : Graph
        The graph as given: a self-loop counts as a cycle, so pass
        ``graph.without_self_loops()`` to ignore the loops PageRank adds.
    backend : {"cpu", "gpu", "auto"}
        Where to run; ``"gpu"`` uses ``dynpr.gpu.kahn.kahn``.

    Returns
    -------
    KahnResult
        DAG flag, processed vertices, levels, vertices left, time.

    Raises
    ------
    ValueError
        On an unknown backend; an :class:`~dynpr.errors.InputError` (one) for a ``graph`` that is
        not a :class:`~dynpr.graph.graph.Graph`.
    RuntimeError
        If ``backend="gpu"`` and no GPU is usable.
    """
    if not isinstance(graph, Graph):
        raise InputError(f"graph must be a dynpr.graph.graph.Graph, not {type(graph).__name__}")
    if resolve_backend(backend) == "gpu":
        from dynpr.gpu.kahn import kahn as gpu_kahn

        return gpu_kahn(graph)
    return cpu_kahn(graph)
