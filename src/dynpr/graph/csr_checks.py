"""Checks of vertex ids and CSR arrays, and the verified arrays of a graph file.

They sit below :mod:`dynpr.graph.graph`, which builds a :class:`~dynpr.graph.graph.Graph` from what they
return (:func:`dynpr.graph.graph.check_graph`, :func:`dynpr.graph.graph.read_graph_npz`); :mod:`dynpr.graph.validate`
gathers them with the other checks. Every check is vectorized: a few passes over the edge
arrays, no Python loop per edge or vertex.
"""

from __future__ import annotations

import hashlib
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from dynpr.graph.arrays import MAX_VERTICES, OFFSET_DTYPE, VERTEX_DTYPE, array_module
from dynpr.errors import GraphError, InputError
from dynpr.graph.npz_files import read_npz, release_pages

GRAPH_ARRAYS = ("offsets", "targets", "in_offsets", "sources")
#: the npz entry holding :attr:`Graph.sha256 <dynpr.graph.graph.Graph.sha256>` of the stored graph
DIGEST_KEY = "graph_sha256"
#: the npz entry holding :func:`arrays_digest` of every other stored array (``vertex_ids``, ``temporal_*``,
#: ``param_*``): with :data:`DIGEST_KEY` and the transpose check, every array of the file is covered
ARRAYS_DIGEST_KEY = "arrays_sha256"
# odd 64-bit multipliers of the vertex hashes of the edge fingerprint (splitmix64 constants)
_MIX = (np.uint64(0x9E3779B97F4A7C15), np.uint64(0xBF58476D1CE4E5B9))
#: edges per chunk of the graph checks (whole rows; bounds their memory)
_CHUNK = 1 << 22
#: threads checking chunks at once (each holds ~32 bytes per edge of its chunk)
_WORKERS = min(8, os.cpu_count() or 1)


# --------------------------------------------------------------------------- ids


def _integer_array(what: str, values) -> np.ndarray:
    array = array_module(values).asarray(values)  # device ids are checked on the device
    if array.ndim != 1:
        raise InputError(f"{what}: expected a 1-D array of vertex ids, got shape {array.shape}")
    if array.size and not np.issubdtype(array.dtype, np.integer):
        raise InputError(f"{what}: vertex ids must be integers, not {array.dtype}")
    return array


def check_ids(what: str, ids, num_vertices: int) -> None:
    """Check that every id lies in ``0 .. num_vertices - 1``, in the ids' own dtype.

    Parameters
    ----------
    what : str
        Names the ids in the message (e.g. ``"b.npz: batch 3 insertions"``).
    ids : array_like of int
        Any integer dtype; compared as exact Python integers, so an int64 id
        2**32 + 3 or a uint64 id 2**63 + 5 is out of range, never wrapped.
    num_vertices : int

    Raises
    ------
    InputError
        Naming the first offending id and the valid range.
    """
    ids = _integer_array(what, ids)
    if ids.size == 0:
        return
    lo, hi = int(ids.min()), int(ids.max())
    if lo < 0 or hi >= num_vertices:
        raise InputError(f"{what}: vertex id {lo if lo < 0 else hi} is outside 0..{num_vertices - 1}")


def as_vertex_ids(what: str, values) -> np.ndarray:
    """``values`` as a contiguous int32 array (where it is: NumPy or CuPy), refused if any id does
    not fit int32 exactly.

    The range check runs before the cast, on the original dtype.

    Raises
    ------
    InputError
        For non-integer dtypes, more than one dimension, or ids outside ``0..2**31-2``.
    """
    ids = _integer_array(what, values)
    check_ids(what, ids, MAX_VERTICES)
    return array_module(ids).ascontiguousarray(ids, dtype=VERTEX_DTYPE)


# --------------------------------------------------------------------------- graphs


