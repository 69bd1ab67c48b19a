"""Random DAGs with a depth to choose, edges only from a lower to a higher vertex id.

Those are the test graphs of the report "CUDA-Based Cycle Detection in Directed Graphs Using
Kahn's Algorithm" (README, "Glossary").

With ``depth`` set, the ids are cut into ``depth`` consecutive layers; every vertex of layer k > 0
gets one in-edge from layer k - 1 (so its longest path from a source has exactly k edges) and
the other edges join a random vertex to one in a strictly later layer. Kahn's level-synchronous
algorithm then needs exactly ``depth`` levels: layer k is the frontier of level k + 1.
Without ``depth`` the edges are uniform random pairs ordered low to high (depth is whatever
comes out, small for dense graphs).
"""

from __future__ import annotations

import numpy as np

from dynpr.graph import Graph


def layer_starts(num_vertices: int, depth: int) -> np.ndarray:
    """First id of each of ``depth`` near-equal consecutive layers, plus ``num_vertices`` at the end."""
    return (np.arange(depth + 1, dtype=np.int64) * num_vertices) // depth


def random_dag(num_vertices: int, num_edges: int, *, depth: int | None = None, seed: int = 0) -> Graph:
    """Draw a DAG whose edges all go from a lower to a higher id.

    Parameters
    ----------
    num_vertices : int
        Vertex count n (ids fit int32).
    num_edges : int
        Edges drawn; duplicates are removed, so the graph may hold a few fewer.
        With ``depth``, at least the ``n - |layer 0|`` chain edges are drawn.
    depth : int, optional
        Kahn levels of the result (1 <= depth <= n); None for uniform pairs.
    seed : int
        Seed of the NumPy ``Generator``; equal arguments give equal graphs.

    Returns
    -------
    Graph
        Without self-loops (``self_loops=False``), so Kahn sees no cycle.

    Raises
    ------
    ValueError
        For sizes or a depth out of range.
    """
    if not 1 <= num_vertices < 2**31:
        raise ValueError(f"num_vertices={num_vertices} must be in 1..2^31-1")
    if num_edges < 0:
        raise ValueError(f"num_edges={num_edges} must be >= 0")
    rng = np.random.default_rng(seed)
    n = num_vertices
    if depth is None:
        if n < 2:
            return Graph.from_edges(np.empty(0, np.int32), np.empty(0, np.int32), n, self_loops=False)
        a = rng.integers(0, n, num_edges, dtype=np.int64)
        b = rng.integers(0, n - 1, num_edges, dtype=np.int64)
        b += b >= a  # a uniform different id
        return Graph.from_edges(np.minimum(a, b), np.maximum(a, b), n, self_loops=False)
    if not 1 <= depth <= n:
        raise ValueError(f"depth={depth} must be in 1..num_vertices={n}")
    starts = layer_starts(n, depth)
    size = np.diff(starts)
    # Chain edges: each vertex past layer 0 from a random vertex of the layer before its own.
    later = np.arange(starts[1], n, dtype=np.int64)
    layer = np.searchsorted(starts, later, side="right") - 1
    chain_src = starts[layer - 1] + (rng.random(later.size) * size[layer - 1]).astype(np.int64)
    extra = max(num_edges - later.size, 0)
    if depth == 1 or extra == 0:
        src, dst = chain_src, later
    else:
        # Extra edges: a target past layer 0, a source anywhere before its layer.
        dst = rng.integers(starts[1], n, extra, dtype=np.int64)
        bound = starts[np.searchsorted(starts, dst, side="right") - 1]
        extra_src = (rng.random(extra) * bound).astype(np.int64)
        src, dst = np.concatenate([chain_src, extra_src]), np.concatenate([later, dst])
    return Graph.from_edges(src, dst, n, self_loops=False)
