"""Result rows of the experiments: the CSV schema, row building, writing and aggregation.

Every run of an approach on one updated graph becomes one row of
``results/runs/{dataset}.csv`` (columns :data:`COLUMNS`); ``results/summary.csv``
concatenates them and is the only input of the figures.

Kahn rows (``experiment == approach == "kahn"``) reuse the PageRank columns:
``iterations`` holds the number of levels, ``affected`` the number of
processed vertices (``affected == vertices`` means the graph is a DAG) and
``l1_error`` is NaN.
"""

from __future__ import annotations

import datetime
import functools
import importlib.util
import os
import platform
import subprocess
from pathlib import Path
from typing import Iterable, Mapping

import numpy as np
import pandas as pd

from dynpr.fileio import atomic_path

#: Column order of every runs file and of the summary (DESIGN.md contract).
COLUMNS = (
    "dataset", "experiment", "approach", "backend", "device",
    "batch_fraction", "batch_index", "repeat", "deletions", "insertions",
    "vertices", "edges", "iterations", "time_ms", "l1_error",
    "partition_ms", "mark_ms", "compute_ms", "affected", "variant",
    "git_commit", "timestamp",
    "python", "numpy", "scipy", "cupy", "cuda_runtime", "cuda_driver",
)  # fmt: skip

#: software versions recorded in every row (:func:`versions`); files written before they existed read as ""
VERSION_COLUMNS = COLUMNS[-6:]

#: pandas dtype of each column (strings are ``object`` so empty variants read back as "").
DTYPES = {
    "dataset": "object", "experiment": "object", "approach": "object",
    "backend": "object", "device": "object", "batch_fraction": "float64",
    "batch_index": "int64", "repeat": "int64", "deletions": "int64",
    "insertions": "int64", "vertices": "int64", "edges": "int64",
    "iterations": "int64", "time_ms": "float64", "l1_error": "float64",
    "partition_ms": "float64", "mark_ms": "float64", "compute_ms": "float64",
    "affected": "int64", "variant": "object", "git_commit": "object",
    "timestamp": "object", **dict.fromkeys(VERSION_COLUMNS, "object"),
}  # fmt: skip

EXPERIMENTS = ("temporal", "random", "kahn")
_STRINGS = [c for c, t in DTYPES.items() if t == "object"]


def git_commit(path: str | Path = ".") -> str:
    """The commit the code at ``path`` runs from, for provenance in every row.

    Parameters
    ----------
    path : str or Path
        A directory inside the repository.

    Returns
    -------
    str
        The abbreviated commit hash, with ``+dirty`` appended when tracked
        files differ from it, or ``"unknown"`` outside a git checkout.
        ``DYNPR_GIT_COMMIT``, when set, wins: for copies of the tree without
        ``.git`` (a remote GPU machine).
    """
    if os.environ.get("DYNPR_GIT_COMMIT"):
        return os.environ["DYNPR_GIT_COMMIT"]
    try:
        head = subprocess.run(
            ["git", "-C", str(path), "rev-parse", "--short=12", "HEAD"],
            capture_output=True, text=True, check=True, timeout=30,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(path), "diff", "--quiet", "HEAD", "--"],
            capture_output=True, timeout=30,
        ).returncode != 0
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return head + ("+dirty" if dirty else "")


def timestamp() -> str:
    """The current time in UTC, ISO 8601 to the second."""
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


@functools.cache
def versions() -> dict[str, str]:
    """Python, NumPy, SciPy and CuPy versions and the CUDA runtime and driver versions, for every row.

    CuPy's are ``""`` where CuPy is not installed, the CUDA ones where no driver
    answers (a CPU-only machine). CUDA versions read as ``major.minor`` (12080 -> ``12.8``).
    """
    import numpy
    import scipy

    found = {"python": platform.python_version(), "numpy": numpy.__version__, "scipy": scipy.__version__,
             "cupy": "", "cuda_runtime": "", "cuda_driver": ""}
    if importlib.util.find_spec("cupy") is None:
        return found
    try:
        import cupy

        found["cupy"] = cupy.__version__
        for key, get in (("cuda_runtime", cupy.cuda.runtime.runtimeGetVersion),
                         ("cuda_driver", cupy.cuda.runtime.driverGetVersion)):
            number = int(get())
            found[key] = f"{number // 1000}.{number % 1000 // 10}"
    except Exception:  # CuPy without a usable CUDA library or driver: versions it could read stay
        pass
    return found


