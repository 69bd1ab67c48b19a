"""Directed graphs in compressed sparse row form, with their transpose.

A :class:`Graph` holds the out-edges (CSR of G, used for marking affected
vertices) and the in-edges (CSR of the transpose G', used to pull ranks).
Vertex ids are int32, offsets int64 so graphs beyond 2^31 edges fit.

The graph operations every other module needs live here once: edge keys and
membership (:func:`edge_keys`, :func:`contains_sorted`, :meth:`Graph.find_edges`),
self-loop completion (:func:`with_self_loops`), dense renumbering
(:func:`renumber`), CSR gathers (:func:`rows_of_positions`), the transpose
(:func:`transpose_csr`) and row splicing (:func:`splice_csr`), which applies a
batch in one pass over the arrays without building int64 keys for every edge.
"""

from __future__ import annotations

import hashlib
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache, cached_property
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from dynpr.graph.arrays import (MAX_VERTICES, OFFSET_DTYPE, VERTEX_DTYPE, array_module, as_array,  # noqa: F401 (re-exported)
                          on_device, to_host)
from dynpr.graph.atomic_files import atomic_path
from dynpr.graph.csr_checks import ARRAYS_DIGEST_KEY, DIGEST_KEY, arrays_digest, check_csr, read_graph_arrays
from dynpr.errors import GraphError
from dynpr.graph.npz_files import chunks

# Largest CSR that SciPy transposes with int32 indices (beyond it, :func:`transpose_csr` cuts column ranges).
_SCIPY_TRANSPOSE_LIMIT = int(np.iinfo(np.int32).max) - 1
# Edges per block of the host's streaming pass for self-loop positions.
_LOOP_BLOCK = 1 << 24
# splice_csr copies kept entries in about _SPLICE_PIECES pieces of at least _MIN_PIECE and at
# most _MAX_PIECE old entries: its masks and kept columns (~7 bytes per entry) are then scratch
# of a piece, not of the graph, in few launches on the device (CuPy's masks stop at 2^31).
_SPLICE_PIECES, _MIN_PIECE, _MAX_PIECE = 8, 1 << 22, 1 << 30
# Host queries beyond which (and beyond |E|/64) a streaming pass replaces per-row searches.
_BULK_QUERIES = 1 << 16


def _counts(xp, rows, n: int):
    """int64 entries per row; CuPy's bincount rejects an empty input."""
    if len(rows) == 0:
        return xp.zeros(n, dtype=np.int64)
    return xp.bincount(rows, minlength=n).astype(np.int64, copy=False)


def edge_keys(src: np.ndarray, dst: np.ndarray, num_vertices: int) -> np.ndarray:
    """Encode edges as int64 keys ``src * n + dst`` (sorted keys = CSR order)."""
    return src.astype(np.int64) * np.int64(num_vertices) + dst.astype(np.int64)


def unique_sorted(keys: np.ndarray) -> np.ndarray:
    """Sorted unique values of an int64 array (NumPy or CuPy, where ``keys`` is).

    Sort plus a neighbour compare: NumPy 2.3+'s hash-based ``np.unique`` is
    about 15x slower on tens of millions of edge keys.
    """
    xp = array_module(keys)
    keys = xp.sort(keys)
    if keys.size:
        keep = xp.empty(keys.size, dtype=bool)
        keep[0] = True
        xp.not_equal(keys[1:], keys[:-1], out=keep[1:])
        keys = keys[keep]
    return keys


