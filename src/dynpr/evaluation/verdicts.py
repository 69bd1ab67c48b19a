"""From measurements to verdicts: bootstrap intervals and the two-sided rule of ``results/claims.csv``.

A claim's statistic is the paper's (5.1.5): per graph and batch size the mean
over batches of each batch's median over repeats, the geometric mean across
graphs, and over a range of batch sizes the geometric mean across sizes.
:func:`bootstrap` returns that statistic's ingredients for the point estimate
and for :data:`RESAMPLES` resamples, batches resampled within each graph and
batch size and graphs resampled across the run (the same resample of graphs for
every batch size), from a fixed seed: the same rows give the same interval.

A verdict reads the whole 95% interval, never the point alone: the interval
must lie in one region of the claim's rule (:func:`region_verdict`), else the
verdict is ``inconclusive``.
"""

from __future__ import annotations

import contextlib
import warnings
from typing import Sequence

import numpy as np
import pandas as pd

VERDICTS = ("holds", "partly", "does not hold", "inconclusive", "not comparable", "not measured")
#: Bootstrap resamples per claim, the interval's confidence and the generator's seed.
RESAMPLES = 2000
CONFIDENCE = 0.95
SEED = 20240412
#: A measurement within this factor of the paper's value (either way) holds.
FACTOR = 2.0


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


def speedup_rule(paper: float, factor: float = FACTOR) -> tuple[list[float], list[str], str]:
    """Regions of a speedup claim: slower at all does not hold, faster by less than paper/factor or by more
    than paper·factor is partly, within the factor holds."""
    low = max(paper / factor, 1.0)
    return ([1.0, low, paper * factor], ["does not hold", "partly", "holds", "partly"],
            f"speedup: holds if the 95% interval lies within [{low:.3g}, {paper * factor:.3g}] "
            f"(the paper's {paper:g} within a factor {factor:g}), partly if it lies above 1 but outside, "
            "does not hold if at or below 1, inconclusive if it straddles a bound")


def level_rule(paper: float, higher_is_better: bool, factor: float = FACTOR) -> tuple[list[float], list[str], str]:
    """Regions of a rate (higher is better) or a time (lower is better): within the factor holds, better than
    that is partly, worse does not hold."""
    labels = ["does not hold", "holds", "partly"] if higher_is_better else ["partly", "holds", "does not hold"]
    return ([paper / factor, paper * factor], labels,
            f"holds if the 95% interval lies within [{paper / factor:.3g}, {paper * factor:.3g}] (the paper's "
            f"{paper:g} within a factor {factor:g}); {'above' if higher_is_better else 'below'} it partly, "
            f"{'below' if higher_is_better else 'above'} it does not hold; inconclusive if it straddles a bound")


ORDERING_RULE = ("ordering: each inequality holds if the 95% interval of its ratio lies above 1 and fails if below; "
                 "holds if all hold, does not hold if all fail, partly if some fail, inconclusive if any straddles 1")


def ordering_verdict(pair_intervals: Sequence[tuple[float, float]]) -> str:
    """Verdict of an ordering from the intervals of its inequalities' ratios (larger / smaller, > 1 holds)."""
    each = [region_verdict(low, high, [1.0], ["does not hold", "holds"]) for low, high in pair_intervals]
    if not each or "not measured" in each:
        return "not measured"
    if "inconclusive" in each:
        return "inconclusive"
    if all(v == "holds" for v in each):
        return "holds"
    return "does not hold" if all(v == "does not hold" for v in each) else "partly"
