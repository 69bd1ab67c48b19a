"""Result rows of the experiments: the CSV schema, row building, writing and aggregation.

Every run of an approach on one updated graph becomes one row of
``results/runs/{dataset}.csv`` (columns :data:`COLUMNS`); ``results/summary.csv``
concatenates them and is the only input of the figures.

Kahn rows (``experiment == approach == "kahn"``) reuse the PageRank columns:
``iterations`` holds the number of levels, ``affected`` the number of
processed vertices (``affected == vertices`` means the graph is a DAG) and
``l1_error`` is NaN.

Files read back (:func:`read_csv`) are checked: every column parses as its
type, values lie in their ranges (:func:`check_values`) and, given what the
config asks for (:func:`expected_runs`), no row is missing or extra
(:func:`check_complete`). A short or edited file is one
:class:`~dynpr.errors.ResultsError` line naming it and the command that rebuilds it.
"""

from __future__ import annotations

import datetime
import functools
import importlib.util
import os
import platform
import subprocess
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from dynpr.graph.atomic_files import atomic_path
from dynpr.designs import APPROACHES
from dynpr.errors import ResultsError

#: Column order of every runs file and of the summary (README, "results/runs/{dataset}.csv").
COLUMNS = (
    "dataset", "experiment", "approach", "backend", "device",
    "batch_fraction", "batch_index", "repeat", "deletions", "insertions",
    "vertices", "edges", "iterations", "converged", "time_ms", "l1_error",
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
    "iterations": "int64", "converged": "bool", "time_ms": "float64", "l1_error": "float64",
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
        ``batch_index`` to 0, ``converged`` to True (Kahn rows: no tolerance),
        the version columns to :func:`versions`; every other column must be given.

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
           "variant": "", "repeat": 0, "batch_index": 0, "converged": True, **versions()}
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


def _rerun(source: str) -> str:
    return f"delete it and rerun `snakemake --cores 1 --forcerun {source}`"


def _coerce(df: pd.DataFrame, source: str) -> pd.DataFrame:
    df = df.assign(**{c: "" for c in VERSION_COLUMNS if c not in df.columns})
    missing = [c for c in COLUMNS if c not in df.columns]
    if missing:
        raise ResultsError(f"{source}: missing column(s) {missing}; expected {list(COLUMNS)}")
    df = df[list(COLUMNS)].copy()
    df[_STRINGS] = df[_STRINGS].fillna("").astype(str)
    for column, dtype in DTYPES.items():
        if dtype == "object":
            continue
        if dtype == "bool":
            _coerce_booleans(df, column, source)
            continue
        values = pd.to_numeric(df[column], errors="coerce")
        bad = values.isna() & df[column].notna() if dtype == "float64" else values.isna()
        if dtype == "int64":
            bad |= values.notna() & (values != values.round())
        if bad.any():
            row = int(np.argmax(bad.to_numpy()))
            raise ResultsError(f"{source}: row {row + 1}: {column} = {df[column].iloc[row]!r} is not "
                               f"{'an integer' if dtype == 'int64' else 'a number'} (a cut or edited file?); "
                               + _rerun(source))
        df[column] = values
    return df.astype(DTYPES)


def _coerce_booleans(df: pd.DataFrame, column: str, source: str) -> None:
    """``df[column]`` as booleans: True/False as written (pandas reads a column with one odd value as
    strings, which a numeric parse would refuse from its first row on), else the first odd row named."""
    values = df[column]
    if values.dtype != bool:
        text = values.astype(str).str.strip().str.lower()
        bad = ~text.isin(["true", "false"])
        if bad.any():
            row = int(np.argmax(bad.to_numpy()))
            raise ResultsError(f"{source}: row {row + 1}: {column} = {values.iloc[row]!r} is not True or False "
                               "(a cut or edited file?); " + _rerun(source))
        values = text == "true"
    df[column] = values


def write_csv(df: pd.DataFrame, path: str | Path) -> None:
    """Write a results frame to ``path`` atomically (validated against the schema). Floats are written
    as Python writes them, the shortest text that reads back to the same double: a fraction of the
    config's ``1.0e-5`` reads ``1e-05``, not ``1.0000000000000001e-05``."""
    df = _coerce(df, str(path))
    with atomic_path(path) as tmp:
        df.to_csv(tmp, index=False)