def contains_sorted(sorted_keys: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Boolean mask: is each query value in ``sorted_keys`` (sorted ascending; NumPy or CuPy)."""
    pos = array_module(sorted_keys).searchsorted(sorted_keys, query)
    found = pos < len(sorted_keys)
    found[found] = sorted_keys[pos[found]] == query[found]
    return found


def with_self_loops(keys: np.ndarray, num_vertices: int) -> np.ndarray:
    """Sorted unique edge keys plus the self-loop ``(v, v)`` of every vertex that lacks one."""
    loops = np.arange(num_vertices, dtype=np.int64) * np.int64(num_vertices + 1)
    missing = loops[~contains_sorted(keys, loops)]
    return merge_disjoint(keys, missing)


def merge_disjoint(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Merge two sorted arrays with no common element into one sorted array.

    O(|a| + |b| log |a|): a sort of the concatenation would cost
    O((|a|+|b|) log) on a graph-sized array.
    """
    if len(b) == 0:
        return a
    out = np.empty(len(a) + len(b), dtype=np.result_type(a, b))
    at = np.searchsorted(a, b) + np.arange(len(b))
    is_b = np.zeros(len(out), dtype=bool)
    is_b[at] = True
    out[at] = b
    out[~is_b] = a
    return out


def renumber(src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Renumber endpoint ids densely, in ascending order of the original ids.

    Returns
    -------
    vertex_ids : ndarray of int64
        Original id of each new id (sorted).
    src, dst : ndarray of int64
        The edges with new ids.
    """
    vertex_ids = unique_sorted(np.concatenate([src, dst]).astype(np.int64, copy=False))
    return vertex_ids, np.searchsorted(vertex_ids, src), np.searchsorted(vertex_ids, dst)


def rows_of_positions(offsets, positions):
    """Row (vertex) of each position in a CSR's column array, int32: a gather by binary search."""
    xp = array_module(offsets)
    return (xp.searchsorted(offsets, xp.asarray(positions), side="right") - 1).astype(VERTEX_DTYPE)


def row_lower_bound(offsets, cols, rows, values):
    """Position of the first entry ``>= value`` in each CSR row (rows sorted), int64.

    A binary search over all queries at once: O(k log(max row length)) work
    for k queries, no per-edge array (the row end when every entry is smaller).
    NumPy or CuPy, as ``cols`` is.
    """
    xp = array_module(cols)
    rows = xp.asarray(rows, dtype=np.int64)
    values = xp.asarray(values)
    lo = offsets[rows].astype(np.int64)
    hi = offsets[rows + 1].astype(np.int64)
    if lo.size == 0:
        return lo
    if xp is np:
        return _row_lower_bound_host(cols, lo, hi, values)
    return _device_lower_bound()(cols, lo, hi, values.astype(cols.dtype, copy=False))


@cache
def _device_lower_bound():
    """:func:`row_lower_bound` on the device: a thread per query searches its row. One kernel,
    where NumPy-style steps launched several per step, each with a reduction to test for the
    end that CuPy compiles anew for every block size it picks (seconds of NVRTC on the first
    batches of a new size: 6 s for the first batch applied to R-MAT 25 on the H100 host)."""
    import cupy

    return cupy.ElementwiseKernel(
        "raw T cols, int64 lo, int64 hi, T value", "int64 pos",
        """
        long long l = lo, h = hi;
        while (l < h) {
          const long long mid = (l + h) >> 1;
          if (cols[mid] < value) l = mid + 1; else h = mid;
        }
        pos = l;
        """, "dynpr_row_lower_bound")


def _row_lower_bound_host(cols, lo, hi, values):
    """:func:`row_lower_bound` on the host: each step searches only the queries still open.

    The step count is set by the longest row queried (R-MAT scale 22: 98,054
    entries, 18 steps), but a uniformly drawn row has a few entries (about two
    steps on average there): dropping the settled queries after each step keeps
    the work near the sum of ``log2(row length)`` instead of 18 passes over all
    queries. ``lo`` is updated in place and returned.
    """
    open_ = np.flatnonzero(lo < hi)
    low, high, v = lo[open_], hi[open_], values[open_]
    while open_.size:
        mid = (low + high) >> 1
        right = cols[mid] < v
        low = np.where(right, mid + 1, low)
        high = np.where(right, high, mid)
        done = low >= high
        if done.any():
            lo[open_[done]] = low[done]
            still = ~done
            open_, low, high, v = open_[still], low[still], high[still], v[still]
    return lo


def _find_in_rows(offsets, cols, rows, values) -> tuple[np.ndarray, np.ndarray]:
    """``(found, position)`` of each query, computed and returned where the CSR lives."""
    xp = array_module(cols)
    rows = xp.asarray(rows, dtype=np.int64)
    values = xp.asarray(values)
    if xp is np and len(rows) > max(_BULK_QUERIES, len(cols) >> 6):
        return _find_in_blocks(offsets, cols, rows, values)
    pos = row_lower_bound(offsets, cols, rows, values)
    found = pos < offsets[rows + 1]
    found[found] = cols[pos[found]] == values[found]
    return found, pos


def _find_in_blocks(offsets, cols, rows, values) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_find_in_rows` for many host queries: one streaming pass over the CSR.

    Per block of rows (a thread each), the block's int64 keys ``row * span + col``
    are built and the sorted queries located in them by ``np.searchsorted``:
    O(|E| + k log) with C-speed searches, where k row searches in NumPy steps
    cost ~20 passes over the queries.
    """
    n = len(offsets) - 1
    span = np.int64(max(n, int(values.max(initial=0)) + 1))
    keys = rows * span + values
    order = np.argsort(keys)
    keys = keys[order]
    found = np.zeros(len(keys), dtype=bool)
    pos = np.empty(len(keys), dtype=np.int64)
    bounds = np.unique(np.append(np.searchsorted(offsets, np.arange(0, len(cols), _LOOP_BLOCK), side="right") - 1, n))

    def block(r0: int, r1: int) -> None:
        q0, q1 = np.searchsorted(keys, [r0 * span, r1 * span])
        if q0 == q1:
            return
        e0, e1 = int(offsets[r0]), int(offsets[r1])
        local = np.repeat(np.arange(r1 - r0, dtype=np.int64), np.diff(offsets[r0:r1 + 1])) * span + cols[e0:e1]
        query = keys[q0:q1] - r0 * span
        at = np.searchsorted(local, query)
        hit = at < len(local)
        hit[hit] = local[at[hit]] == query[hit]
        found[q0:q1], pos[q0:q1] = hit, at + e0

    with ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        list(pool.map(block, bounds[:-1], bounds[1:]))
    found[order], pos[order] = found.copy(), pos.copy()
    return found, pos


def splice_csr(offsets, cols, del_pos, ins_rows, ins_cols):
    """A CSR with some entries removed and others inserted, in one pass over the columns.

    Parameters
    ----------
    offsets, cols : ndarray
        The CSR (int64 offsets, int32 columns sorted within each row), NumPy or
        CuPy: the splice runs where they are.
    del_pos : ndarray of int64
        Sorted, unique positions in ``cols`` to remove.
    ins_rows, ins_cols : ndarray
        Entries to insert, sorted by ``(row, col)``, none present after the removals.

    Returns
    -------
    offsets, cols : ndarray
        The new CSR, rows still sorted. Besides the output, the scratch is one
        byte per entry (which output slots are new) plus ~7 bytes per entry of a piece.
    """
    xp = array_module(cols)
    n = len(offsets) - 1
    del_pos = xp.asarray(del_pos, dtype=np.int64)
    ins_rows = xp.asarray(ins_rows, dtype=np.int64)
    ins_cols = xp.asarray(ins_cols, dtype=cols.dtype)
    delta = _counts(xp, ins_rows, n)  # less the deletions per row, in place: one n-vector fewer
    new_offsets = offsets.copy()
    new_offsets[1:] += xp.cumsum(xp.subtract(delta, _counts(xp, rows_of_positions(offsets, del_pos), n), out=delta))
    at_old = _find_in_rows(offsets, cols, ins_rows, ins_cols)[1] if xp is np else \
        row_lower_bound(offsets, cols, ins_rows, ins_cols)
    # an inserted entry lands before the old entry at its lower bound, shifted by the
    # removals before it and the insertions before it
    at_new = at_old - xp.searchsorted(del_pos, at_old) + xp.arange(len(at_old))
    new_cols = xp.empty(int(new_offsets[-1]), dtype=cols.dtype)
    is_new = xp.zeros(len(new_cols), dtype=bool)
    is_new[at_new] = True
    new_cols[at_new] = ins_cols
    # The kept entries fill the other slots in order: the one of rank k (among kept entries) goes
    # to slot k + #{i: at_new[i] - i <= k}. Copied in pieces (see _SPLICE_PIECES).
    before_new = at_new - xp.arange(len(at_new))  # kept slots before each new one, non-decreasing
    step = min(_MAX_PIECE, max(_MIN_PIECE, -(-len(cols) // _SPLICE_PIECES)))
    for start in range(0, len(cols), step):
        stop = min(start + step, len(cols))
        piece = cols[start:stop]
        if len(del_pos):
            gone = xp.searchsorted(del_pos, xp.asarray([start, stop], dtype=np.int64))
            keep = xp.ones(stop - start, dtype=bool)
            keep[del_pos[int(gone[0]):int(gone[1])] - start] = False
            piece = piece[keep]
            first, last = start - int(gone[0]), stop - int(gone[1])  # ranks of the piece's kept entries
        else:
            first, last = start, stop
        if first == last:
            continue
        ends = xp.asarray([first, last - 1], dtype=np.int64)
        lo, hi = (int(x) for x in ends + xp.searchsorted(before_new, ends, side="right"))
        new_cols[lo:hi + 1][~is_new[lo:hi + 1]] = piece
    return new_offsets, new_cols


def transpose_csr(offsets: np.ndarray, cols: np.ndarray, num_vertices: int) -> tuple[np.ndarray, np.ndarray]:
    """The CSR of the transpose, rows sorted (a counting sort: stable in the source rows).

    SciPy's linear CSR -> CSC does it (R-MAT scale 20, 16M edges, 2 cores: 0.8 s,
    where an argsort by column took 2.4 s). Beyond 2^31 entries SciPy switches
    to int64 indices and temporaries of ~17 bytes per edge, so the columns are
    cut into ranges of fewer entries, each transposed by SciPy with int32
    indices into its slice of the output: scratch ~8 bytes per entry of a range.
    """
    m = len(cols)
    counts = np.bincount(cols, minlength=num_vertices)
    in_offsets = np.zeros(num_vertices + 1, dtype=OFFSET_DTYPE)
    np.cumsum(counts, out=in_offsets[1:])
    del counts
    if m <= _SCIPY_TRANSPOSE_LIMIT:
        return in_offsets, _scipy_transpose(offsets, cols, num_vertices, num_vertices)
    sources = np.empty(m, dtype=VERTEX_DTYPE)
    nonempty = np.diff(offsets) > 0
    c0 = 0
    while c0 < num_vertices:
        # the most columns whose entries fit SciPy's int32 indices (at least one)
        c1 = max(c0 + 1, int(np.searchsorted(in_offsets, in_offsets[c0] + _SCIPY_TRANSPOSE_LIMIT, side="right")) - 1)
        inside = (cols >= c0) & (cols < c1)
        # entries of each row inside the range (reduceat over the non-empty rows only:
        # it reads one element for an empty segment)
        per_row = np.zeros(num_vertices, dtype=np.int64)
        per_row[nonempty] = np.add.reduceat(inside, offsets[:-1][nonempty], dtype=np.int64)
        part_offsets = np.zeros(num_vertices + 1, dtype=OFFSET_DTYPE)
        np.cumsum(per_row, out=part_offsets[1:])
        del per_row
        part_cols = cols[inside]
        del inside
        part_cols -= c0
        sources[in_offsets[c0]:in_offsets[c1]] = _scipy_transpose(part_offsets, part_cols, num_vertices, c1 - c0)
        del part_cols, part_offsets
        c0 = c1
    return in_offsets, sources


def _scipy_transpose(offsets, cols, rows: int, columns: int) -> np.ndarray:
    """Row ids of a CSR's entries in column order (rows ascending within a column), int32."""
    csc = sp.csr_array((np.ones(len(cols), dtype=np.int8), cols, offsets), shape=(rows, columns)).tocsc()
    return csc.indices.astype(VERTEX_DTYPE, copy=False)


@dataclass(frozen=True, eq=False)
class Graph:
    """A directed graph as CSR of G (out-edges) and CSR of G' (in-edges).

    Build one with :meth:`from_edges`; the arrays are never modified in place.
    """

    offsets: np.ndarray  # int64, |V|+1: out-edges of u are targets[offsets[u]:offsets[u+1]]
    targets: np.ndarray  # int32, |E|, sorted within each row
    in_offsets: np.ndarray  # int64, |V|+1: in-edges of v are sources[in_offsets[v]:...]
    sources: np.ndarray  # int32, |E|, sorted within each row
    vertex_ids: np.ndarray | None = None  # int64 original id of each vertex; None: the ids are the original ones

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
        GraphError
            (a ``ValueError``) If an id is not an integer (``0.5`` is never truncated), is negative,
            not below ``num_vertices``, or beyond int32.
        """
        src = np.asarray(src)
        dst = np.asarray(dst)
        if src.shape != dst.shape or src.ndim != 1:
            raise GraphError(f"src and dst must be 1-D arrays of one length, got {src.shape} and {dst.shape}")
        if src.size and not (np.issubdtype(src.dtype, np.integer) and np.issubdtype(dst.dtype, np.integer)):
            raise GraphError(f"vertex ids must be integers, not {src.dtype} and {dst.dtype}")
        max_id = int(max(src.max(initial=-1), dst.max(initial=-1)))
        if num_vertices is None:
            num_vertices = max_id + 1
        if src.size and min(int(src.min()), int(dst.min())) < 0:
            raise GraphError("negative vertex id in edge list")
        if max_id >= num_vertices:
            raise GraphError(f"vertex id {max_id} is not below num_vertices={num_vertices}")
        if num_vertices > MAX_VERTICES:
            raise GraphError(
                f"{num_vertices} vertices do not fit int32 vertex ids (at most {MAX_VERTICES}); "
                "renumber the graph's vertices densely"
            )
        keys = unique_sorted(edge_keys(src, dst, num_vertices))
        if self_loops:
            keys = with_self_loops(keys, num_vertices)
        return cls.from_keys(keys, num_vertices)

    @classmethod
    def from_keys(cls, keys: np.ndarray, num_vertices: int) -> "Graph":
        """Build a graph from sorted, unique edge keys (see :func:`edge_keys`)."""
        rows, cols = np.divmod(keys, np.int64(num_vertices))
        return cls.from_csr(csr_offsets(rows, num_vertices), cols.astype(VERTEX_DTYPE))

    @classmethod
    def from_csr(cls, offsets: np.ndarray, targets: np.ndarray, vertex_ids: np.ndarray | None = None) -> "Graph":
        """Build a graph from its out-CSR (rows sorted, no duplicates); the transpose is computed."""
        num_vertices = len(offsets) - 1
        return cls(offsets, targets, *transpose_csr(offsets, targets, num_vertices), vertex_ids)

    @property
    def num_vertices(self) -> int:
        return len(self.offsets) - 1

    @property
    def num_edges(self) -> int:
        return len(self.targets)

    @property
    def nbytes(self) -> int:
        """Bytes of the CSR and its transpose."""
        return sum(a.nbytes for a in (self.offsets, self.targets, self.in_offsets, self.sources))

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

    def find_edges(self, src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Where each ``(src[i], dst[i])`` is in the out-CSR, by binary search in row ``src[i]``.

        Returns
        -------
        found : ndarray of bool
        positions : ndarray of int64
            Index into ``targets`` (of the edge when found, else where it would go). Both
            are NumPy or CuPy arrays as the graph is.
        """
        return _find_in_rows(self.offsets, self.targets, src, dst)

    def find_in_edges(self, dst: np.ndarray, src: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Where each edge ``(src[i], dst[i])`` is in the transpose (row ``dst[i]`` of ``sources``)."""
        return _find_in_rows(self.in_offsets, self.sources, dst, src)

    def has_edges(self, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
        """Boolean mask: is each ``(src[i], dst[i])`` an edge of the graph."""
        return self.find_edges(src, dst)[0]

    def original_ids(self) -> np.ndarray:
        """int64 original id of each vertex: :attr:`vertex_ids`, or each id itself when there are none."""
        return self.vertex_ids if self.vertex_ids is not None else np.arange(self.num_vertices, dtype=np.int64)

    @cached_property
    def sha256(self) -> str:
        """Hex sha256 of the CSR (int64 offsets, then int32 targets; the transpose follows from
        it), computed once per graph: :meth:`save` stores it, loads and batch files check it."""
        digest = hashlib.sha256()
        for array, dtype in ((self.offsets, OFFSET_DTYPE), (self.targets, VERTEX_DTYPE)):
            for part in chunks(np.ascontiguousarray(to_host(array), dtype=dtype)):  # mapped pages leave as hashed
                digest.update(part.data)
        return digest.hexdigest()

    @property
    def num_self_loops(self) -> int:
        """Number of self-loops (from :attr:`self_loop_positions`, computed once per graph)."""
        positions = self.self_loop_positions
        return int(array_module(positions).count_nonzero(positions >= 0))

    @cached_property
    def self_loop_positions(self) -> np.ndarray:
        """int64 position in ``targets`` of each vertex's self-loop, -1 where it has none, where
        the graph is (a CuPy array for a resident graph).

        Computed once per graph (the graph never changes): on the device one
        binary search per vertex; on the host one streaming pass over the
        out-CSR in row blocks on a thread pool (a vertex's self-loop sits after
        the entries of its row that are smaller than it).
        """
        n = self.num_vertices
        xp = array_module(self.targets)
        if xp is not np:
            v = xp.arange(n, dtype=np.int64)
            found, pos = self.find_edges(v, v)
            pos[~found] = -1
            return pos
        offsets, targets = self.offsets, self.targets
        pos = np.full(n, -1, dtype=np.int64)
        starts = np.searchsorted(offsets, np.arange(0, self.num_edges, _LOOP_BLOCK), side="right") - 1
        bounds = np.unique(np.append(starts, n))

        def block(r0: int, r1: int) -> None:
            degree = np.diff(offsets[r0:r1 + 1])
            rows = np.arange(r0, r1, dtype=VERTEX_DTYPE)
            e0, e1 = int(offsets[r0]), int(offsets[r1])
            smaller = targets[e0:e1] < np.repeat(rows, degree)
            nonempty = np.flatnonzero(degree)
            at = offsets[r0:r1][nonempty]
            at += np.add.reduceat(smaller, at - e0, dtype=np.int64) if len(nonempty) else 0
            ok = at < offsets[r0 + 1:r1 + 1][nonempty]
            ok[ok] = targets[at[ok]] == rows[nonempty][ok]
            pos[r0 + nonempty[ok]] = at[ok]

        with ThreadPoolExecutor(os.cpu_count() or 1) as pool:
            list(pool.map(block, bounds[:-1], bounds[1:]))
        return pos

    def without_self_loops(self) -> "Graph":
        """The same graph with every self-loop removed, where the graph is (host or device).

        Both sides are spliced (:func:`splice_csr`): beside the new graph, scratch of a
        piece of the CSR and a few vertex-sized arrays, never an array of all edge keys.
        """
        xp = array_module(self.targets)
        v = xp.arange(self.num_vertices, dtype=np.int64)
        none = xp.empty(0, dtype=np.int64)
        out_found, out_pos = self.find_edges(v, v)
        offsets, targets = splice_csr(self.offsets, self.targets, out_pos[out_found], none, none)
        del out_found, out_pos
        in_found, in_pos = self.find_in_edges(v, v)
        in_offsets, sources = splice_csr(self.in_offsets, self.sources, in_pos[in_found], none, none)
        return Graph(offsets, targets, in_offsets, sources, self.vertex_ids)

    def save(self, path: str | Path, **extra: np.ndarray) -> None:
        """Write the graph (its ``vertex_ids`` too, and any extra arrays) to an ``.npz`` file atomically,
        with its sha256 and one of the extra arrays (:func:`dynpr.graph.csr_checks.arrays_digest`)."""
        if self.vertex_ids is not None:
            extra = {"vertex_ids": self.vertex_ids, **extra}
        digests = {DIGEST_KEY: np.asarray(self.sha256), ARRAYS_DIGEST_KEY: np.asarray(arrays_digest(extra))}
        with atomic_path(path) as tmp:
            with open(tmp, "wb") as fh:
                np.savez(fh, offsets=self.offsets, targets=self.targets, in_offsets=self.in_offsets,
                         sources=self.sources, **digests, **extra)

    @classmethod
    def load(cls, path: str | Path) -> "Graph":
        """Read a graph written by :meth:`save`, checked (:func:`read_graph_npz`), with its
        ``vertex_ids`` when stored."""
        return read_graph_npz(path)[0]


def check_graph(graph: Graph, what: str = "graph") -> Graph:
    """``graph`` after :func:`dynpr.graph.csr_checks.check_csr`, with canonical dtypes (int64 offsets, int32 ids).

    Raises
    ------
    GraphError
        Naming the first check that fails.
    """
    return Graph(*check_csr(what, graph.offsets, graph.targets, graph.in_offsets, graph.sources))


def read_graph_npz(path: str | Path) -> tuple[Graph, dict[str, np.ndarray]]:
    """Read a graph written by :meth:`Graph.save`, checked (:func:`dynpr.graph.csr_checks.read_graph_arrays`)
    and verified against its stored sha256.

    Returns
    -------
    graph : Graph
    extra : dict of str to ndarray
        The file's other arrays (``temporal_*``, ``param_*``); ``vertex_ids``, when
        stored, are the graph's.

    Raises
    ------
    GraphError
        If arrays are missing or inconsistent, the file has no checksum, or the
        graph's sha256 differs from the stored one (the file was edited).
    """
    csr, ids, stored, extra = read_graph_arrays(path)
    graph = Graph(*csr, ids)
    if stored != graph.sha256:  # cached: batch-file checks of this graph reuse it
        raise GraphError(f"{path}: graph sha256 {graph.sha256[:16]}... differs from the stored {stored[:16]}...; "
                         "the file was modified: delete it and prepare it again")
    return graph, extra


def csr_offsets(rows: np.ndarray, num_vertices: int) -> np.ndarray:
    """int64 CSR offsets of entries whose (sorted) rows are ``rows``."""
    offsets = np.zeros(num_vertices + 1, dtype=OFFSET_DTYPE)
    np.cumsum(np.bincount(rows, minlength=num_vertices), out=offsets[1:])
    return offsets
