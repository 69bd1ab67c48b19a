"""Write a graph as a Matrix Market coordinate file, the input of the peer programs (Gunrock, Hornet).

Each edge ``u -> v`` is the entry ``(u + 1, v + 1)`` of value 1 (row = source, 1-based), in the
order of the graph's CSR, self-loops included. The text is made by NumPy a chunk of edges at a time
(each id left-aligned in a fixed-width, space-padded field, which every Matrix Market reader
accepts as whitespace), so a graph of hundreds of millions of edges takes no Python loop per edge.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from dynpr.graph.atomic_files import atomic_path

#: Edges formatted per chunk (about 20 bytes each in the file).
CHUNK_EDGES = 1 << 22
HEADER = "%%MatrixMarket matrix coordinate real general\n"


def id_columns(ids: np.ndarray, width: int) -> np.ndarray:
    """ASCII bytes of ``ids`` (non-negative integers of at most ``width`` digits), one row each, left-aligned
    and padded with spaces to ``width``.

    Raises
    ------
    ValueError
        If an id is negative or has more than ``width`` digits.
    """
    ids = np.asarray(ids, dtype=np.int64)
    if ids.size and (ids.min() < 0 or ids.max() >= 10 ** width):
        raise ValueError(f"ids must lie in [0, {10 ** width}), got [{ids.min()}, {ids.max()}]")
    digits = np.ones(ids.shape, dtype=np.int64)  # each id's digit count
    for power in range(1, width):
        digits += ids >= 10 ** power
    out = np.full((ids.size, width), ord(" "), dtype=np.uint8)
    for position in range(width):  # the digit at `position` from the left, where the id has one
        has = digits > position
        place = 10 ** np.maximum(digits - 1 - position, 0)
        out[has, position] = (ord("0") + (ids[has] // place[has]) % 10).astype(np.uint8)
    return out


def write_matrix_market(sources: np.ndarray, targets: np.ndarray, num_vertices: int, path: str | Path) -> None:
    """Write the edges ``sources[i] -> targets[i]`` (0-based) of an ``num_vertices``-vertex graph as a real
    general Matrix Market file, every value 1, atomically (complete or absent).

    Parameters
    ----------
    sources, targets : numpy.ndarray
        Edge endpoints, 0-based, of one length.
    num_vertices : int
        Rows and columns of the matrix.
    path : str or Path
        The file to write.

    Raises
    ------
    ValueError
        If the arrays differ in length or an id lies outside the graph.
    """
    if len(sources) != len(targets):
        raise ValueError(f"sources and targets differ in length: {len(sources)} vs {len(targets)}")
    width = len(str(num_vertices))
    with atomic_path(path) as tmp, open(tmp, "wb") as fh:
        fh.write(f"{HEADER}{num_vertices} {num_vertices} {len(sources)}\n".encode())
        for start in range(0, len(sources), CHUNK_EDGES):
            src = np.asarray(sources[start:start + CHUNK_EDGES], dtype=np.int64)
            dst = np.asarray(targets[start:start + CHUNK_EDGES], dtype=np.int64)
            if src.size and (min(src.min(), dst.min()) < 0 or max(src.max(), dst.max()) >= num_vertices):
                raise ValueError(f"edge ids must lie in [0, {num_vertices}) (edges from {start})")
            lines = np.empty((src.size, 2 * width + 4), dtype=np.uint8)
            lines[:, :width] = id_columns(src + 1, width)
            lines[:, width] = ord(" ")
            lines[:, width + 1:2 * width + 1] = id_columns(dst + 1, width)
            lines[:, -3:] = np.frombuffer(b" 1\n", dtype=np.uint8)
            fh.write(lines.tobytes())