def read_csv(path: str | Path, expected: Mapping[str, dict] | None = None) -> pd.DataFrame:
    """Read a runs file or the summary, checking columns, dtypes, value ranges and completeness.

    Parameters
    ----------
    path : str or Path
    expected : mapping, optional
        :func:`expected_runs` of the config; when given, every (dataset,
        backend) in the file must hold exactly the rows it lists.

    Raises
    ------
    ResultsError
        If the file is empty, lacks a column, a value does not parse as its
        type or lies outside its range, or rows are missing or extra; the
        message names the file and the command that rebuilds it.
    """
    source = str(path)
    try:
        df = pd.read_csv(path, dtype={c: str for c in _STRINGS}, keep_default_na=False,
                         na_values={c: ["", "nan", "NaN"] for c in COLUMNS if c not in _STRINGS})
    except pd.errors.EmptyDataError:
        raise ResultsError(f"{source}: empty file; {_rerun(source)}") from None
    except (pd.errors.ParserError, UnicodeDecodeError) as err:
        raise ResultsError(f"{source}: not a results CSV ({str(err).strip()}); {_rerun(source)}") from None
    if not _ends_with_newline(path):  # write_csv ends every row; a file cut mid-row does not
        raise ResultsError(f"{source}: its last row is cut short (no line end); {_rerun(source)}")
    df = _coerce(df, source)
    check_values(df, source)
    if expected is not None:
        check_complete(df, source, expected)
    return df


def read_summary(path: str | Path, runs: Sequence[str | Path], expected: Mapping[str, dict]) -> pd.DataFrame:
    """Read the summary, checked complete (:func:`read_csv`) and equal to the runs files it concatenates.

    The summary is derived from ``runs`` (:func:`concat_runs`, in that order); reading them again costs
    as much as reading it, and is the only way to tell a plausible edit (one time x1000) from a run.

    Raises
    ------
    ResultsError
        Naming the first row and column where the summary and its runs files differ.
    """
    summary = read_csv(path, expected)
    derived = concat_runs(runs, expected)
    if len(summary) != len(derived):
        raise ResultsError(f"{path}: {len(summary)} rows, its runs files hold {len(derived)}; "
                           f"{_rerun(str(path))}")
    differ = (summary != derived) & ~(summary.isna() & derived.isna())
    # pandas' default CSV float parser may land one ulp from a value's shortest repr (seen on the
    # H100's main job: 8.084484329949841e-10 against ...842e-10): floats agree to 1e-12 relative
    floats = [c for c in summary.columns if pd.api.types.is_float_dtype(summary[c])]
    differ[floats] &= ~np.isclose(summary[floats].to_numpy(float), derived[floats].to_numpy(float), rtol=1e-12, atol=0,
                                  equal_nan=True)
    if differ.to_numpy().any():
        row, column = map(int, np.argwhere(differ.to_numpy())[0])
        name = summary.columns[column]
        raise ResultsError(f"{path}: row {row + 1}: {name} = {summary.iloc[row, column]} where its runs files "
                           f"hold {derived.iloc[row, column]} (an edited file?); {_rerun(str(path))}")
    return summary


def _ends_with_newline(path: str | Path) -> bool:
    with open(path, "rb") as f:
        f.seek(-1, 2)  # read_csv refused empty files already
        return f.read(1) == b"\n"


def concat_runs(paths: Iterable[str | Path], expected: Mapping[str, dict] | None = None) -> pd.DataFrame:
    """All runs files concatenated, in the order given (the summary), each checked by :func:`read_csv`."""
    frames = [read_csv(p, expected) for p in paths]
    if not frames:
        return to_frame([])
    return pd.concat(frames, ignore_index=True)


def check_values(df: pd.DataFrame, source: str) -> None:
    """Refuse values no run can produce (negative times or counts, unknown approaches, NaN where required).

    Raises
    ------
    ResultsError
        Naming the file, the first offending row (1-based, header excluded) and the rule.
    """
    kahn = (df["experiment"] == "kahn").to_numpy()
    phases = df[["partition_ms", "mark_ms", "compute_ms"]]
    rules = [
        ("experiment is one of " + "/".join(EXPERIMENTS), df["experiment"].isin(EXPERIMENTS)),
        ("approach is one of " + "/".join(APPROACHES) + " (kahn for Kahn rows)",
         np.where(kahn, df["approach"] == "kahn", df["approach"].isin(APPROACHES))),
        # a timed run never takes 0 ms (a speedup over it would be infinite); Kahn on an empty graph may
        ("time_ms is finite and > 0 (>= 0 for Kahn)",
         np.isfinite(df["time_ms"]) & np.where(kahn, df["time_ms"] >= 0, df["time_ms"] > 0)),
        ("phase times are >= 0 or empty", (phases.isna() | (phases >= 0)).all(axis=1)),
        ("l1_error is >= 0 or empty (always empty for Kahn)",
         np.where(kahn, df["l1_error"].isna(), df["l1_error"].isna() | (df["l1_error"] >= 0))),
        ("batch_fraction lies in (0, 1] (empty for Kahn)",
         np.where(kahn, df["batch_fraction"].isna(), (df["batch_fraction"] > 0) & (df["batch_fraction"] <= 1))),
        ("vertices >= 1", df["vertices"] >= 1),
        ("counts (edges, deletions, insertions, batch_index, repeat) are >= 0",
         (df[["edges", "deletions", "insertions", "batch_index", "repeat"]] >= 0).all(axis=1)),
        ("iterations >= 1 (>= 0 for Kahn)", df["iterations"] >= np.where(kahn, 0, 1)),
        ("0 <= affected <= vertices", (df["affected"] >= 0) & (df["affected"] <= df["vertices"])),
    ]
    for rule, ok in rules:
        ok = np.asarray(ok, dtype=bool)
        if not ok.all():
            row = int(np.argmax(~ok))
            raise ResultsError(f"{source}: row {row + 1} breaks the rule '{rule}' (an edited file?); {_rerun(source)}")