def _vertex_hash(ids: np.ndarray, salt: np.uint64) -> np.ndarray:
    """A salted multiply-xorshift-multiply hash of each id: uint64, wrapping, in place (two
    multiplications: the fingerprint hashes every edge once)."""
    mixed = ids.astype(np.uint64)
    mixed += salt
    mixed *= _MIX[0]
    mixed ^= mixed >> np.uint64(32)
    mixed *= _MIX[1]
    return mixed


#: salts of the two vertex hashes of the edge fingerprint: H_SOURCE(s) * H_TARGET(t) per edge (s, t)
_SOURCE_SALT, _TARGET_SALT = np.uint64(1), np.uint64(2)


def _check_csr(what: str, offsets: np.ndarray, indices: np.ndarray, n: int, *, transposed: bool) -> np.ndarray:
    """Check one CSR side chunk by chunk; return the fingerprint of its edges as (source, target) pairs.

    The fingerprint is the wrapping uint64 sum over edges (s, t) of hash(s) * hash(t), the hash
    salted differently for sources and targets: equal for the same edges in any order, unequal
    for different edge sets except by a 2**-64-scale accident. Per row it is the row vertex's
    hash times the sum of its entries' hashes, so only the entries are hashed edge by edge.

    Chunks of about ``_CHUNK`` edges (whole rows), :data:`_WORKERS` at a time, keep
    the memory at O(|V| + chunk) on graphs of billions of edges.
    """
    if offsets[0] != 0 or offsets[-1] != len(indices) or int(offsets.max()) > len(indices) or int(offsets.min()) < 0:
        raise GraphError(f"{what}: offsets run from {int(offsets[0])} to {int(offsets[-1])} (at most "
                         f"{int(offsets.max())}), expected 0 to {len(indices)} (the number of edges)")
    offsets = offsets.astype(np.int64, copy=False)  # exact now that every value is within 0..|E|
    counts = np.diff(offsets)
    if counts.size and int(counts.min()) < 0:
        raise GraphError(f"{what}: offsets decrease at vertex {int(np.argmax(counts < 0))}")
    row_salt, entry_salt = (_TARGET_SALT, _SOURCE_SALT) if transposed else (_SOURCE_SALT, _TARGET_SALT)
    has_loop = np.zeros(n, dtype=bool)
    total = np.zeros(1, dtype=np.uint64)
    # vertex boundaries of the chunks: the first row reaching each multiple of _CHUNK edges
    bounds = np.unique(np.concatenate([[0], np.searchsorted(offsets, np.arange(0, len(indices), _CHUNK), side="right")
                                       - 1, [n]]).clip(0, n))

    def check_rows(v0: int, v1: int):
        lo, hi = int(offsets[v0]), int(offsets[v1])
        if lo == hi:  # rows without entries (a graph without edges): nothing to check or fingerprint
            return np.zeros(0, dtype=np.int32), np.uint64(0)
        cols = indices[lo:hi]
        try:  # chunk by chunk, like every check here: a mapped graph is never resident whole
            check_ids(what, cols, n)
        except InputError as err:
            raise GraphError(str(err)) from None
        rows = np.repeat(np.arange(v0, v1, dtype=np.int32), counts[v0:v1])  # ids < n fit int32
        # strictly increasing within each row: a step down or a repeat is allowed only where a row starts
        bad = cols[1:] <= cols[:-1]
        starts = offsets[v0 + 1:v1]
        bad[starts[(starts > lo) & (starts < hi)] - lo - 1] = False
        if bool(bad.any()):
            at = int(np.argmax(bad)) + 1
            raise GraphError(f"{what}: vertex {int(rows[at])}'s list is unsorted or repeats {int(cols[at])}")
        sums = np.cumsum(_vertex_hash(cols, entry_salt))  # wrapping, like every sum of the fingerprint
        ends = offsets[v0 + 1:v1 + 1] - lo
        through_row = np.where(ends > 0, sums[np.maximum(ends - 1, 0)], 0)
        row_sums = np.diff(through_row, prepend=np.uint64(0))  # each row's own entries
        with np.errstate(over="ignore"):
            fingerprint = (_vertex_hash(np.arange(v0, v1), row_salt) * row_sums).sum(dtype=np.uint64)
        loops = rows[cols == rows]
        release_pages(cols)  # a mapped graph's checked part leaves the resident set
        return loops, fingerprint

    # NumPy releases the GIL in these array operations, so chunks check in parallel
    with ThreadPoolExecutor(max_workers=_WORKERS) as pool:
        for loops, fingerprint in pool.map(check_rows, bounds[:-1], bounds[1:]):
            has_loop[loops] = True
            with np.errstate(over="ignore"):
                total += fingerprint
    release_pages(offsets)
    if n and not bool(has_loop.all()):
        raise GraphError(f"{what}: vertex {int(np.argmax(~has_loop))} has no self-loop (every vertex must have one)")
    return total


