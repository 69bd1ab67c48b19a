"""R-MAT graphs with the Graph500 parameters, for large inputs where downloading is impossible."""

from __future__ import annotations

import numpy as np

from dynpr.graph import unique_sorted

#: Graph500 quadrant probabilities (d = 1 - a - b - c = 0.05)
GRAPH500_ABC = (0.57, 0.19, 0.19)


def rmat_edges(
    scale: int,
    edge_factor: int = 16,
    seed: int = 0,
    abc: tuple[float, float, float] = GRAPH500_ABC,
) -> tuple[np.ndarray, np.ndarray]:
    """Generate a directed R-MAT graph (Graph500 kernel-0 generator).

    ``edge_factor * 2**scale`` edges are drawn; each picks one quadrant per
    level of the recursive adjacency matrix with probabilities a, b, c, d. The
    vertex ids are then shuffled by a random permutation (so high degree is
    not concentrated at low ids), and self-loops and duplicate edges removed.
    Every level is one vectorized NumPy step over all edges.

    Parameters
    ----------
    scale : int
        ``log2`` of the number of vertices (1..30, so ids fit int32).
    edge_factor : int
        Edges drawn per vertex before deduplication.
    seed : int
        Seed of the NumPy ``Generator``; equal arguments give equal graphs.
    abc : tuple of float
        Probabilities of the top-left, top-right and bottom-left quadrants.

    Returns
    -------
    src, dst : numpy.ndarray of int32
        Unique non-self-loop edges, sorted by ``(src, dst)``.
    """
    if not 1 <= scale <= 30:
        raise ValueError(f"R-MAT scale {scale} out of range 1..30 (ids must fit int32)")
    a, b, c = abc
    if min(a, b, c) < 0 or a + b + c >= 1:
        raise ValueError(f"R-MAT probabilities a={a}, b={b}, c={c} must be >= 0 with a+b+c < 1")
    n = 1 << scale
    rng = np.random.default_rng(seed)
    src, dst = rmat_raw_edges(scale, edge_factor * n, rng, abc)
    perm = rng.permutation(n).astype(np.int32)
    src = perm[src]
    dst = perm[dst]
    keep = src != dst
    keys = unique_sorted(src[keep].astype(np.int64) * n + dst[keep])
    rows, cols = np.divmod(keys, n)
    return rows.astype(np.int32), cols.astype(np.int32)


def rmat_raw_edges(scale: int, num_edges: int, rng: np.random.Generator,
                   abc: tuple[float, float, float] = GRAPH500_ABC) -> tuple[np.ndarray, np.ndarray]:
    """Draw R-MAT edge endpoints, before permutation and deduplication.

    Bit ``level`` of the source (row) and target (column) ids is drawn for all
    edges at once: one vectorized step per level.

    Parameters
    ----------
    scale : int
        Number of bits per id.
    num_edges : int
        Edges to draw.
    rng : numpy.random.Generator
        Source of randomness.
    abc : tuple of float
        Quadrant probabilities a, b, c (d = 1 - a - b - c).

    Returns
    -------
    src, dst : numpy.ndarray of int32
    """
    a, b, c = abc
    m = num_edges
    # Graph500's formulation: the row bit is 1 with probability c+d; given the row
    # bit, the column bit is 1 with probability b/(a+b) (top) or d/(c+d) (bottom).
    ab = a + b
    col_given_top = np.float32(b / ab)
    col_given_bottom = np.float32((1.0 - ab - c) / (1.0 - ab))
    src = np.zeros(m, dtype=np.int32)
    dst = np.zeros(m, dtype=np.int32)
    for level in range(scale):
        row_bit = rng.random(m, dtype=np.float32) >= np.float32(ab)
        threshold = np.where(row_bit, col_given_bottom, col_given_top)
        col_bit = rng.random(m, dtype=np.float32) < threshold
        src |= row_bit.astype(np.int32) << level
        dst |= col_bit.astype(np.int32) << level
    return src, dst
