"""Batch files: a sequence of batches as concatenated int32 arrays with int64 pointers, plus
``param_*`` scalars recording what made them and the graph they were made for
(:func:`dynpr.graph.validate.graph_record`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from dynpr.graph.atomic_files import atomic_path
from dynpr.batches.batch import FIELDS, Batch
from dynpr.errors import BatchError
from dynpr.graph.graph import Graph
from dynpr.graph.validate import as_vertex_ids, graph_record, read_npz

_POINTERS = ("del_ptr", "ins_ptr")


def _param_array(path, name: str, value) -> np.ndarray:
    if not isinstance(value, (str, bool, int, float, np.integer, np.floating, np.bool_)):
        raise TypeError(f"{path}: parameter {name}={value!r} is not a str, bool, int or float scalar")
    return np.asarray(value)


def write_batches(path: str | Path, batches: list[Batch], *, made_for: Graph, **params) -> None:
    """Write a sequence of batches and the parameters that made them to ``.npz``, atomically.

    Parameters
    ----------
    path : str or Path
        Output file.
    batches : list of Batch
        At least one batch.
    made_for : Graph
        The graph the first batch applies to; its counts and sha256 are stored
        (``param_graph_vertices``, ``param_graph_edges``, ``param_graph_sha256``)
        so that the file is refused on another graph
        (:func:`dynpr.graph.validate.check_made_for`).
    **params
        Scalars (str, bool, int, float) stored as ``param_<name>``.

    Notes
    -----
    The file holds int32 arrays ``del_src, del_dst, ins_src, ins_dst`` (all
    batches concatenated) and int64 ``del_ptr, ins_ptr`` (k+1 each): batch
    ``i``'s deletions are ``del_*[del_ptr[i]:del_ptr[i+1]]``. The same batches
    and parameters give a byte-identical file.
    """
    if len(batches) == 0:
        raise BatchError(f"{path}: a batch file holds at least one batch")
    arrays = {name: np.concatenate([getattr(b, name) for b in batches]) for name in FIELDS}
    for name, count in (("del_ptr", "deletions"), ("ins_ptr", "insertions")):
        ptr = np.zeros(len(batches) + 1, dtype=np.int64)
        np.cumsum([getattr(b, count) for b in batches], out=ptr[1:])
        arrays[name] = ptr
    params = {**params, **graph_record(made_for)}
    arrays.update({f"param_{k}": _param_array(path, k, v) for k, v in params.items()})
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as fh:
            np.savez(fh, **arrays)


def read_batches(path: str | Path) -> list[Batch]:
    """Read the batches of a file written by :func:`write_batches`.

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    InputError
        If the file is not an ``.npz`` of the format (missing arrays, non-integer
        ids or ids beyond int32, inconsistent pointers); a :class:`BatchError`
        for a file of the right format with bad contents.
    """
    data = read_npz(path, "batch file")
    missing = [n for n in FIELDS + _POINTERS if n not in data]
    if missing:
        raise BatchError(f"{path}: not a batch file (missing {', '.join(missing)})")
    arrays = {n: data[n] for n in FIELDS + _POINTERS}
    not_integer = [n for n in arrays if not np.issubdtype(arrays[n].dtype, np.integer)]
    if not_integer:
        raise BatchError(f"{path}: {', '.join(not_integer)} must hold integers, not {arrays[not_integer[0]].dtype}")
    for name in FIELDS:  # in the stored dtype, before any cast: an id beyond int32 is refused, not wrapped
        try:
            arrays[name] = as_vertex_ids(f"{path}: {name}", arrays[name])
        except ValueError as err:
            raise BatchError(str(err)) from None
    del_ptr, ins_ptr = arrays["del_ptr"], arrays["ins_ptr"]
    for ptr, name, fields in ((del_ptr, "del_ptr", ("del_src", "del_dst")), (ins_ptr, "ins_ptr", ("ins_src", "ins_dst"))):
        if len(ptr) < 2 or ptr[0] != 0 or np.any(np.diff(ptr) < 0):
            raise BatchError(f"{path}: {name} is not a pointer array from 0 (non-decreasing, 2 entries at least)")
        for field in fields:  # every array, not only the first: an extra entry is never dropped
            if len(arrays[field]) != ptr[-1]:
                raise BatchError(f"{path}: {field} holds {len(arrays[field])} entries, its pointers {name} end at "
                                 f"{int(ptr[-1])}")
    if len(del_ptr) != len(ins_ptr):
        raise BatchError(f"{path}: del_ptr and ins_ptr differ in length ({len(del_ptr)} vs {len(ins_ptr)})")
    return [
        Batch(
            arrays["del_src"][del_ptr[i] : del_ptr[i + 1]],
            arrays["del_dst"][del_ptr[i] : del_ptr[i + 1]],
            arrays["ins_src"][ins_ptr[i] : ins_ptr[i + 1]],
            arrays["ins_dst"][ins_ptr[i] : ins_ptr[i + 1]],
        )
        for i in range(len(del_ptr) - 1)
    ]


def read_batch_params(path: str | Path) -> dict:
    """The ``param_*`` scalars of a batch file, names without the prefix, as Python values."""
    return {k[len("param_"):]: v.item() for k, v in read_npz(path, "batch file").items() if k.startswith("param_")}


def batch_file_edges(path: str | Path) -> int:
    """Deletions plus insertions of the largest batch of a batch file, from its pointers alone (the
    edge arrays stay unread: what a run must plan device memory for before reading them)."""
    data = read_npz(path, "batch file")
    if any(name not in data for name in _POINTERS):
        raise BatchError(f"{path}: not a batch file (missing {', '.join(n for n in _POINTERS if n not in data)})")
    del_ptr, ins_ptr = (np.asarray(data[name], dtype=np.int64) for name in _POINTERS)
    if del_ptr.shape != ins_ptr.shape or del_ptr.size < 2:
        raise BatchError(f"{path}: del_ptr and ins_ptr must have one entry per batch plus one")
    return int((np.diff(del_ptr) + np.diff(ins_ptr)).max())
