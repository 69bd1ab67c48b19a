"""Random DAGs with a depth to choose, edges only from a lower to a higher vertex id.

Those are the test graphs of the report "CUDA-Based Cycle Detection in Directed Graphs Using
Kahn's Algorithm" (README, "Glossary").

With ``depth`` set, the ids are cut into ``depth`` consecutive layers; every vertex of layer k > 0
gets one in-edge from layer k - 1 (so its longest path from a source has exactly k edges) and
the other edges join a random vertex to one in a strictly later layer. Kahn's level-synchronous
algorithm then needs exactly ``depth`` levels: layer k is the frontier of level k + 1.
Without ``depth`` the edges are uniform random pairs ordered low to high (depth is whatever
comes out, small for dense graphs).

:func:`report_matrix` draws the report's own benchmark graphs (its section 7.1.1) as dense
adjacency matrices: *cyclic* ones, every entry 1 with probability ``density`` ("fully random
binary matrices"), and *acyclic* ones, upper-triangular (edges only from a lower to a higher
id); :func:`matrix_graph` gives the same graph in CSR.
"""

from __future__ import annotations

import numpy as np

from dynpr.graph.graph import Graph


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


#: The report's graph kinds (its section 7.1.1).
REPORT_KINDS = ("cyclic", "acyclic")
# Rows drawn per call of the generator: a float32 block of ROW_CHUNK x n at most (160 MB at
# n = 40000) instead of the whole n x n matrix in float.
ROW_CHUNK = 1024


def report_name(kind: str, num_vertices: int) -> str:
    """The bench's name of a report graph: ``cyclic-10k``, ``acyclic-40k`` (thousands when whole)."""
    size = f"{num_vertices // 1000}k" if num_vertices % 1000 == 0 else str(num_vertices)
    return f"{kind}-{size}"


def report_matrix(num_vertices: int, kind: str, *, density: float = 0.5, seed: int = 0) -> np.ndarray:
    """A dense adjacency matrix of the report's benchmark (uint8, ``A[u, v] = 1`` for an edge u -> v).

    Parameters
    ----------
    num_vertices : int
        n; the matrix takes n * n bytes.
    kind : {"cyclic", "acyclic"}
        ``cyclic``: every entry (the diagonal too) is 1 with probability ``density``, so a
        graph of a few dozen vertices or more has cycles and, at the report's density, no vertex
        without in-edges. ``acyclic``: the same draw kept above the diagonal only.
    density : float
        Probability of an entry (0 < density <= 1); the report's matrices are fair coin flips.
    seed : int
        Seeds the NumPy ``Generator`` together with the kind (the two kinds draw independently);
        equal arguments give equal matrices.

    Raises
    ------
    ValueError
        For an unknown kind, a size out of range or a density outside (0, 1].
    """
    if kind not in REPORT_KINDS:
        raise ValueError(f"kind must be one of {REPORT_KINDS}, got {kind!r}")
    if not 1 <= num_vertices < 2**31:
        raise ValueError(f"num_vertices={num_vertices} must be in 1..2^31-1")
    if not 0 < density <= 1:
        raise ValueError(f"density={density} must be in (0, 1]")
    rng = np.random.default_rng([seed, REPORT_KINDS.index(kind)])
    n = num_vertices
    matrix = np.empty((n, n), dtype=np.uint8)
    for first in range(0, n, ROW_CHUNK):
        block = rng.random((min(ROW_CHUNK, n - first), n), dtype=np.float32) < density
        if kind == "acyclic":  # keep column > row: the block's row i is row first + i
            block = np.triu(block, k=first + 1)
        matrix[first:first + len(block)] = block
    return matrix


def matrix_graph(matrix: np.ndarray) -> Graph:
    """The graph of a dense adjacency matrix in CSR (no self-loop added: a 1 on the diagonal is one)."""
    n = len(matrix)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(matrix.sum(axis=1, dtype=np.int64), out=offsets[1:])
    targets = np.empty(int(offsets[-1]), dtype=np.int32)
    for first in range(0, n, ROW_CHUNK):  # np.nonzero lists a block's entries row by row, columns ascending
        last = min(first + ROW_CHUNK, n)
        targets[offsets[first]:offsets[last]] = np.nonzero(matrix[first:last])[1]
    return Graph.from_csr(offsets, targets)
