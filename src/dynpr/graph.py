"""Directed graphs in compressed sparse row form, with their transpose.

A :class:`Graph` holds the out-edges (CSR of G, used for marking affected
vertices) and the in-edges (CSR of the transpose G', used to pull ranks).
Vertex ids are int32, offsets int64 so graphs beyond 2^31 edges fit.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp

VERTEX_DTYPE = np.int32
OFFSET_DTYPE = np.int64
MAX_VERTICES = int(np.iinfo(VERTEX_DTYPE).max)


def edge_keys(src: np.ndarray, dst: np.ndarray, num_vertices: int) -> np.ndarray:
    """Encode edges as int64 keys ``src * n + dst`` (sorted keys = CSR order)."""
    return src.astype(np.int64) * np.int64(num_vertices) + dst.astype(np.int64)


def unique_sorted(keys: np.ndarray) -> np.ndarray:
    """Sorted unique values of an int64 array.

    Sort plus a neighbour compare: NumPy 2.3+'s hash-based ``np.unique`` is
    about 15x slower on tens of millions of edge keys.
    """
    keys = np.sort(keys)
    if keys.size:
        keep = np.empty(keys.size, dtype=bool)
        keep[0] = True
        np.not_equal(keys[1:], keys[:-1], out=keep[1:])
        keys = keys[keep]
    return keys


def _csr_from_sorted(rows: np.ndarray, cols: np.ndarray, num_vertices: int):
    counts = np.bincount(rows, minlength=num_vertices)
    offsets = np.zeros(num_vertices + 1, dtype=OFFSET_DTYPE)
    np.cumsum(counts, out=offsets[1:])
    return offsets, cols.astype(VERTEX_DTYPE, copy=False)


@dataclass(frozen=True, eq=False)
class Graph:
    """A directed graph as CSR of G (out-edges) and CSR of G' (in-edges).

    Build one with :meth:`from_edges`; the arrays are never modified in place.
    """

    offsets: np.ndarray  # int64, |V|+1: out-edges of u are targets[offsets[u]:offsets[u+1]]
    targets: np.ndarray  # int32, |E|, sorted within each row
    in_offsets: np.ndarray  # int64, |V|+1: in-edges of v are sources[in_offsets[v]:...]
    sources: np.ndarray  # int32, |E|, sorted within each row

    @classmethod
    def from_edges(
        cls,
        src: np.ndarray,
        dst: np.ndarray,
        num_vertices: int | None = None,
        *,
        self_loops: bool = True,
    ) -> "Graph":
        """Build a graph from edge arrays, removing duplicate edges.

        Parameters
        ----------
        src, dst : array_like of int
            Edge endpoints; any integer dtype.
        num_vertices : int, optional
            Number of vertices; defaults to ``max id + 1``.
        self_loops : bool
            Add a self-loop on every vertex (the paper's remedy for dead ends).

        Raises
        ------
        ValueError
            If an id is negative, not below ``num_vertices``, or beyond int32.
        """
        src = np.asarray(src)
        dst = np.asarray(dst)
        if src.shape != dst.shape or src.ndim != 1:
            raise ValueError(f"src and dst must be 1-D arrays of one length, got {src.shape} and {dst.shape}")
        max_id = int(max(src.max(initial=-1), dst.max(initial=-1)))
        if num_vertices is None:
            num_vertices = max_id + 1
        if src.size and min(int(src.min()), int(dst.min())) < 0:
            raise ValueError("negative vertex id in edge list")
        if max_id >= num_vertices:
            raise ValueError(f"vertex id {max_id} is not below num_vertices={num_vertices}")
        if num_vertices > MAX_VERTICES:
            raise ValueError(
                f"{num_vertices} vertices do not fit int32 vertex ids (at most {MAX_VERTICES}); "
                "renumber the graph's vertices densely"
            )
        keys = edge_keys(src, dst, num_vertices)
        if self_loops:
            loops = np.arange(num_vertices, dtype=np.int64)
            keys = np.concatenate([keys, loops * np.int64(num_vertices) + loops])
        return cls.from_keys(unique_sorted(keys), num_vertices)

    @classmethod
    def from_keys(cls, keys: np.ndarray, num_vertices: int) -> "Graph":
        """Build a graph from sorted, unique edge keys (see :func:`edge_keys`)."""
        n = np.int64(num_vertices)
        rows, cols = np.divmod(keys, n)
        offsets, targets = _csr_from_sorted(rows, cols, num_vertices)
        if len(keys) < np.iinfo(np.int32).max:
            # SciPy's CSR -> CSC is a linear counting sort that keeps rows ascending within
            # each column: the same transpose as the stable argsort below (R-MAT scale 20,
            # 16M edges, 2 cores: all of from_keys 0.8 s, the argsort transpose alone 2.4 s).
            csc = sp.csr_array((np.ones(len(keys), dtype=np.int8), targets, offsets),
                               shape=(num_vertices, num_vertices)).tocsc()
            return cls(offsets, targets, csc.indptr.astype(OFFSET_DTYPE), csc.indices.astype(VERTEX_DTYPE))
        # keys are sorted by row, so a stable sort by column orders the transpose by (col, row)
        order = np.argsort(cols, kind="stable")
        in_offsets, sources = _csr_from_sorted(cols[order], rows[order], num_vertices)
        return cls(offsets, targets, in_offsets, sources)

    @property
    def num_vertices(self) -> int:
        return len(self.offsets) - 1

    @property
    def num_edges(self) -> int:
        return len(self.targets)

    @property
    def out_degree(self) -> np.ndarray:
        """Out-degree of every vertex, int32."""
        return np.diff(self.offsets).astype(VERTEX_DTYPE)

    @property
    def in_degree(self) -> np.ndarray:
        """In-degree of every vertex, int32."""
        return np.diff(self.in_offsets).astype(VERTEX_DTYPE)

    def edges(self) -> tuple[np.ndarray, np.ndarray]:
        """All edges as ``(src, dst)`` int32 arrays in CSR order."""
        src = np.repeat(np.arange(self.num_vertices, dtype=VERTEX_DTYPE), np.diff(self.offsets))
        return src, self.targets

    def keys(self) -> np.ndarray:
        """Sorted int64 edge keys (see :func:`edge_keys`)."""
        src, dst = self.edges()
        return edge_keys(src, dst, self.num_vertices)

    def has_edges(self, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
        """Boolean mask: is each ``(src[i], dst[i])`` an edge of the graph."""
        keys = self.keys()
        query = edge_keys(np.asarray(src), np.asarray(dst), self.num_vertices)
        pos = np.searchsorted(keys, query)
        found = pos < len(keys)
        found[found] = keys[pos[found]] == query[found]
        return found

    def without_self_loops(self) -> "Graph":
        """The same graph with every self-loop removed."""
        src, dst = self.edges()
        keep = src != dst
        return Graph.from_edges(src[keep], dst[keep], self.num_vertices, self_loops=False)

    def save(self, path: str | Path, **extra: np.ndarray) -> None:
        """Write the graph (and any extra arrays) to an ``.npz`` file atomically, with its sha256."""
        from dynpr.fileio import atomic_path
        from dynpr.validate import DIGEST_KEY, graph_digest

        with atomic_path(path) as tmp:
            with open(tmp, "wb") as fh:
                np.savez(fh, offsets=self.offsets, targets=self.targets, in_offsets=self.in_offsets,
                         sources=self.sources, **{DIGEST_KEY: np.asarray(graph_digest(self))}, **extra)

    @classmethod
    def load(cls, path: str | Path) -> "Graph":
        """Read a graph written by :meth:`save`, checked (:func:`dynpr.validate.read_graph_npz`)."""
        from dynpr.validate import read_graph_npz

        return read_graph_npz(path)[0]
