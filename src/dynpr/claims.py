"""The paper's headline claims beside what this run measured, each with a verdict.

The paper is *Efficient GPU Implementation of Static and Incrementally Expanding
DF-P PageRank for Dynamic Graphs* (Sahu, 2024, doi:10.48550/arXiv.2404.08299).
:func:`evaluate` reads the summary table (``results/summary.csv``) and returns
one row per claim: the paper's number, the measured one, the backend and device
it was measured on, and a verdict by :data:`RULE`.

Speedups are ratios of geometric means across graphs (paper 5.1.5): per graph
and batch size the mean runtime over batches and repeats, then the geometric
mean over graphs, per batch size; a range of batch sizes takes the geometric
mean over its sizes.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dynpr.results import aggregate, geometric_mean

DOI = "10.48550/arXiv.2404.08299"

#: how a speedup claim is judged (written into every row of claims.csv)
RULE = ("speedup: holds if measured >= 0.8 x the paper's, partly if measured > 1 (faster, by less), "
        "does not hold otherwise; ordering: holds if both inequalities hold, partly if one does")
#: share of the paper's speedup a measurement must reach to hold
HOLDS_SHARE = 0.8

#: temporal batch sizes of Fig. 3(a) and DF-P's speedup over Static at each (section 5.3)
TEMPORAL_DFP = {1e-5: 3.6, 1e-4: 2.0, 1e-3: 1.3}
#: random batch sizes over which DF-P is 3.1x Static (section 5.4: 1e-7 ... 1e-4 |E|)
RANDOM_RANGE = (1e-7, 1e-4)

COLUMNS = ("claim", "section", "paper", "measured", "verdict", "backend", "device", "basis", "rule")


def _pick(rows: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """The GPU's rows when present (the paper's claims are GPU claims), else the CPU's."""
    backend = "gpu" if (rows["backend"] == "gpu").any() else "cpu"
    return rows[rows["backend"] == backend], backend


def _devices(rows: pd.DataFrame) -> str:
    return "; ".join(sorted(set(rows["device"]))) if len(rows) else ""


def _speedup(rows: pd.DataFrame, slow: str, fast: str) -> float:
    """Geometric mean over batch sizes of (slow's / fast's geometric mean over graphs)."""
    table = aggregate(rows[rows["approach"].isin([slow, fast])], "time_ms", ["approach", "batch_fraction"])
    wide = table.pivot(index="batch_fraction", columns="approach", values="time_ms")
    if slow not in wide or fast not in wide:
        return float("nan")
    ratios = (wide[slow] / wide[fast]).replace([np.inf, -np.inf], np.nan).dropna()
    return geometric_mean(ratios) if len(ratios) else float("nan")


def speedup_verdict(measured: float, paper: float) -> str:
    """Verdict of a measured speedup against the paper's, by :data:`RULE`."""
    if not np.isfinite(measured):
        return "not measured"
    if measured >= HOLDS_SHARE * paper:
        return "holds"
    return "partly" if measured > 1 else "does not hold"


def _row(claim, section, paper, measured, verdict, backend, rows, basis) -> dict:
    return {"claim": claim, "section": section, "paper": paper, "measured": measured, "verdict": verdict,
            "backend": backend, "device": _devices(rows), "basis": basis, "rule": RULE}


def _speedup_row(claim, section, paper, rows, slow, fast, basis) -> dict:
    chosen, backend = _pick(rows) if len(rows) else (rows, "")
    measured = _speedup(chosen, slow, fast) if len(chosen) else float("nan")
    return _row(claim, section, f"{paper:g}x", _fmt(measured, "x"), speedup_verdict(measured, paper),
                backend, chosen, basis)


def _fmt(value: float, unit: str = "") -> str:
    return f"{value:.2f}{unit}" if np.isfinite(value) else "n/a"


