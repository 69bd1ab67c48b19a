"""From measurements to verdicts: bootstrap intervals and the verdict rule of ``results/claims.csv``.

A claim's statistic is the paper's (5.1.5): per graph and batch size the mean
over batches of each batch's median over repeats, the geometric mean across
graphs, and over a range of batch sizes the geometric mean across sizes.
:func:`bootstrap` returns that statistic's ingredients for the point estimate
and for :data:`RESAMPLES` resamples, batches resampled within each graph and
batch size and graphs resampled across the run (the same resample of graphs for
every batch size), from a fixed seed: the same rows give the same interval.

A verdict reads the whole 95% interval, never the point alone, by one rule
(:data:`RULE`, written into every row's ``basis`` and docs/claims.md): ``holds``
only where the interval meets the paper's value widened by the measured
run-to-run spread (:func:`run_spread`), ``stronger than claimed`` above it,
``weaker than claimed`` between 1 and it, ``does not hold`` at or below 1,
``inconclusive`` where it straddles 1 or is too wide to decide; and none of the
first three on fewer graphs than the claim's class needs (:func:`enough_graphs`).
"""

from __future__ import annotations

import contextlib
import warnings
from typing import Sequence

import numpy as np
import pandas as pd

VERDICTS = ("holds", "stronger than claimed", "weaker than claimed", "does not hold", "inconclusive",
            "not comparable", "not measured")
#: Verdicts that affirm the claim's direction: a row reads one only on enough graphs (:func:`enough_graphs`).
AFFIRMING = ("holds", "stronger than claimed", "weaker than claimed")
#: Bootstrap resamples per claim, the interval's confidence and the generator's seed.
RESAMPLES = 2000
CONFIDENCE = 0.95
SEED = 20240412
#: Graphs a claim on graphs needs before it may affirm: at least MIN_GRAPHS, CLASS_GRAPHS where its class has that
#: many (dynpr.evaluation.claims says which classes do).
MIN_GRAPHS = 3
CLASS_GRAPHS = 5
#: A level claim (a time, a rate: no "no effect" value to compare with) is too wide to decide beyond this factor.
LEVEL_WIDTH = 2.0

RULE = ("verdict rule: the paper's value P is widened by the measured run-to-run spread s of the ratio to the band "
        "[P/(1+s), P(1+s)]; reading the 95% interval [lo, hi]: does not hold if hi <= 1; inconclusive if it straddles 1; "
        "weaker than claimed if it lies between 1 and the band; stronger than claimed if it lies above the band; "
        "holds if it meets the band, unless it reaches below sqrt(P) or above P^2 (half-way to no effect, or the "
        "effect squared, on the log scale: too wide to decide, inconclusive); holds, stronger and weaker need "
        f"{MIN_GRAPHS} graphs, {CLASS_GRAPHS} where the claim's class has them")
LEVEL_RULE = ("level rule: as the verdict rule with the ratio measured/P for a rate and P/measured for a time "
              f"(1 = the paper), without a direction to fail: too wide beyond a factor {LEVEL_WIDTH:g} either side")
ORDERING_RULE = ("ordering rule: each inequality holds if the 95% interval of its ratio (larger / smaller) lies above 1, "
                 "fails if below, is undecided if it straddles 1; the ordering holds if every inequality holds, does "
                 "not hold if any fails, else inconclusive; holds needs the graphs of the verdict rule")


def paired(rows: pd.DataFrame, key: str, levels: Sequence[str]) -> pd.DataFrame:
    """The rows of graphs that have every level of ``key``: a graph run on one backend alone (a
    generated graph of ``gpu_datasets``) compares nothing and must not count as a graph."""
    present = rows[rows[key].isin(levels)].groupby("dataset")[key].nunique()
    return rows[rows["dataset"].isin(present[present == len(set(levels))].index)]


def bootstrap(rows: pd.DataFrame, key: str, levels: Sequence[str], value: str = "time_ms",
              resamples: int = RESAMPLES, seed: int = SEED):
    """Log of each graph's mean per batch size and level, for the data and for every resample.

    Parameters
    ----------
    rows : DataFrame
        Columns ``dataset, batch_fraction, batch_index, repeat``, ``key`` and ``value``.
    key : str
        The column whose values are compared (``approach``, ``variant``, ``backend`` ...).
    levels : sequence of str
        The values of ``key`` to keep, in the order of the last axis.

    Returns
    -------
    point : ndarray (graphs, fractions, levels)
        log of the mean over batches of the per-batch median over repeats (NaN where absent).
    samples : ndarray (resamples, graphs, fractions, levels)
        The same for every resample of batches and graphs.
    graphs, fractions : list
        The axes' labels.
    """
    rows = rows[rows[key].isin(levels)]
    per_batch = rows.groupby(["dataset", "batch_fraction", "batch_index", key])[value].median()
    wide = per_batch.unstack(key).reindex(columns=list(levels))
    graphs = sorted(set(wide.index.get_level_values("dataset")))
    fractions = sorted(set(wide.index.get_level_values("batch_fraction")))
    rng = np.random.default_rng(seed)
    point = np.full((len(graphs), len(fractions), len(levels)), np.nan)
    samples = np.full((resamples, *point.shape), np.nan)
    for (dataset, fraction), cell in wide.groupby(level=["dataset", "batch_fraction"]):
        g, f = graphs.index(dataset), fractions.index(fraction)
        x = cell.to_numpy(dtype=np.float64)
        with quiet():
            point[g, f] = np.nanmean(x, axis=0)
            samples[:, g, f] = np.nanmean(x[rng.integers(0, len(x), (resamples, len(x)))], axis=1)
    picked = rng.integers(0, len(graphs), (resamples, len(graphs))) if graphs else np.zeros((resamples, 0), int)
    samples = samples[np.arange(resamples)[:, None], picked]
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(point), np.log(samples), graphs, fractions