def expected_runs(config: Mapping, experiment_of: Mapping[str, str] | None = None) -> dict[str, dict]:
    """The rows the workflow writes per dataset and backend, from the config.

    Parameters
    ----------
    config : mapping
        The workflow config (``datasets``, ``approaches``, ``repeat``, ``temporal``, ``random``).
    experiment_of : mapping of str to str, optional
        ``"temporal"`` or ``"random"`` for each dataset; by default every
        configured dataset, temporal ones (catalog kind) temporal, others random.

    Returns
    -------
    dict
        ``{dataset: {"experiment", "approaches", "repeat", "batches": {fraction: count}}}``.
    """
    if experiment_of is None:
        from dynpr.io.catalog import get_dataset, load_catalog

        catalog = load_catalog()
        experiment_of = {d: "temporal" if get_dataset(d, catalog).kind == "temporal" else "random"
                         for d in config["datasets"]}
    out = {}
    for dataset, experiment in experiment_of.items():
        section = config[experiment]
        count = section["num_batches"] if experiment == "temporal" else section["repeats"]
        out[dataset] = {"experiment": experiment, "approaches": list(config["approaches"]),
                        "repeat": int(config["repeat"]),
                        "batches": {float(f): int(count) for f in section["batch_fractions"]}}
    return out


def check_complete(df: pd.DataFrame, source: str, expected: Mapping[str, dict]) -> None:
    """Refuse a file in which any (dataset, backend) lacks rows the config asks for, or has extra ones.

    Expected per dataset: approaches × fractions × batches × repeats PageRank
    rows plus ``repeat`` Kahn rows, each (approach, fraction, batch, repeat) once.

    Raises
    ------
    ResultsError
    """
    if df.empty:
        raise ResultsError(f"{source}: no rows; {_rerun(source)}")
    for (dataset, backend), group in df.groupby(["dataset", "backend"], sort=False):
        spec = expected.get(dataset)
        if spec is None:
            raise ResultsError(f"{source}: rows of dataset {dataset!r}, which the config does not list; {_rerun(source)}")
        want = {("kahn", "", 0, r) for r in range(spec["repeat"])}
        want |= {(a, f"{f:g}", b, r) for a in spec["approaches"] for f, count in spec["batches"].items()
                 for b in range(count) for r in range(spec["repeat"])}
        fractions = group["batch_fraction"].map(lambda f: "" if pd.isna(f) else f"{f:g}")
        got = list(zip(group["approach"], fractions, group["batch_index"], group["repeat"]))
        missing, extra = want - set(got), len(got) - len(set(got)) + len(set(got) - want)
        if missing or extra:
            example = f"; e.g. no row for {sorted(missing)[0]} (approach, fraction, batch, repeat)" if missing else ""
            raise ResultsError(f"{source}: {dataset} on {backend} has {len(got)} rows, the config asks for "
                               f"{len(want)} ({len(missing)} missing, {extra} extra or repeated){example}; "
                               "the file is incomplete or edited: " + _rerun(source))


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
    """Median per batch, mean per graph, then geometric mean across graphs (paper 5.1.5).

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
        Columns ``by + [value]``: per graph the arithmetic mean over batches of
        each batch's median over repeats (one slow repeat does not move it),
        geometric-meaned across the graphs.
    """
    keys = ["dataset", *by]
    per_batch = df.groupby([*keys, *(c for c in ("batch_fraction", "batch_index") if c in df and c not in by)],
                           sort=False, dropna=False)[value].median().reset_index()
    per_graph = per_batch.groupby(keys, sort=False)[value].mean().reset_index()
    return per_graph.groupby(by, sort=True)[value].agg(geometric_mean).reset_index()
