"""The one validation layer: every graph, batch and rank vector is checked here before use.

Graphs read from a file (a prepared ``.npz``, a temporal base) pass
:func:`check_graph` (shapes, integer dtypes, monotone offsets, ids in range,
rows sorted without duplicates, a self-loop on every vertex, and a CSR that
describes the same edges as its transpose) and carry a sha256 of their CSR
(:attr:`Graph.sha256 <dynpr.graph.Graph.sha256>`) and one of every other array
(:func:`arrays_digest`) that :func:`read_graph_npz` verifies. Every ``.npz`` is
measured from its ``.npy`` headers before any array is read (:func:`check_npz_header`). Batch ids are
range-checked in the dtype they arrived in, before any cast to int32
(:func:`as_vertex_ids`), and a batch file records the graph it was made for
(:func:`graph_record`, :func:`check_made_for`). :func:`check_update_inputs`
is what :mod:`dynpr.pagerank` runs before handing anything to an engine.

Every check is vectorized: a few passes over the edge arrays, no Python loop
per edge or vertex.
"""

from __future__ import annotations

import hashlib
import math
import os
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from dynpr.errors import BatchError, GraphError, InputError
from dynpr.graph import MAX_VERTICES, OFFSET_DTYPE, VERTEX_DTYPE, Graph, array_module
from dynpr.hostmem import check_host_fits
from dynpr.npz_files import load_members

if TYPE_CHECKING:
    from dynpr.batches import Batch

GRAPH_ARRAYS = ("offsets", "targets", "in_offsets", "sources")
#: the npz entry holding :attr:`Graph.sha256 <dynpr.graph.Graph.sha256>` of the stored graph
DIGEST_KEY = "graph_sha256"
#: the npz entry holding :func:`arrays_digest` of every other stored array (``vertex_ids``, ``temporal_*``,
#: ``param_*``): with :data:`DIGEST_KEY` and the transpose check, every array of the file is covered
ARRAYS_DIGEST_KEY = "arrays_sha256"
#: batch-file parameters recording the graph a batch file was made for
MADE_FOR = ("graph_vertices", "graph_edges", "graph_sha256")
# odd 64-bit multipliers of the order-independent edge fingerprint (splitmix64 constants)
_MIX = (np.uint64(0x9E3779B97F4A7C15), np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB))
#: edges per chunk of the graph checks (whole rows; bounds their memory)
_CHUNK = 1 << 22
#: threads checking chunks at once (each holds ~50 bytes per edge of its chunk)
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


