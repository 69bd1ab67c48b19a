"""Personalized PageRank's teleport vector, with networkx's semantics.

``PageRankOptions.personalization`` is a mapping ``{vertex: weight}`` (keys are the graph's
original vertex ids, :meth:`dynpr.graph.graph.Graph.original_ids`; vertices left out weigh 0) or an
array of one weight per vertex. The weights are normalised to sum 1 (``p``), and every
approach computes ``r_v = (1 - alpha) * p_v + alpha * sum_u r_u / d_u`` instead of the
uniform ``(1 - alpha) / n``. :func:`check_personalization` checks the weights alone (where the
options are made), :func:`teleport` maps them onto a graph (where a run starts), and
:func:`read_personalization` reads them from a two-column file (``dynpr pagerank --personalize``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType

import numpy as np

from dynpr.errors import InputError
from dynpr.graph.graph import Graph, to_host


def _check_weights(weights: np.ndarray, where) -> None:
    """One clear error for the first weight that is not finite or negative, or for all zero;
    ``where(i)`` names entry i (a vertex, a file line)."""
    bad = np.flatnonzero(~np.isfinite(weights))
    if bad.size:
        raise InputError(f"personalization: {where(int(bad[0]))} has weight {weights[bad[0]]}; weights must be finite")
    bad = np.flatnonzero(weights < 0)
    if bad.size:
        raise InputError(f"personalization: {where(int(bad[0]))} has the negative weight {weights[bad[0]]:g}; "
                         f"weights must be non-negative")
    if not np.any(weights > 0):
        raise InputError("personalization: every weight is zero; give at least one vertex a positive weight")


def check_personalization(value):
    """The personalization of :class:`~dynpr.pagerank.options.PageRankOptions`, checked and copied.

    Parameters
    ----------
    value : None, Mapping or array-like
        ``{original vertex id: weight}``, or one weight per vertex (NumPy or CuPy, one dimension).

    Returns
    -------
    None, types.MappingProxyType or numpy.ndarray
        A read-only copy (int keys and float weights; a float64 array on the host), so a caller
        changing its own object later changes no options.

    Raises
    ------
    InputError
        For a key that is not a non-negative integer, a weight that is not a finite non-negative
        number, weights that are all zero, or an array that is not one-dimensional.
    """
    if value is None:
        return None
    if isinstance(value, Mapping):
        keys = list(value)
        bad = [k for k in keys if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 0]
        if bad:
            raise InputError(f"personalization: key {bad[0]!r} is not a vertex id (a non-negative integer)")
        try:
            weights = np.array([value[k] for k in keys], dtype=np.float64)
        except (TypeError, ValueError):
            raise InputError("personalization: every weight must be a number") from None
        if not keys:
            raise InputError("personalization: the mapping is empty; give at least one vertex a positive weight")
        _check_weights(weights, lambda i: f"vertex {keys[i]}")
        return MappingProxyType(dict(zip((int(k) for k in keys), weights.tolist())))
    if isinstance(value, np.ndarray) and value.dtype == np.float64 and value.base is None \
            and not value.flags.writeable:
        weights = value  # a copy made here before (options replaced), checked again below
    else:
        weights = None
    try:
        weights = np.array(to_host(value), dtype=np.float64) if weights is None else weights  # a host copy
    except (TypeError, ValueError):
        raise InputError(f"personalization: expected a mapping or an array of numbers, "
                         f"not {type(value).__name__}") from None
    if weights.ndim != 1 or weights.size == 0:
        raise InputError(f"personalization: an array must hold one weight per vertex, got shape {weights.shape}")
    _check_weights(weights, lambda i: f"vertex {i}")
    weights.flags.writeable = False
    return weights


def dense_weights(personalization, graph: Graph) -> np.ndarray:
    """One weight per vertex of ``graph`` (not normalised) from a checked personalization.

    Raises
    ------
    InputError
        For a mapping key that is not an original vertex id of ``graph``, or an array whose
        length is not the graph's vertex count.
    """
    n = graph.num_vertices
    if not isinstance(personalization, Mapping):
        if len(personalization) != n:
            raise InputError(f"personalization: {len(personalization)} weights for a graph of {n} vertices")
        return personalization
    ids = np.fromiter(personalization.keys(), dtype=np.int64, count=len(personalization))
    positions = vertex_positions(ids, graph.vertex_ids, n)
    missing = np.flatnonzero(positions < 0)
    if missing.size:
        raise InputError(f"personalization: vertex {ids[missing[0]]} is not in the graph "
                         f"({missing.size} of {ids.size} ids are not)")
    weights = np.zeros(n)
    weights[positions] = np.fromiter(personalization.values(), dtype=np.float64, count=ids.size)
    return weights


def vertex_positions(ids: np.ndarray, vertex_ids: np.ndarray | None, n: int) -> np.ndarray:
    """The dense vertex of each original id in ``ids`` (-1 where the graph has none): through
    ``vertex_ids`` (the original id of each vertex), or the ids themselves where it is None."""
    if vertex_ids is None:
        return np.where((ids >= 0) & (ids < n), ids, -1)
    order = np.argsort(vertex_ids, kind="stable")
    found = np.minimum(np.searchsorted(vertex_ids, ids, sorter=order), n - 1)
    return np.where(vertex_ids[order[found]] == ids, order[found], -1)


def teleport(personalization, graph: Graph) -> np.ndarray | None:
    """The normalised teleport vector ``p`` (float64 on the host, summing to 1), or None for the
    uniform ``1/n`` of unpersonalized PageRank.

    Parameters
    ----------
    personalization : None, Mapping or numpy.ndarray
        ``PageRankOptions.personalization`` (checked by :func:`check_personalization`).
    graph : Graph
        The graph the run ranks (its :attr:`~dynpr.graph.graph.Graph.vertex_ids` map a mapping's keys).

    Returns
    -------
    numpy.ndarray or None
        ``w / sum(w)`` of the dense weights.
    """
    if personalization is None:
        return None
    weights = dense_weights(personalization, graph)
    return weights / weights.sum()


def read_personalization(path: str | Path, vertex_ids: np.ndarray | None, n: int) -> np.ndarray:
    """Weights from a two-column text file: an original vertex id and its weight per line
    (whitespace- or comma-separated; ``#`` starts a comment), one weight per vertex back.

    Parameters
    ----------
    path : str or Path
        The file.
    vertex_ids : numpy.ndarray or None
        The original id of each vertex of the graph (None: the ids are the vertices themselves).
    n : int
        The graph's vertex count.

    Returns
    -------
    numpy.ndarray
        float64 weights, 0 for the vertices the file leaves out (not normalised).

    Raises
    ------
    InputError
        Naming the file and line: a line without exactly two fields, an id that is not a
        non-negative integer or not in the graph, an id given twice, a weight that is not a
        finite non-negative number; or a file with no positive weight.
    """
    import pandas as pd

    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: no such personalization file")
    try:
        # pandas' C parser for whitespace (the usual case), its Python one for commas
        separator = r"\s+" if _whitespace_only(path) else r"\s*,\s*|\s+"
        frame = pd.read_csv(path, sep=separator, engine="c" if separator == r"\s+" else "python", comment="#",
                            header=None, names=["id", "weight", "extra"], dtype=str, skip_blank_lines=True)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError):
        frame = None
    ids = weights = None
    if frame is not None and len(frame) and frame["extra"].isna().all() and frame["weight"].notna().all() \
            and frame["id"].str.fullmatch(r"\d{1,18}").all():
        ids = frame["id"].to_numpy().astype(np.int64)
        weights = pd.to_numeric(frame["weight"], errors="coerce").to_numpy(dtype=np.float64)
    if ids is None or np.isnan(weights).any():
        line, reason = _first_bad_line(path)
        raise InputError(f"{path}:{line}: {reason}")
    positions = vertex_positions(ids, vertex_ids, n)
    _check_weights(weights, lambda i: f"{path}:{_line_of_entry(path, i)}: vertex {ids[i]}")
    if (positions < 0).any():
        i = int(np.flatnonzero(positions < 0)[0])
        raise InputError(f"{path}:{_line_of_entry(path, i)}: vertex {ids[i]} is not in the graph")
    unique, first, counts = np.unique(positions, return_index=True, return_counts=True)
    if (counts > 1).any():
        again = np.flatnonzero(positions == unique[counts > 1][0])[1]
        raise InputError(f"{path}:{_line_of_entry(path, int(again))}: vertex {ids[again]} is given a second time")
    dense = np.zeros(n)
    dense[positions] = weights
    return dense


def _whitespace_only(path: Path) -> bool:
    """Whether the file's fields are separated by whitespace only (pandas' fast parser), not commas."""
    return b"," not in path.read_bytes()


def _data_lines(path: Path):
    """(line number, fields) of each line holding data (comments and blank lines skipped); read only
    to name the line of an error."""
    with open(path, encoding="utf-8", errors="replace") as fh:
        for number, line in enumerate(fh, 1):
            fields = line.split("#", 1)[0].replace(",", " ").split()
            if fields:
                yield number, fields


def _first_bad_line(path: Path) -> tuple[int | str, str]:
    """(line, reason) of the first line the fast parse refused."""
    count = 0
    for number, fields in _data_lines(path):
        count += 1
        if len(fields) != 2:
            return number, f"expected two fields (vertex id, weight), got {' '.join(fields)!r}"
        if not fields[0].isdigit() or len(fields[0]) > 18:
            return number, f"vertex id {fields[0]!r} is not a non-negative integer"
        try:
            weight = float(fields[1])
        except ValueError:
            return number, f"weight {fields[1]!r} is not a number"
        if not math.isfinite(weight):
            return number, f"vertex {fields[0]} has weight {fields[1]}; weights must be finite"
    if count == 0:
        return 1, "no vertex weights in the file (two columns: vertex id, weight)"
    return "?", "could not be parsed"


def _line_of_entry(path: Path, index: int) -> int:
    """The line number of the file's data line ``index`` (0-based)."""
    for i, (number, _) in enumerate(_data_lines(path)):
        if i == index:
            return number
    raise AssertionError(f"{path} has no data line {index}")