@contextlib.contextmanager
def quiet():
    """Silence NumPy's 'mean of empty slice' where a level has no rows (the result is NaN, as wanted)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


def across_graphs(logs: np.ndarray) -> np.ndarray:
    """Log of the geometric mean across graphs (axis -3) of per-graph means: (..., fractions, levels)."""
    with quiet():
        return np.nanmean(logs, axis=-3)


def interval(samples: np.ndarray, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Percentile interval of finite bootstrap samples (NaN, NaN when fewer than half are finite)."""
    s = np.asarray(samples, dtype=np.float64)
    s = s[np.isfinite(s)]
    if s.size < max(1, np.size(samples) // 2):
        return float("nan"), float("nan")
    tail = 100 * (1 - confidence) / 2
    low, high = np.percentile(s, [tail, 100 - tail])
    return float(low), float(high)


def region_verdict(low: float, high: float, edges: Sequence[float], labels: Sequence[str]) -> str:
    """The label of the region holding the whole interval [low, high], else ``inconclusive``.

    Region i is (edges[i-1], edges[i]]: values at or below ``edges[0]`` fall in the first,
    values above ``edges[-1]`` in the last. A non-finite bound is ``not measured``.
    """
    if not (np.isfinite(low) and np.isfinite(high)):
        return "not measured"
    first, last = np.searchsorted(np.asarray(edges, dtype=np.float64), [low, high], side="left")
    return labels[first] if first == last else "inconclusive"


def shown(value: float) -> float:
    """``value`` as the table shows it, to 4 significant digits: the verdict reads the numbers a reader sees."""
    return float(f"{value:.4g}")


def band(paper: float, spread: float) -> tuple[float, float]:
    """The paper's value widened by the run-to-run spread: [P / (1 + s), P (1 + s)]."""
    return paper / (1 + spread), paper * (1 + spread)


def speedup_verdict(low: float, high: float, paper: float, spread: float = 0.0) -> str:
    """The verdict of a speedup (a ratio where 1 is no effect) by :data:`RULE`, graphs not counted.

    Parameters
    ----------
    low, high : float
        The 95% interval of the measured ratio.
    paper : float
        The paper's ratio (> 1).
    spread : float
        The measured run-to-run spread of the ratio (:func:`run_spread`), widening the paper's value to a band.
    """
    if not (np.isfinite(low) and np.isfinite(high)):
        return "not measured"
    low, high = shown(low), shown(high)
    if high <= 1:
        return "does not hold"
    if low <= 1:
        return "inconclusive"
    return _against_band(low, high, *band(paper, spread), np.sqrt(paper), paper ** 2)


def level_verdict(low: float, high: float, spread: float = 0.0) -> str:
    """The verdict of a level claim by :data:`LEVEL_RULE`; ``low, high`` bound measured / paper (1 = the paper's,
    above it better)."""
    if not (np.isfinite(low) and np.isfinite(high)):
        return "not measured"
    low, high = shown(low), shown(high)
    return _against_band(low, high, *band(1.0, spread), 1 / LEVEL_WIDTH, LEVEL_WIDTH)


def _against_band(low, high, band_low, band_high, wide_low, wide_high) -> str:
    if high < band_low:
        return "weaker than claimed"
    if low > band_high:
        return "stronger than claimed"
    too_wide = low < min(wide_low, band_low) or high > max(wide_high, band_high)
    return "inconclusive" if too_wide else "holds"


def ordering_verdict(pair_intervals: Sequence[tuple[float, float]]) -> str:
    """Verdict of an ordering by :data:`ORDERING_RULE` from the intervals of its inequalities' ratios
    (larger / smaller, > 1 holds), graphs not counted."""
    each = [region_verdict(low, high, [1.0], ["does not hold", "holds"]) for low, high in pair_intervals]
    if not each or "not measured" in each:
        return "not measured"
    if "does not hold" in each:
        return "does not hold"
    return "holds" if all(v == "holds" for v in each) else "inconclusive"


def enough_graphs(verdict: str, graphs: int, needed: int) -> tuple[str, str]:
    """An affirming verdict on fewer than ``needed`` graphs reads ``inconclusive``; the note says so (else empty)."""
    if verdict in AFFIRMING and graphs < needed:
        return "inconclusive", f"on {graphs} graphs, fewer than the {needed} the rule needs (would read '{verdict}')"
    return verdict, ""


def run_spread(rows: pd.DataFrame, key: str, levels: Sequence[str], value: str = "time_ms") -> float:
    """The run-to-run spread of ``levels[0]``'s value over ``levels[1]``'s (one level: of the value itself).

    Per batch (dataset, batch_fraction, batch_index) the ratio of each repeat's pair of runs, half its range over
    its median; the median over batches. 0 where every batch has one repeat.
    """
    rows = rows[rows[key].isin(levels)]
    if rows.empty:
        return 0.0
    cell = ["dataset", "batch_fraction", "batch_index"]
    runs = rows.groupby([*cell, "repeat", key])[value].median().unstack(key)
    if any(level not in runs for level in levels):
        return 0.0
    ratio = runs[levels[0]] / runs[levels[1]] if len(levels) > 1 else runs[levels[0]]
    ratio = ratio[np.isfinite(ratio) & (ratio > 0)]
    per_batch = ratio.groupby(level=cell).agg(["min", "max", "median", "size"])
    per_batch = per_batch[per_batch["size"] > 1]
    if per_batch.empty:
        return 0.0
    return float(((per_batch["max"] - per_batch["min"]) / (2 * per_batch["median"])).median())