def _fingerprint(src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """Order-independent fingerprint of the edges ``(src[i], dst[i])``: two wrapping uint64 sums.

    Each edge key is mixed two ways (splitmix64 steps) and summed: equal for the
    same edges in any order, unequal for different edge sets except by a
    2**-64-scale accident. Summing per chunk gives the sum over all edges.
    """
    key = src.astype(np.uint64) * _MIX[0] + dst.astype(np.uint64)
    mixed = (key ^ (key >> np.uint64(31))) * _MIX[1]
    mixed ^= mixed >> np.uint64(29)
    mixed *= _MIX[2]
    return np.array([key.sum(dtype=np.uint64), mixed.sum(dtype=np.uint64)], dtype=np.uint64)


def _check_csr(what: str, offsets: np.ndarray, indices: np.ndarray, n: int, *, transposed: bool) -> np.ndarray:
    """Check one CSR side chunk by chunk; return the fingerprint of its edges as (source, target) pairs.

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
    try:
        check_ids(what, indices, n)
    except InputError as err:
        raise GraphError(str(err)) from None
    has_loop = np.zeros(n, dtype=bool)
    total = np.zeros(2, dtype=np.uint64)
    # vertex boundaries of the chunks: the first row reaching each multiple of _CHUNK edges
    bounds = np.unique(np.concatenate([[0], np.searchsorted(offsets, np.arange(0, len(indices), _CHUNK), side="right")
                                       - 1, [n]]).clip(0, n))

    def check_rows(v0: int, v1: int):
        lo, hi = int(offsets[v0]), int(offsets[v1])
        rows = np.repeat(np.arange(v0, v1, dtype=np.int64), counts[v0:v1])
        cols = indices[lo:hi].astype(np.int64)
        keys = rows * n + cols
        if keys.size > 1 and not bool(np.all(keys[1:] > keys[:-1])):
            at = int(np.argmax(keys[1:] <= keys[:-1])) + 1
            raise GraphError(f"{what}: vertex {int(rows[at])}'s list is unsorted or repeats {int(cols[at])}")
        with np.errstate(over="ignore"):
            fingerprint = _fingerprint(cols, rows) if transposed else _fingerprint(rows, cols)
        ends = (int(keys[0]), int(keys[-1])) if keys.size else None
        return ends, rows[rows == cols], fingerprint

    # NumPy releases the GIL in these array operations, so chunks check in parallel
    with ThreadPoolExecutor(max_workers=_WORKERS) as pool:
        previous = -1  # key of the last edge of the previous chunk
        for ends, loops, fingerprint in pool.map(check_rows, bounds[:-1], bounds[1:]):
            if ends is not None:
                if ends[0] <= previous:
                    raise GraphError(f"{what}: vertex {ends[0] // n}'s list is unsorted or repeats {ends[0] % n}")
                previous = ends[1]
            has_loop[loops] = True
            with np.errstate(over="ignore"):
                total += fingerprint
    if n and not bool(has_loop.all()):
        raise GraphError(f"{what}: vertex {int(np.argmax(~has_loop))} has no self-loop (every vertex must have one)")
    return total


def check_graph(graph: Graph, what: str = "graph") -> Graph:
    """Check a graph's arrays; return it with canonical dtypes (int64 offsets, int32 ids).

    Checks shapes (1-D, ``|V|+1`` offsets on both sides, ``|E|`` ids on both
    sides), integer dtypes, offsets from 0 to ``|E|`` never decreasing, ids in
    ``0..|V|-1`` (in their stored dtype), every adjacency list sorted without
    repeats, a self-loop on every vertex, and the transpose describing the
    same edges as the CSR (an order-independent fingerprint of each side's
    (source, target) pairs).

    Parameters
    ----------
    graph : Graph
    what : str
        Names the graph in messages (usually its file).

    Raises
    ------
    GraphError
        Naming the first check that fails.
    """
    arrays = {}
    for name in GRAPH_ARRAYS:
        array = np.asarray(getattr(graph, name))
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
    return Graph(arrays["offsets"].astype(OFFSET_DTYPE, copy=False), arrays["targets"].astype(VERTEX_DTYPE, copy=False),
                 arrays["in_offsets"].astype(OFFSET_DTYPE, copy=False), arrays["sources"].astype(VERTEX_DTYPE, copy=False))


#: names of an .npz that must hold 1-D arrays of one length (graph files, batch files)
_SAME_LENGTH = (("offsets", "in_offsets"), ("targets", "sources"), ("temporal_src", "temporal_dst", "temporal_time"),
                ("del_src", "del_dst"), ("ins_src", "ins_dst"), ("del_ptr", "ins_ptr"))


def npz_headers(path: str | Path, what: str) -> dict[str, tuple[tuple[int, ...], np.dtype]]:
    """The shape and dtype every member of an ``.npz`` declares, read from the ``.npy`` headers only.

    Nothing array-sized is read or allocated: a file of a few MB declaring arrays of
    many GB is measured here, before :func:`read_npz` would inflate it. A member
    whose header disagrees with its stored size is refused.

    Raises
    ------
    InputError
        For a member that is not an ``.npy`` array, an unknown ``.npy`` version, a
        pickled (object) dtype, or a stored size other than the header's.
    """
    headers = {}
    with zipfile.ZipFile(path) as archive:
        for info in archive.infolist():
            name = info.filename[:-4] if info.filename.endswith(".npy") else info.filename
            with archive.open(info) as fh:
                try:
                    version = np.lib.format.read_magic(fh)
                    read_header = {(1, 0): np.lib.format.read_array_header_1_0,
                                   (2, 0): np.lib.format.read_array_header_2_0}.get(version)
                    if read_header is None:
                        raise ValueError(f"unsupported .npy version {version}")
                    shape, _, dtype = read_header(fh)
                except ValueError as err:
                    raise InputError(f"{path}: not a {what}: member {name!r} is not a NumPy array ({err})") from None
                if dtype.hasobject:
                    raise InputError(f"{path}: not a {what}: it holds Python objects (pickled data), which dynpr "
                                     "never loads")
                declared = math.prod(shape) * dtype.itemsize
                stored = info.file_size - fh.tell()
            if declared != stored:
                raise InputError(f"{path}: not a {what}: member {name!r} declares {dtype} {shape} ({declared:,} "
                                 f"bytes) but holds {stored:,} bytes; the file is corrupt")
            headers[name] = (tuple(shape), dtype)
    return headers


def check_npz_header(path: str | Path, what: str) -> dict[str, tuple[tuple[int, ...], np.dtype]]:
    """Bound what reading an ``.npz`` may allocate, before any array is read.

    Checks that the arrays whose lengths go together (``offsets``/``in_offsets``,
    ``targets``/``sources``, ``vertex_ids`` = one per vertex, the ``temporal_*``
    arrays, a batch file's ids and pointers) are 1-D and agree, and that all the
    declared arrays fit the host's available memory.

    Returns
    -------
    dict of str to (shape, dtype)
        :func:`npz_headers`.

    Raises
    ------
    InputError
        For lengths that disagree or arrays that are not 1-D (see also :func:`npz_headers`).
    MemoryError
        ``<path>: reading its arrays needs X GiB of host memory, Y GiB available``.
    """
    headers = npz_headers(path, what)
    for group in _SAME_LENGTH:
        present = [name for name in group if name in headers]
        shapes = [headers[name][0] for name in present]
        if any(len(shape) != 1 for shape in shapes) or len({shape for shape in shapes}) > 1:
            listed = ", ".join(f"{name} {headers[name][0]}" for name in present)
            raise InputError(f"{path}: not a {what}: {listed} must be 1-D arrays of one length")
    if "vertex_ids" in headers and "offsets" in headers \
            and headers["vertex_ids"][0] != (max(headers["offsets"][0][0] - 1, 0),):
        raise InputError(f"{path}: not a {what}: vertex_ids {headers['vertex_ids'][0]} must hold one id per vertex "
                         f"(offsets {headers['offsets'][0]})")
    check_host_fits(sum(math.prod(shape) * dtype.itemsize for shape, dtype in headers.values()),
                    f"{path}: reading its arrays")
    return headers


def read_npz(path: str | Path, what: str) -> dict[str, np.ndarray]:
    """Every array of an ``.npz`` file (large ones memory-mapped read-only,
    :func:`dynpr.npz_files.load_members`), with one-line errors naming the file.

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    InputError
        If it is a folder, not an ``.npz``, truncated, or holds pickled objects.
    """
    try:
        with open(path, "rb") as fh:
            magic = fh.read(4)
        if magic[:2] != b"PK":  # np.load would try to unpickle it, and say so
            raise InputError(f"{path}: not a {what}: not an .npz (zip) file, it starts with {magic!r}")
        check_npz_header(path, what)  # before any array is read: nothing beyond what the file declares
        return load_members(path)  # large members memory-mapped: no copy of a graph before its checks
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: no such {what}") from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a folder, not a {what}") from None
    except ValueError as err:
        if isinstance(err, InputError):
            raise
        if "pickled" in str(err):
            raise InputError(f"{path}: not a {what}: it holds Python objects (pickled data), which dynpr "
                             "never loads") from None
        raise InputError(f"{path}: not a {what} ({err})") from None
    except (OSError, EOFError, AttributeError, zipfile.BadZipFile) as err:  # truncated or corrupt zip
        raise InputError(f"{path}: not a {what}: truncated or corrupt ({type(err).__name__}: {err})") from None


def arrays_digest(arrays: dict[str, np.ndarray]) -> str:
    """Hex sha256 of named arrays: each name, dtype, shape and bytes, in name order."""
    digest = hashlib.sha256()
    for name in sorted(arrays):
        array = np.asarray(arrays[name])
        digest.update(f"{name}\0{array.dtype.str}\0{array.shape}\0".encode())
        digest.update(np.ascontiguousarray(array).data if array.size else b"")
    return digest.hexdigest()


def _check_vertex_ids(path, ids: np.ndarray, num_vertices: int) -> None:
    """One integer id per vertex, non-negative and no two alike (the ranks table reports them)."""
    if ids.shape != (num_vertices,) or not np.issubdtype(ids.dtype, np.integer):
        raise GraphError(f"{path}: vertex_ids must hold one integer id per vertex ({num_vertices}), "
                         f"got {ids.dtype} {ids.shape}; delete it and prepare it again")
    if ids.size and int(ids.min()) < 0:
        raise GraphError(f"{path}: vertex_ids holds the negative id {int(ids.min())}; delete it and prepare it again")
    if not bool(np.all(ids[1:] > ids[:-1])):  # prepared ids are increasing; others are sorted to compare
        ordered = np.sort(ids)
        repeats = ordered[1:] == ordered[:-1]
        if bool(repeats.any()):
            raise GraphError(f"{path}: vertex_ids gives id {int(ordered[1:][repeats][0])} to more than one vertex; "
                             "delete it and prepare it again")


def read_graph_npz(path: str | Path) -> tuple[Graph, dict[str, np.ndarray]]:
    """Read a graph written by :meth:`Graph.save`, checked and verified against its stored sha256.

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
    data = read_npz(path, "graph file (.npz)")
    missing = [name for name in (*GRAPH_ARRAYS, DIGEST_KEY) if name not in data]
    if "del_ptr" in data and "ins_ptr" in data:
        raise GraphError(f"{path}: is a batch file, not a graph; give it with --batch")
    if missing:
        hint = ("written by an older dynpr without a checksum" if missing == [DIGEST_KEY]
                else "not a graph written by dynpr")
        raise GraphError(f"{path}: lacks {', '.join(missing)} ({hint}); delete it and prepare it again")
    graph = check_graph(Graph(*(data.pop(name) for name in GRAPH_ARRAYS)), str(path))
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
        _check_vertex_ids(path, ids, graph.num_vertices)
        graph = Graph(graph.offsets, graph.targets, graph.in_offsets, graph.sources, ids)
    stored = str(data.pop(DIGEST_KEY))
    if stored != graph.sha256:  # cached: batch-file checks of this graph reuse it
        raise GraphError(f"{path}: graph sha256 {graph.sha256[:16]}... differs from the stored {stored[:16]}...; "
                         "the file was modified: delete it and prepare it again")
    return graph, data


# --------------------------------------------------------------------------- batches and ranks


def graph_record(graph: Graph) -> dict:
    """What a batch file records about the graph it was made for (``param_graph_*``)."""
    return {"graph_vertices": graph.num_vertices, "graph_edges": graph.num_edges,
            "graph_sha256": graph.sha256}


def check_made_for(path: str | Path, params: dict, graph: Graph, graph_name: str) -> None:
    """Refuse a batch file made for another graph than ``graph``.

    Raises
    ------
    BatchError
        If the file records no graph, or one with other counts or another sha256.
    """
    if any(key not in params for key in MADE_FOR):
        raise BatchError(f"{path}: records no graph it was made for (written by an older dynpr); "
                         "make it again (dynpr batch, or rerun snakemake)")
    recorded = (params["graph_vertices"], params["graph_edges"], params["graph_sha256"])
    if recorded != (graph.num_vertices, graph.num_edges, graph.sha256):
        raise BatchError(f"{path}: made for a graph of {recorded[0]} vertices and {recorded[1]} edges "
                         f"(sha256 {str(recorded[2])[:16]}...), not {graph_name} ({graph.num_vertices} vertices, "
                         f"{graph.num_edges} edges); make the batches for {graph_name}")


def check_batch(batch: Batch, num_vertices: int, what: str = "batch") -> None:
    """Check that every id of a batch is below ``num_vertices``.

    Raises
    ------
    BatchError
    """
    for name in ("del_src", "del_dst", "ins_src", "ins_dst"):
        try:
            check_ids(f"{what} {name}", getattr(batch, name), num_vertices)
        except InputError as err:
            raise BatchError(str(err)) from None


def check_ranks(ranks, num_vertices: int, name: str) -> np.ndarray:
    """A float64 copy of ``ranks`` (the caller's array is never modified), after :func:`check_rank_values`.

    Raises
    ------
    InputError
    """
    check_rank_values(ranks, num_vertices, name)
    return np.array(ranks, dtype=np.float64)


def check_rank_values(ranks, num_vertices: int, name: str) -> None:
    """Refuse ``ranks`` unless numbers shaped ``(num_vertices,)``, finite and non-negative (no copy).

    Raises
    ------
    InputError
    """
    if ranks is None:
        raise InputError(f"{name} is required for this approach")
    xp = array_module(ranks)  # device ranks are checked on the device
    array = xp.asarray(ranks)
    if not (np.issubdtype(array.dtype, np.floating) or np.issubdtype(array.dtype, np.integer)):
        raise InputError(f"{name} must hold numbers, not {array.dtype}")
    if array.shape != (num_vertices,):
        raise InputError(f"{name} must have shape ({num_vertices},), got {array.shape}")
    if array.size and not (bool(xp.isfinite(array).all()) and float(array.min()) >= 0):
        raise InputError(f"{name} must be finite and non-negative")


def _check_shape(graph, name: str) -> int:
    """O(1) consistency of a Graph handed to the library (full checks run where graphs are read)."""
    if not isinstance(graph, Graph):
        raise InputError(f"{name} must be a dynpr.graph.Graph, not {type(graph).__name__}")
    n = graph.num_vertices
    if n < 1 or len(graph.in_offsets) != n + 1 or len(graph.sources) != len(graph.targets) \
            or int(graph.offsets[-1]) != len(graph.targets) or int(graph.in_offsets[-1]) != len(graph.sources):
        raise InputError(f"{name}: inconsistent array lengths (offsets {len(graph.offsets)}, in_offsets "
                         f"{len(graph.in_offsets)}, targets {len(graph.targets)}, sources {len(graph.sources)})")
    return n


def check_update_inputs(approach: str, old_graph, graph, batch, previous_ranks, *,
                        initial=None, approaches: tuple[str, ...]) -> None:
    """Everything :func:`dynpr.pagerank.update` checks before any engine runs.

    Raises
    ------
    InputError
        For an unknown approach, a missing input, arrays of the wrong shape or
        dtype, ranks that are not finite, or batch ids outside the graph (which
        the GPU kernels would use as indices unchecked).
    """
    if approach not in approaches:
        raise InputError(f"approach must be one of {approaches}, got {approach!r}")
    n = _check_shape(graph, "graph")
    if approach == "static":
        if initial is not None:
            check_rank_values(initial, n, "initial")
        return
    check_rank_values(previous_ranks, n, "previous_ranks")
    if approach == "nd":
        return
    from dynpr.batches import Batch

    if not isinstance(batch, Batch):
        raise InputError(f"approach {approach!r} needs the batch (a dynpr.batches.Batch)")
    check_batch(batch, n)
    if approach == "dt":
        if old_graph is None:
            raise InputError("approach 'dt' needs the old graph")
        if _check_shape(old_graph, "old_graph") != n:
            raise InputError(f"old graph has {old_graph.num_vertices} vertices, new graph {n}")


def finite_number(name: str, value, *, low: float | None = None, high: float | None = None,
                  low_open: bool = False, high_open: bool = False) -> float:
    """``value`` as a float, refused unless finite and inside the given bounds.

    Raises
    ------
    InputError
        Naming ``name`` (a flag or config key) and the allowed range.
    """
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise InputError(f"{name}: expected a number, got {value!r}") from None
    below = low is not None and (number <= low if low_open else number < low)
    above = high is not None and (number >= high if high_open else number > high)
    if not math.isfinite(number) or below or above:
        lo = "-inf" if low is None else f"{low:g}"
        hi = "inf" if high is None else f"{high:g}"
        interval = f"{'(' if low_open or low is None else '['}{lo}, {hi}{')' if high_open or high is None else ']'}"
        raise InputError(f"{name}: must be a finite number in {interval}, got {value!r}")
    return number


# --------------------------------------------------------------------------- config


def yaml_error_line(err) -> str:
    """A YAML parse error (PyYAML prints several lines) in one line: ``line L, column C: problem``."""
    mark = getattr(err, "problem_mark", None) or getattr(err, "context_mark", None)
    problem = getattr(err, "problem", None) or (str(err).splitlines() or [type(err).__name__])[0]
    return f"line {mark.line + 1}, column {mark.column + 1}: {problem}" if mark is not None else problem


def load_yaml(path: str | Path, what: str):
    """A YAML file's content, or one :class:`InputError` line naming the file, line and problem.

    Parameters
    ----------
    path : str or Path
    what : str
        What the file is, for the message (``"config"``).
    """
    import yaml

    try:
        with open(path) as fh:
            return yaml.safe_load(fh)
    except yaml.YAMLError as err:
        raise InputError(f"{path}: {what} is not valid YAML: {yaml_error_line(err)}") from None


def check_schema(data, schema: dict, source: str) -> None:
    """Validate ``data`` against a JSON Schema; on failure one line naming the key and only what is wrong
    (an unknown key by its name, not the whole schema).

    Raises
    ------
    InputError
        ``<source>: <key path>: <message>``.
    """
    import jsonschema

    validator = jsonschema.validators.validator_for(schema)(schema)
    error = jsonschema.exceptions.best_match(validator.iter_errors(data))
    if error is not None:
        where = ".".join(str(p) for p in error.absolute_path) or "top level"
        message = error.message if len(error.message) <= 200 else error.message[:200] + "..."
        raise InputError(f"{source}: {where}: {message}")


def check_config_values(config, schema: dict, source: str = "config") -> None:
    """What JSON Schema lets through in a config: NaN and infinities, and floats where integers belong.

    JSON Schema compares NaN with no bound (so ``batch_fractions: [.nan]``
    passes ``exclusiveMinimum: 0``) and counts ``2.0`` as an integer; both
    would fail far from the config later. Run after schema validation.

    Parameters
    ----------
    config : mapping
        The loaded config.
    schema : dict
        The config's JSON Schema (``$ref``s into ``$defs`` are followed).
    source : str
        Names the config in messages.

    Raises
    ------
    InputError
        Naming the key path, e.g. ``config: temporal.batch_fractions[0]: must be a finite number, got nan``.
    """
    defs = schema.get("$defs", {})

    def walk(value, node: dict, where: str) -> None:
        if "$ref" in node:
            node = {**defs[node["$ref"].rsplit("/", 1)[-1]], **{k: v for k, v in node.items() if k != "$ref"}}
        if isinstance(value, float) and not math.isfinite(value):
            raise InputError(f"{source}: {where}: must be a finite number, got {value}")
        types = node.get("type")
        types = [types] if isinstance(types, str) else (types or [])
        if "integer" in types and "number" not in types and isinstance(value, float):
            raise InputError(f"{source}: {where}: must be an integer, got {value}")
        if isinstance(value, dict):
            properties = node.get("properties", {})
            extra = node.get("additionalProperties")
            for key, item in value.items():
                child = properties.get(key, extra if isinstance(extra, dict) else {})
                walk(item, child, f"{where}.{key}" if where else str(key))
        elif isinstance(value, list):
            for i, item in enumerate(value):
                walk(item, node.get("items", {}) if isinstance(node.get("items"), dict) else {}, f"{where}[{i}]")

    walk(config, schema, "")
