"""Ranks with the graph's original vertex ids: a Series for Python, a table file for the CLI.

The engines return ranks by dense vertex index (SNAP ids renumbered in ascending
order); :func:`by_id` puts the original ids back, as NetworkX (``{id: rank}``)
and cuGraph (a DataFrame with the original ids) do. :func:`write_table` writes
the CLI's ``--ranks-out`` table: CSV, or Parquet when the name ends in ``.parquet``.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pandas as pd

from dynpr.graph.atomic_files import atomic_path
from dynpr.errors import InputError

#: file name endings :func:`write_table` accepts
TABLE_SUFFIXES = (".csv", ".csv.gz", ".parquet")


def by_id(ranks: np.ndarray, vertex_ids: np.ndarray) -> pd.Series:
    """Ranks indexed by original vertex id.

    Parameters
    ----------
    ranks : numpy.ndarray
        One float64 rank per vertex, by dense index (``PageRankResult.ranks``).
    vertex_ids : numpy.ndarray
        Original id of each vertex (:func:`dynpr.io.prepare.read_graph_with_ids`).

    Returns
    -------
    pandas.Series
        Named ``rank``, index named ``vertex``; ``.to_dict()`` gives NetworkX's ``{id: rank}``.

    Raises
    ------
    ValueError
        If the lengths differ.
    """
    ranks = np.asarray(ranks, dtype=np.float64)
    if len(ranks) != len(vertex_ids):
        raise ValueError(f"{len(ranks)} ranks for {len(vertex_ids)} vertex ids")
    return pd.Series(ranks, index=pd.Index(vertex_ids, name="vertex"), name="rank")


def table(ranks: np.ndarray, vertex_ids: np.ndarray, *, approach: str, batch_index: int | None = None,
          top: int | None = None) -> pd.DataFrame:
    """One run's ranks as table rows, highest rank first (ties by vertex id).

    Parameters
    ----------
    ranks, vertex_ids : numpy.ndarray
        See :func:`by_id`.
    approach : str
        Approach code written in column ``approach``.
    batch_index : int, optional
        Written in column ``batch_index`` when given (``--batch`` runs).
    top : int, optional
        Keep only the ``top`` highest ranks.

    Returns
    -------
    pandas.DataFrame
        Columns ``vertex, rank, approach`` (and ``batch_index``).
    """
    ranks = np.asarray(ranks, dtype=np.float64)
    order = np.lexsort((vertex_ids, -ranks))  # last key first: rank descending, then id
    if top is not None:
        order = order[:top]
    frame = pd.DataFrame({"vertex": np.asarray(vertex_ids)[order], "rank": ranks[order], "approach": approach})
    if batch_index is not None:
        frame["batch_index"] = batch_index
    return frame


def check_table_path(path: str | Path) -> None:
    """Refuse, before any work, a table name :func:`write_table` cannot write.

    Raises
    ------
    InputError
        If the path is a folder, ends in none of :data:`TABLE_SUFFIXES`, or is Parquet without pyarrow installed.
    """
    name = str(path)
    if Path(path).is_dir():
        raise InputError(f"--ranks-out {name}: is a folder; give a file name")
    if not name.endswith(TABLE_SUFFIXES):
        raise InputError(f"{name}: ranks table must end in {', '.join(TABLE_SUFFIXES)}")
    if name.endswith(".parquet") and importlib.util.find_spec("pyarrow") is None:
        raise InputError(f"{name}: writing Parquet needs pyarrow (pip install pyarrow); or name a .csv file")


def write_table(frames: list[pd.DataFrame], path: str | Path) -> None:
    """Write table rows (from :func:`table`) to ``path`` atomically: CSV, or Parquet by extension.

    Ranks are written with 17 significant digits, so they read back exactly.
    """
    check_table_path(path)
    frame = pd.concat(frames, ignore_index=True)
    with atomic_path(path) as tmp:
        if str(path).endswith(".parquet"):
            frame.to_parquet(tmp, index=False)
        else:
            frame.to_csv(tmp, index=False, float_format="%.17g",
                         compression="gzip" if str(path).endswith(".gz") else None)