def make_row(**fields) -> dict:
    """One result row with every column of :data:`COLUMNS`.

    Parameters
    ----------
    **fields
        Values by column name. ``partition_ms``, ``mark_ms`` and
        ``compute_ms`` default to NaN, ``variant`` to ``""``, ``repeat`` and
        ``batch_index`` to 0, the version columns to :func:`versions`; every
        other column must be given.

    Raises
    ------
    ValueError
        If a field is not a column, a required column is missing, or
        ``experiment`` is not one of :data:`EXPERIMENTS`.
    """
    unknown = sorted(set(fields) - set(COLUMNS))
    if unknown:
        raise ValueError(f"unknown result column(s) {unknown}; columns are {list(COLUMNS)}")
    row = {"partition_ms": np.nan, "mark_ms": np.nan, "compute_ms": np.nan,
           "variant": "", "repeat": 0, "batch_index": 0, **versions()}
    row.update(fields)
    missing = [c for c in COLUMNS if c not in row]
    if missing:
        raise ValueError(f"result row lacks column(s) {missing}")
    if row["experiment"] not in EXPERIMENTS:
        raise ValueError(f"experiment must be one of {EXPERIMENTS}, got {row['experiment']!r}")
    if row["variant"] is None:
        row["variant"] = ""
    return {c: row[c] for c in COLUMNS}


def to_frame(rows: Iterable[Mapping]) -> pd.DataFrame:
    """Rows as a DataFrame with the schema's column order and dtypes."""
    df = pd.DataFrame(list(rows), columns=list(COLUMNS))
    return _coerce(df, "rows")


def _coerce(df: pd.DataFrame, source: str) -> pd.DataFrame:
    df = df.assign(**{c: "" for c in VERSION_COLUMNS if c not in df.columns})
    missing = [c for c in COLUMNS if c not in df.columns]
    if missing:
        raise ValueError(f"{source}: missing column(s) {missing}; expected {list(COLUMNS)}")
    df = df[list(COLUMNS)].copy()
    df[_STRINGS] = df[_STRINGS].fillna("").astype(str)
    try:
        return df.astype(DTYPES)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{source}: a column does not hold its type ({exc})") from None


def write_csv(df: pd.DataFrame, path: str | Path) -> None:
    """Write a results frame to ``path`` atomically (validated against the schema)."""
    df = _coerce(df, str(path))
    with atomic_path(path) as tmp:
        df.to_csv(tmp, index=False, float_format="%.17g")


def read_csv(path: str | Path) -> pd.DataFrame:
    """Read a runs file or the summary, checking its columns and dtypes.

    Raises
    ------
    ValueError
        If the file lacks a column or a value does not parse as its type.
    """
    df = pd.read_csv(path, dtype={c: str for c in _STRINGS}, keep_default_na=False,
                     na_values={c: ["", "nan", "NaN"] for c in COLUMNS if c not in _STRINGS})
    return _coerce(df, str(path))


def concat_runs(paths: Iterable[str | Path]) -> pd.DataFrame:
    """All runs files concatenated, in the order given (the summary)."""
    frames = [read_csv(p) for p in paths]
    if not frames:
        return to_frame([])
    return pd.concat(frames, ignore_index=True)


def geometric_mean(values) -> float:
    """Geometric mean of non-negative values (0 when any is 0, NaN when empty).

    Raises
    ------
    ValueError
        If a value is negative.
    """
    v = np.asarray(values, dtype=np.float64)
    v = v[~np.isnan(v)]
    if v.size == 0:
        return float("nan")
    if (v < 0).any():
        raise ValueError(f"geometric mean of negative values {v[v < 0][:3].tolist()}")
    if (v == 0).any():
        return 0.0
    return float(np.exp(np.log(v).mean()))


def aggregate(df: pd.DataFrame, value: str, by: list[str]) -> pd.DataFrame:
    """Mean per graph, then geometric mean across graphs (seed 003, 5.1.5).

    Parameters
    ----------
    df : DataFrame
        Result rows.
    value : str
        The column to aggregate (``time_ms`` or ``l1_error``).
    by : list of str
        Grouping columns other than ``dataset`` (e.g. ``["approach", "batch_fraction"]``).

    Returns
    -------
    DataFrame
        Columns ``by + [value]``: the arithmetic mean over batches and repeats
        of each graph, geometric-meaned across the graphs.
    """
    per_graph = df.groupby(["dataset", *by], sort=False)[value].mean().reset_index()
    return per_graph.groupby(by, sort=True)[value].agg(geometric_mean).reset_index()