def check_csr(what: str, offsets, targets, in_offsets, sources) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Check a graph's four arrays; return them with canonical dtypes (int64 offsets, int32 ids).

    Checks shapes (1-D, ``|V|+1`` offsets on both sides, ``|E|`` ids on both
    sides), integer dtypes, offsets from 0 to ``|E|`` never decreasing, ids in
    ``0..|V|-1`` (in their stored dtype), every adjacency list sorted without
    repeats, a self-loop on every vertex, and the transpose describing the
    same edges as the CSR (an order-independent fingerprint of each side's
    (source, target) pairs).

    Parameters
    ----------
    what : str
        Names the graph in messages (usually its file).
    offsets, targets, in_offsets, sources : array_like
        The CSR and its transpose, in the order of :data:`GRAPH_ARRAYS`.

    Raises
    ------
    GraphError
        Naming the first check that fails.
    """
    arrays = {}
    for name, values in zip(GRAPH_ARRAYS, (offsets, targets, in_offsets, sources)):
        array = np.asarray(values)
        if array.ndim != 1:
            raise GraphError(f"{what}: {name} must be a 1-D array, got shape {array.shape}")
        if not np.issubdtype(array.dtype, np.integer):
            raise GraphError(f"{what}: {name} must hold integers, not {array.dtype}")
        arrays[name] = array
    if len(arrays["offsets"]) < 2 or len(arrays["offsets"]) != len(arrays["in_offsets"]):
        raise GraphError(f"{what}: offsets ({len(arrays['offsets'])}) and in_offsets ({len(arrays['in_offsets'])}) "
                         "must both have |V|+1 >= 2 entries")
    if len(arrays["targets"]) != len(arrays["sources"]):
        raise GraphError(f"{what}: targets ({len(arrays['targets'])}) and sources ({len(arrays['sources'])}) "
                         "must both have |E| entries")
    n = len(arrays["offsets"]) - 1
    if n > MAX_VERTICES:
        raise GraphError(f"{what}: {n} vertices do not fit int32 vertex ids")
    out_edges = _check_csr(f"{what} (out-edges)", arrays["offsets"], arrays["targets"], n, transposed=False)
    in_edges = _check_csr(f"{what} (in-edges)", arrays["in_offsets"], arrays["sources"], n, transposed=True)
    if not np.array_equal(out_edges, in_edges):
        raise GraphError(f"{what}: the transpose (in_offsets, sources) describes other edges than the CSR "
                         "(offsets, targets)")
    return (arrays["offsets"].astype(OFFSET_DTYPE, copy=False), arrays["targets"].astype(VERTEX_DTYPE, copy=False),
            arrays["in_offsets"].astype(OFFSET_DTYPE, copy=False), arrays["sources"].astype(VERTEX_DTYPE, copy=False))


def arrays_digest(arrays: dict[str, np.ndarray]) -> str:
    """Hex sha256 of named arrays: each name, dtype, shape and bytes, in name order."""
    digest = hashlib.sha256()
    for name in sorted(arrays):
        array = np.asarray(arrays[name])
        digest.update(f"{name}\0{array.dtype.str}\0{array.shape}\0".encode())
        digest.update(np.ascontiguousarray(array).data if array.size else b"")
    return digest.hexdigest()


def _check_vertex_ids(path, ids: np.ndarray, num_vertices: int) -> None:
    """One integer id or string label per vertex, ids non-negative, no two alike (the ranks table
    reports them)."""
    if ids.shape != (num_vertices,) or not (np.issubdtype(ids.dtype, np.integer) or ids.dtype.kind == "U"):
        raise GraphError(f"{path}: vertex_ids must hold one integer id or string label per vertex ({num_vertices}), "
                         f"got {ids.dtype} {ids.shape}; delete it and prepare it again")
    if ids.size and ids.dtype.kind != "U" and int(ids.min()) < 0:
        raise GraphError(f"{path}: vertex_ids holds the negative id {int(ids.min())}; delete it and prepare it again")
    if not bool(np.all(ids[1:] > ids[:-1])):  # prepared ids are increasing; others are sorted to compare
        ordered = np.sort(ids)
        repeats = ordered[1:] == ordered[:-1]
        if bool(repeats.any()):
            raise GraphError(f"{path}: vertex_ids gives id {ordered[1:][repeats][0].item()!r} to more than one vertex; "
                             "delete it and prepare it again")


def read_graph_arrays(path: str | Path) -> tuple[tuple[np.ndarray, ...], np.ndarray | None, str, dict]:
    """The checked arrays of a graph file written by :meth:`dynpr.graph.graph.Graph.save`.

    Returns
    -------
    csr : tuple of ndarray
        ``offsets, targets, in_offsets, sources`` after :func:`check_csr`.
    vertex_ids : ndarray or None
        The stored ids, checked (one per vertex, non-negative, unique).
    stored_sha256 : str
        The graph's sha256 as stored; :func:`dynpr.graph.graph.read_graph_npz` compares it with the graph's.
    extra : dict of str to ndarray
        The file's other arrays (``temporal_*``, ``param_*``), verified against their stored digest.

    Raises
    ------
    GraphError
        If arrays are missing or inconsistent, the file has no checksum, or an array
        differs from its stored digest (the file was edited).
    """
    data = read_npz(path, "graph file (.npz)")
    missing = [name for name in (*GRAPH_ARRAYS, DIGEST_KEY) if name not in data]
    if "del_ptr" in data and "ins_ptr" in data:
        raise GraphError(f"{path}: is a batch file, not a graph; give it with --batch")
    if missing:
        hint = ("written by an older dynpr without a checksum" if missing == [DIGEST_KEY]
                else "not a graph written by dynpr")
        raise GraphError(f"{path}: lacks {', '.join(missing)} ({hint}); delete it and prepare it again")
    csr = check_csr(str(path), *(data.pop(name) for name in GRAPH_ARRAYS))
    stored_arrays = data.pop(ARRAYS_DIGEST_KEY, None)
    others = {name: array for name, array in data.items() if name != DIGEST_KEY}
    if others and stored_arrays is None:
        raise GraphError(f"{path}: lacks {ARRAYS_DIGEST_KEY} for {', '.join(sorted(others))} (written by an older "
                         "dynpr); delete it and prepare it again")
    if stored_arrays is not None and str(stored_arrays) != arrays_digest(others):
        raise GraphError(f"{path}: {', '.join(sorted(others)) or 'its arrays'} differ from the stored "
                         f"{ARRAYS_DIGEST_KEY}; the file was modified: delete it and prepare it again")
    ids = data.pop("vertex_ids", None)
    if ids is not None:
        _check_vertex_ids(path, ids, len(csr[0]) - 1)
        release_pages(ids)
    return csr, ids, str(data.pop(DIGEST_KEY)), data