def _ordering_row(claim, section, rows, basis, low, mid) -> dict:
    """Approaches ``low`` err at most as much as ``mid``, which err at most as much as Static.

    Errors are geometric means of L1 error over graphs, then over batch sizes.
    """
    chosen, backend = _pick(rows) if len(rows) else (rows, "")
    errors = {}
    if len(chosen):
        table = aggregate(chosen, "l1_error", ["approach", "batch_fraction"])
        errors = table.groupby("approach")["l1_error"].agg(geometric_mean).to_dict()
    needed = ("static", "nd", "dt", "df", "dfp")
    names = {"static": "Static", "nd": "ND", "dt": "DT", "df": "DF", "dfp": "DF-P"}
    paper = f"{', '.join(names[a] for a in low)} <= {', '.join(names[a] for a in mid)} <= Static"
    if not all(a in errors and np.isfinite(errors[a]) for a in needed):
        return _row(claim, section, paper, "n/a", "not measured", backend, chosen, basis)
    below = max(errors[a] for a in low) <= min(errors[a] for a in mid)
    above = max(errors[a] for a in mid) <= errors["static"]
    verdict = "holds" if below and above else ("partly" if below or above else "does not hold")
    measured = ", ".join(f"{names[a]} {errors[a]:.2g}" for a in needed)
    return _row(claim, section, paper, measured, verdict, backend, chosen, basis)


def evaluate(summary: pd.DataFrame) -> pd.DataFrame:
    """Every headline claim of the paper beside this run's measurement.

    Parameters
    ----------
    summary : pandas.DataFrame
        The summary table (:func:`dynpr.results.read_csv` of ``results/summary.csv``).

    Returns
    -------
    pandas.DataFrame
        Columns :data:`COLUMNS`, one row per claim; ``verdict`` is ``holds``,
        ``partly``, ``does not hold``, or ``not measured`` where this run has no rows for it
        (e.g. Static GPU vs CPU without `--config compare_backends=True`).
    """
    temporal = summary[summary["experiment"] == "temporal"]
    random = summary[summary["experiment"] == "random"]
    in_range = random[random["batch_fraction"].between(*RANDOM_RANGE)]
    rows = [
        _row("Static PageRank on the GPU outperforms Hornet and Gunrock by 31x and 5.9x", "5.2, Fig. 2",
             "31x, 5.9x", "n/a", "not measured", "", summary.iloc[:0],
             "Hornet and Gunrock are not part of this pipeline"),
    ]
    # GPU Static vs multicore Static: the same runs on both backends (compare_backends)
    static = summary[(summary["approach"] == "static") & summary["experiment"].isin(["temporal", "random"])]
    both = static.assign(approach=static["backend"])
    measured = _speedup(both, "cpu", "gpu") if {"cpu", "gpu"} <= set(static["backend"]) else float("nan")
    rows.append(_row("Static PageRank on the GPU is 24x faster than on a multicore CPU", "5.2", "24x",
                     _fmt(measured, "x"), speedup_verdict(measured, 24.0), "gpu vs cpu", static,
                     "Static runtime, CPU over GPU, every temporal and random batch size "
                     "(needs `--config compare_backends=True`; this CPU engine is SciPy, not the paper's 64-core code)"))
    rows.append(_speedup_row("DF-P outperforms Static on real-world dynamic graphs by 2.1x", "abstract, 5.3", 2.1,
                             temporal, "static", "dfp", "temporal graphs, every batch size"))
    for fraction, paper in TEMPORAL_DFP.items():
        rows.append(_speedup_row(f"DF-P is {paper:g}x faster than Static at batch size {fraction:g}|E_T|",
                                 "5.3, Fig. 3(a)", paper, temporal[np.isclose(temporal["batch_fraction"], fraction)],
                                 "static", "dfp", f"temporal graphs, batch size {fraction:g}|E_T|"))
    rows.append(_speedup_row("DF-P outperforms Static on large static graphs with random batches by 3.1x",
                             "abstract, 5.4, Fig. 4", 3.1, in_range, "static", "dfp",
                             f"random batches of {RANDOM_RANGE[0]:g} to {RANDOM_RANGE[1]:g}|E|"))
    rows.append(_ordering_row("DF and DF-P err more than ND and DT but less than Static (temporal graphs)",
                              "5.3, Fig. 3(b)", temporal, "geometric mean L1 error, temporal graphs, every batch size",
                              low=("nd", "dt"), mid=("df", "dfp")))
    rows.append(_ordering_row("DF-P errs more than ND, DT and DF but less than Static (random batches up to 1e-4|E|)",
                              "5.4, Fig. 5", in_range,
                              f"geometric mean L1 error, random batches of {RANDOM_RANGE[0]:g} to {RANDOM_RANGE[1]:g}|E|",
                              low=("nd", "dt", "df"), mid=("dfp",)))
    return pd.DataFrame(rows, columns=list(COLUMNS))
