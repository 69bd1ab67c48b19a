"""Every claim of the paper and of its companion reports beside what this run measured.

The paper is *Efficient GPU Implementation of Static and Incrementally Expanding
DF-P PageRank for Dynamic Graphs* (Sahu, 2024, doi:10.48550/arXiv.2404.08299):
Table 2, sections 4.4 (Fig. 1), 5.2, 5.3.1 and 5.3.2. The reports are those of
the README's glossary: the static GPU kernel studies (variants' ordering) and
the Kahn report (dense against CSR, GPU against CPU). :func:`evaluate` returns
one row per claim with the columns :data:`COLUMNS` (``results/claims.csv``).

What a row measures is the paper's statistic (:mod:`dynpr.evaluation.verdicts`: geometric
means across graphs of per-graph means of per-batch medians), with a 95%
bootstrap interval over batches and graphs and a verdict from the interval by
the rule of :mod:`dynpr.evaluation.verdicts`, written into every row's ``basis``. ``n``
counts runs (rows of ``results/runs``); ``graphs_n``, ``batches_n`` and
``repeats_n`` the graphs, the batches and the timed repeats per batch (median)
the interval resamples. A row affirms a claim only on :data:`NEEDED_GRAPHS` of
its class. Left out of every statistic, and counted in ``basis``: runs capped
at ``max_iterations`` (``converged`` false), and batches of fewer than
:data:`MIX_EDGES` edges, temporal and random alike (a random one cannot hold the
paper's 80/20 mix, small fractions of a small graph round to a single insertion;
a temporal one of the embedded graphs often adds no new edge at all). A speed
claim measured on the CPU is ``not comparable``: the paper's speed claims are
GPU claims; its error orderings hold on either backend.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from dynpr.designs import APPROACH
from dynpr.evaluation.verdicts import (CLASS_GRAPHS, LEVEL_RULE, MIN_GRAPHS, ORDERING_RULE, RULE, across_graphs, band,
                            bootstrap, enough_graphs, interval, level_verdict, ordering_verdict, paired, quiet,
                            run_spread, speedup_verdict)

DOI = "10.48550/arXiv.2404.08299"
COLUMNS = ("claim_id", "section", "claim", "paper_value", "measured", "ci_low", "ci_high", "n", "graphs_n",
           "batches_n", "repeats_n", "unit", "backend", "device", "graphs", "fractions", "verdict", "basis")
#: Temporal batch sizes of section 5.3.1 and the random ones of section 5.3.2's speedups (1e-7 to 1e-4 |E|).
TEMPORAL = (1e-5, 1e-4, 1e-3)
RANDOM = (1e-7, 1e-6, 1e-5, 1e-4)
#: The smallest batch a claim takes, temporal or random: one that holds an 80/20 mix of insertions and deletions
#: (4 + 1 edges).
MIX_EDGES = 5
#: Graphs a claim needs to affirm, per class: the random-batch class can always have CLASS_GRAPHS (generated
#: R-MAT graphs), the catalog holds 6 temporal graphs, the kernel benchmarks take any prepared graph; the Kahn
#: report's graphs are 3 or 4 sizes of one kind; a claim on one named graph (sk-2005) needs that graph.
NEEDED_GRAPHS = {"temporal": CLASS_GRAPHS, "random": CLASS_GRAPHS, "bench": CLASS_GRAPHS, "kahn": MIN_GRAPHS,
                 "one graph": 1}
NAMES = {a.code: a.label for a in APPROACH.values()}
PAPER = "Sahu 2024"
STATIC_REPORTS = "static GPU PageRank reports"
KAHN_REPORT = "Kahn report"


@dataclass(frozen=True)
class Speedup:
    """``fast`` is ``paper`` times faster than ``slow`` (a ratio of the paper's statistic)."""

    claim_id: str
    section: str
    claim: str
    paper: float
    experiment: str
    slow: str
    fast: str
    fractions: tuple[float, ...]


#: Where Table 2's speedups of DF-P are also stated, per approach: (temporal, random).
_T2_ALSO = {"static": ("; abstract", "; abstract; 5.3.2, Fig. 4(a)"), "nd": ("", "; 5.3.2, Fig. 4(a)"),
            "dt": ("", "; 5.3.2, Fig. 4(a)"), "df": ("", "")}


def _t2(approach: str, temporal: float, random: float) -> tuple[Speedup, Speedup]:
    name, (also_temporal, also_random) = NAMES[approach], _T2_ALSO[approach]
    return (Speedup(f"T2-{approach}-temporal", "Table 2" + also_temporal, f"DF-P is {temporal:g}x faster than "
                    f"{name} on real-world dynamic graphs (1e-5 to 1e-3 |E_T|)", temporal, "temporal", approach,
                    "dfp", TEMPORAL),
            Speedup(f"T2-{approach}-random", "Table 2" + also_random, f"DF-P is {random:g}x faster than {name} on "
                    "large graphs with random batches (1e-7 to 1e-4 |E|)", random, "random", approach, "dfp", RANDOM))


SPEEDUPS = (
    *_t2("static", 2.1, 3.1), *_t2("nd", 1.5, 1.7), *_t2("dt", 1.8, 13.1), *_t2("df", 2.1, 1.3),
    *(Speedup(f"5.3.1-dfp-static-{f:g}", "5.3.1, Fig. 3(a)", f"DF-P is {p:g}x faster than Static at {f:g} |E_T|",
              p, "temporal", "static", "dfp", (f,)) for f, p in zip(TEMPORAL, (3.6, 2.0, 1.3))),
    Speedup("5.3.1-df-static-1e-05", "5.3.1, Fig. 3(a)", "DF is 1.4x faster than Static at 1e-05 |E_T|", 1.4,
            "temporal", "static", "df", (1e-5,)),
    *(Speedup(f"5.3.1-dfp-dt-{f:g}", "5.3.1", f"DF-P is {p:g}x faster than DT at {f:g} |E_T|", p, "temporal", "dt",
              "dfp", (f,)) for f, p in zip(TEMPORAL, (4.2, 2.8, 3.6))),
    *(Speedup(f"5.3.2-df-{a}", "5.3.2, Fig. 4(a)", f"DF is {p:g}x faster than {NAMES[a]} on random batches of 1e-7 "
              "to 1e-4 |E|", p, "random", a, "df", RANDOM) for a, p in (("static", 2.5), ("nd", 1.3), ("dt", 10.4))),
)


@dataclass
class Selection:
    """The rows a claim rests on, the backend they ran on, and what was left out and why."""

    rows: pd.DataFrame
    backend: str
    notes: list[str]
    below_mix_only: bool = False


def _pick(rows: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """The GPU's rows when present (the paper's claims are GPU claims), else the CPU's."""
    if rows.empty:
        return rows, ""
    backend = "gpu" if (rows["backend"] == "gpu").any() else "cpu"
    return rows[rows["backend"] == backend], backend


def _in(values: pd.Series, wanted: Sequence[float]) -> pd.Series:
    return pd.Series(np.isclose(values.to_numpy(dtype=np.float64)[:, None], np.asarray(wanted, dtype=np.float64),
                                rtol=1e-9, atol=0).any(axis=1), index=values.index)


def select(summary: pd.DataFrame, experiments: Sequence[str], fractions: Sequence[float] | None,
           approaches: Sequence[str], *, pick: bool = True) -> Selection:
    """The summary's rows a claim rests on: converged runs on batches of at least :data:`MIX_EDGES` edges
    (temporal and random alike); ``notes`` counts what was left out."""
    rows = summary[summary["experiment"].isin(experiments) & summary["approach"].isin(approaches)]
    if fractions is not None:
        rows = rows[_in(rows["batch_fraction"], fractions)]
    rows, backend = _pick(rows) if pick else (rows, "+".join(sorted(set(rows["backend"]))))
    notes = []
    capped = ~rows["converged"].astype(bool)
    if capped.any():
        notes.append(f"{int(capped.sum())} runs capped at max_iterations (converged false) left out")
        rows = rows[~capped]
    below = rows["experiment"].isin(["temporal", "random"]) & (rows["insertions"] + rows["deletions"] < MIX_EDGES)
    if below.any():
        cut = rows[below].groupby(["dataset", "batch_fraction"])["batch_index"].nunique()
        notes.append(f"{int(below.sum())} runs on batches of fewer than {MIX_EDGES} edges left out, temporal and "
                     "random alike (no 80/20 mix; batches: " + ", ".join(f"{d} {f:g} x{k}" for (d, f), k in cut.items())
                     + ")")
    return Selection(rows[~below], backend, notes, below_mix_only=bool(below.all()) and len(rows) > 0)


def _devices(rows: pd.DataFrame) -> str:
    return "; ".join(sorted(set(rows["device"].astype(str)))) if len(rows) else ""


def counts(rows: pd.DataFrame) -> dict:
    """What an interval rests on: runs (``n``), graphs, batches (graph, size, index) and repeats per batch and
    level (the median)."""
    if rows.empty:
        return {"n": 0, "graphs_n": 0, "batches_n": 0, "repeats_n": 0}
    batch = [c for c in ("dataset", "batch_fraction", "batch_index") if c in rows]
    level = [c for c in ("approach", "backend") if c in rows]
    graphs = {str(d).split("/")[0] for d in rows["dataset"]}  # the ablation's units are graph/approach
    return {"n": len(rows), "graphs_n": len(graphs), "batches_n": len(rows.drop_duplicates(batch)),
            "repeats_n": int(rows.groupby([*batch, *level]).size().median())}


def _row(claim_id, section, claim, paper_value, unit, verdict, basis, *, measured=np.nan, ci=(np.nan, np.nan),
         rows=None, backend="", device="", graphs=(), fractions=(), needed=MIN_GRAPHS) -> dict:
    """One row of the table; an affirming verdict on fewer than ``needed`` graphs reads ``inconclusive``."""
    n = counts(rows if rows is not None else pd.DataFrame())
    verdict, short = enough_graphs(verdict, n["graphs_n"], needed)
    return {"claim_id": claim_id, "section": section, "claim": claim, "paper_value": paper_value,
            "measured": measured, "ci_low": ci[0], "ci_high": ci[1], **n, "unit": unit, "backend": backend,
            "device": device, "graphs": " ".join(map(str, graphs)),
            "fractions": " ".join(f"{f:g}" for f in fractions if f == f and f > 0), "verdict": verdict,
            "basis": basis + (f"; {short}" if short else "")}


def speedup_basis(paper: float, spread: float) -> str:
    """The rule with this claim's numbers: band, too-wide bounds, and the rule itself."""
    low, high = band(paper, spread)
    return (f"P = {paper:g}, s = {spread:.3g}: band [{low:.3g}, {high:.3g}], too wide below "
            f"{min(np.sqrt(paper), low):.3g} or above {max(paper ** 2, high):.3g}; {RULE}")


#: The committed claims table of a GPU run, which the CPU's not-comparable rows point to (the README links it).
GPU_TABLE = "docs/measurements/claims/claims_h100_main_job.csv"
#: The basis of a claim whose every batch is under MIX_EDGES edges: nothing left to compare with the paper's.
BELOW_MIX_ONLY = (f"not comparable: every batch of this claim has fewer than {MIX_EDGES} edges, too few for the "
                  "paper's 80/20 mix, so none is left to measure")


def _not_comparable(verdict: str, backend: str, device: str) -> tuple[str, str]:
    """A GPU speed claim judged on another backend is not comparable (the number is still shown); the note says
    why and what the interval would read."""
    if backend == "gpu" or verdict == "not measured":
        return verdict, ""
    return "not comparable", (f"not comparable: measured on the {backend.upper()} ({device}), the paper's speed "
                              f"claims are GPU claims (the interval would read '{verdict}'); "
                              f"{GPU_TABLE} is what a GPU run says")


def ratio(rows: pd.DataFrame, key: str, slow: str, fast: str, value: str = "time_ms", reduce: str = "mean"):
    """``slow``'s statistic over ``fast``'s: geometric means across graphs per batch size, their ratio, the
    geometric mean over sizes (``reduce="max"``: the largest per-graph ratio instead).

    Returns
    -------
    estimate, (ci_low, ci_high), graphs, fractions
    """
    point, samples, graphs, fractions = bootstrap(rows, key, [slow, fast], value)
    with quiet():
        return _ratio(point, samples, reduce) + (graphs, fractions)


def _largest_log_ratio(logs: np.ndarray) -> np.ndarray:
    """Per replicate the largest per-graph log ratio (levels 0 over 1, mean over batch sizes)."""
    return np.nanmax(np.nanmean(logs[..., 0] - logs[..., 1], axis=-1), axis=-1)


def _ratio(point, samples, reduce):
    if reduce == "max":
        est, reps = _largest_log_ratio(point[None])[0], _largest_log_ratio(samples)
    else:
        est = np.nanmean(np.subtract(*across_graphs(point).T))
        logs = across_graphs(samples)
        reps = np.nanmean(logs[..., 0] - logs[..., 1], axis=-1)
    return float(np.exp(est)), interval(np.exp(reps))


def _speedup_row(spec: Speedup, summary: pd.DataFrame) -> dict:
    sel = select(summary, [spec.experiment], spec.fractions, [spec.slow, spec.fast])
    device = _devices(sel.rows)
    common = dict(backend=sel.backend, device=device, needed=NEEDED_GRAPHS[spec.experiment])
    what = f"{NAMES[spec.slow]} over {NAMES[spec.fast]} runtime, {spec.experiment} batches; "
    notes = "; ".join(sel.notes)
    if sel.rows.empty:
        verdict = "not comparable" if sel.below_mix_only else "not measured"
        why = f"{BELOW_MIX_ONLY} ({sel.backend} run); " if sel.below_mix_only else ""
        return _row(spec.claim_id, spec.section, spec.claim, spec.paper, "x", verdict,
                    why + what + (notes or f"this run has no {spec.experiment} rows at these batch sizes"), **common)
    est, ci, graphs, fractions = ratio(sel.rows, "approach", spec.slow, spec.fast)
    spread = run_spread(sel.rows, "approach", [spec.slow, spec.fast])
    verdict, why = _not_comparable(speedup_verdict(*ci, spec.paper, spread), sel.backend, device)
    return _row(spec.claim_id, spec.section, spec.claim, spec.paper, "x", verdict,
                "; ".join(filter(None, [why, what + speedup_basis(spec.paper, spread), notes])),
                measured=est, ci=ci, rows=sel.rows, graphs=graphs, fractions=fractions, **common)


def ordering(rows: pd.DataFrame, key: str, pairs: Sequence[tuple[str, str]], value: str):
    """Each pair (smaller, larger): the ratio larger / smaller of the paper's statistic with its interval; and
    the weakest pair's ratio (the smallest), with its interval."""
    levels = list(dict.fromkeys(x for pair in pairs for x in pair))
    point, samples, graphs, fractions = bootstrap(rows, key, levels, value)
    at, logs = across_graphs(point), across_graphs(samples)
    each, weakest_reps = [], []
    with quiet():  # a level absent from every graph gives NaN, reported as not measured
        for small, large in pairs:
            i, j = levels.index(small), levels.index(large)
            reps = np.exp(np.nanmean(logs[..., j] - logs[..., i], axis=-1))
            each.append((small, large, float(np.exp(np.nanmean(at[:, j] - at[:, i]))), interval(reps)))
            weakest_reps.append(reps)
    return (each, min(est for _, _, est, _ in each), interval(np.min(weakest_reps, axis=0)), graphs, fractions)


def _ordering_row(claim_id, section, claim, paper_value, sel: Selection, key, pairs, value, *, speed: bool,
                  names=NAMES, what="", needed=CLASS_GRAPHS) -> dict:
    device = _devices(sel.rows)
    common = dict(backend=sel.backend, device=device, needed=needed)
    notes = "; ".join(sel.notes)
    if sel.rows.empty:
        verdict = "not comparable" if sel.below_mix_only else "not measured"
        why = f"{BELOW_MIX_ONLY} ({sel.backend} run); " if sel.below_mix_only else ""
        return _row(claim_id, section, claim, paper_value, "ratio", verdict,
                    why + what + (notes or "this run has no rows for it"), **common)
    each, weakest, ci, graphs, fractions = ordering(sel.rows, key, pairs, value)
    verdict, why = ordering_verdict([c for *_, c in each]), ""
    if speed:
        verdict, why = _not_comparable(verdict, sel.backend, device)
    detail = ", ".join(f"{names.get(s, s)} < {names.get(lg, lg)}: {est:.3g} [{c[0]:.3g}, {c[1]:.3g}]"
                       for s, lg, est, c in each)
    return _row(claim_id, section, claim, paper_value, "ratio", verdict,
                "; ".join(filter(None, [why, f"{what}ratios larger / smaller ({detail}); measured = the weakest; "
                                        + ORDERING_RULE, notes])),
                measured=weakest, ci=ci, rows=sel.rows, graphs=graphs, fractions=fractions, **common)


#: Why DF-P's error can order above Static's on small graphs, and where that is measured (issue 46, item 4).
ERROR_SIZE = ("DF-P < Static is measured against graph size by benchmarks/bench_error_size.py (R-MAT 20 to 24 on the "
              "GPU, docs/claims.md#error-ratio-and-graph-size): the paper's graphs are 1e3 times the embedded ones; ")


def _paper_rows(summary: pd.DataFrame) -> list[dict]:
    rows = [_row("5.2-hornet", "5.2, Fig. 2(b); Table 1", "Static PageRank on the GPU is 31x faster than Hornet's",
                 31.0, "x", "not measured", "needs peers.hornet.program (docs/config.md: peers)"),
            _row("5.2-gunrock", "5.2, Fig. 2(b); Table 1", "Static PageRank on the GPU is 5.9x faster than Gunrock's",
                 5.9, "x", "not measured", "needs peers.gunrock.program (docs/config.md: peers)"),
            _multicore_row(summary), *_largest_graph_rows(summary)]
    rows += [_speedup_row(spec, summary) for spec in SPEEDUPS]
    temporal = select(summary, ["temporal"], TEMPORAL, list(NAMES))
    rows.append(_ordering_row(
        "5.3.1-error-order", "5.3.1, Fig. 3(b)", "DF and DF-P err more than ND and DT but less than Static",
        "ND, DT < DF, DF-P < Static", temporal, "approach",
        [(a, b) for a in ("nd", "dt") for b in ("df", "dfp")] + [("df", "static"), ("dfp", "static")], "l1_error",
        speed=False, what="geometric mean L1 error, temporal batches; " + ERROR_SIZE, needed=NEEDED_GRAPHS["temporal"]))
    random = select(summary, ["random"], RANDOM, list(NAMES))
    rows.append(_ordering_row(
        "5.3.2-error-order", "5.3.2, Fig. 5", "DF-P errs more than ND, DT and DF but less than Static "
        "(up to 1e-4 |E|)", "ND, DT, DF < DF-P < Static", random, "approach",
        [("nd", "dfp"), ("dt", "dfp"), ("df", "dfp"), ("dfp", "static")], "l1_error", speed=False,
        what="geometric mean L1 error, random batches 1e-7 to 1e-4 |E|; " + ERROR_SIZE))
    rows.append(_ordering_row(
        "5.3.2-dt-slower-nd", "5.3.2", "DT is slower than ND on large graphs with random batches", "ND < DT (runtime)",
        select(summary, ["random"], None, ["nd", "dt"]), "approach", [("nd", "dt")], "time_ms", speed=True,
        what="runtime, every random batch size; "))
    return rows


def _multicore_row(summary: pd.DataFrame) -> dict:
    claim = ("5.2-gpu-multicore", "5.2", "Static PageRank on the GPU is 24x faster than on a multicore CPU", 24.0)
    sel = select(summary, ["temporal", "random"], None, ["static"], pick=False)
    if not {"cpu", "gpu"} <= set(sel.rows["backend"]):
        return _row(*claim, "x", "not measured", "needs runs on both backends (compare_backends: true, a GPU "
                    f"machine); this run has {sel.backend or 'no'} runs", backend=sel.backend,
                    device=_devices(sel.rows))
    both = paired(sel.rows, "backend", ["cpu", "gpu"])
    est, ci, graphs, fractions = ratio(both, "backend", "cpu", "gpu")
    spread = run_spread(both, "backend", ["cpu", "gpu"])
    verdict = speedup_verdict(*ci, 24.0, spread)
    notes = "".join(f"; {n}" for n in sel.notes)
    return _row(*claim, "x", verdict,
                "Static runtime, CPU engine (SciPy, this host's cores, not the paper's 64-core code) over GPU, "
                f"every batch size; {speedup_basis(24.0, spread)}{notes}", measured=est, ci=ci,
                rows=both, backend="cpu vs gpu", device=_devices(both), graphs=graphs, fractions=fractions,
                needed=CLASS_GRAPHS)


def _largest_graph_rows(summary: pd.DataFrame) -> list[dict]:
    """The sk-2005 time and rate (5.2), measured on the largest graph of the run's random experiment."""
    claims = (("5.2-sk2005-time", "5.2, Fig. 2(a)", "Static PageRank on sk-2005 takes 4.2 s at tau = 1e-10", 4.2,
               "s", False),
              ("5.2-sk2005-rate", "5.2", "Static PageRank on sk-2005 processes 471 million edges/s", 471e6,
               "edges/s", True))
    sel = select(summary, ["random"], None, ["static"])
    if sel.rows.empty:
        return [_row(i, s, c, p, u, "not measured", "this run has no random-batch Static rows (no static or "
                     "generated graph in config datasets)", backend=sel.backend) for i, s, c, p, u, _ in claims]
    largest = sel.rows.groupby("dataset")["edges"].median().idxmax()
    rows = sel.rows[sel.rows["dataset"] == largest]
    edges = float(rows["edges"].median())
    point, samples, graphs, fractions = bootstrap(rows, "approach", ["static"])
    seconds = np.exp(np.nanmean(point[0, :, 0])) / 1e3
    seconds_reps = np.exp(np.nanmean(samples[:, 0, :, 0], axis=-1)) / 1e3
    spread = run_spread(rows, "approach", ["static"])
    out = []
    for claim_id, section, claim, paper, unit, rate in claims:
        est, reps = (edges / seconds, edges / seconds_reps) if rate else (seconds, seconds_reps)
        ci = interval(reps)
        better = interval(reps / paper if rate else paper / reps)  # 1 = the paper's, above it better
        verdict, why = _not_comparable(level_verdict(*better, spread), sel.backend, _devices(rows))
        if largest != "sk-2005" and verdict != "not measured":
            why = "; ".join([why or f"not comparable (the interval would read '{verdict}')",
                             f"the claim is on sk-2005, this run's largest graph is {largest}"])
            verdict = "not comparable"
        out.append(_row(claim_id, section, claim, paper, unit, verdict,
                        "; ".join(filter(None, [
                            why, f"Static on the run's largest graph ({largest}, {edges:,.0f} edges with self-loops, "
                            "as Table 4 counts them), geometric mean over batch sizes of the mean per-batch median; "
                            f"{'measured' if rate else 'paper'} / {'paper' if rate else 'measured'} "
                            f"[{better[0]:.3g}, {better[1]:.3g}], s = {spread:.3g}; {LEVEL_RULE}; {RULE}",
                            *sel.notes])),
                        measured=est, ci=ci, rows=rows, backend=sel.backend, device=_devices(rows),
                        graphs=graphs, fractions=fractions, needed=NEEDED_GRAPHS["one graph"]))
    return out


def bench_rows(table: pd.DataFrame, key: str) -> pd.DataFrame:
    """A benchmark table in the summary's shape: each graph a dataset of one batch, repeated rows repeats."""
    rows = table.assign(dataset=table["graph"].astype(str), approach=table[key].astype(str))
    if "batch_fraction" not in rows:
        rows = rows.assign(batch_fraction=0.0, batch_index=0)
    return rows.assign(repeat=rows.groupby(["dataset", "batch_fraction", "batch_index", key]).cumcount())


@dataclass(frozen=True)
class BenchSpeedup:
    """A report's speedup of ``fast`` over ``slow`` in a benchmark table."""

    claim_id: str
    section: str
    claim: str
    paper: float
    table: str
    slow: str
    fast: str
    graphs: str = "all"  # all | acyclic | cyclic | small_acyclic
    reduce: str = "mean"


BENCH_SPEEDUPS = (
    BenchSpeedup("R000-pull-vs-push", f"{STATIC_REPORTS}: Complete CUDA Implementation 5.1",
                 "Coalesced pull is 5.7x faster than the naive GPU kernel", 5.7, "static_variants", "push_atomic",
                 "pull_thread"),
    BenchSpeedup("R000-tiled-vs-pull", f"{STATIC_REPORTS}: Complete CUDA Implementation 5.2",
                 "Shared-memory tiling is 1.38x faster than the coalesced pull", 1.38, "static_variants",
                 "pull_thread", "pull_tiled"),
    BenchSpeedup("R000-warp-vs-tiled", f"{STATIC_REPORTS}: Complete CUDA Implementation 6.2",
                 "The warp-optimized (thread/warp at in-degree 32) kernel is 1.16x faster than tiling "
                 "(9,240 -> 7,950 ms at 10K nodes)", 1.16, "static_variants", "pull_tiled", "hybrid_thread_warp"),
    BenchSpeedup("R001-prc", f"{STATIC_REPORTS}: GPU Programming 6.2, Table 6.2",
                 "Precomputed contributions make the pull 1.24x faster (0.200 -> 0.161 s)", 1.24, "static_variants",
                 "partitioned", "partitioned_prc"),
    BenchSpeedup("R002-dense-vs-cpu", f"{KAHN_REPORT} 7.7, Table 9",
                 "Dense GPU Kahn is up to 1.7x faster than the host CPU on acyclic graphs", 1.7, "kahn", "cpu",
                 "dense", "acyclic", "max"),
    BenchSpeedup("R002-dense-vs-cpu-cyclic", f"{KAHN_REPORT} 7.7, Table 9",
                 "On a cyclic graph dense GPU Kahn stops after one level, 69.5x faster than the host CPU "
                 "(156.8 against 10,897 ms)", 69.5, "kahn", "cpu", "dense", "cyclic"),
    BenchSpeedup("R002-dense-vs-csr", f"{KAHN_REPORT} 7.8, Table 10",
                 "On acyclic graphs of 10k-20k vertices dense GPU Kahn is competitive or slightly faster than CSR "
                 "(CSR/dense 1.27, 1.43, 1.08: geometric mean 1.25)", 1.25, "kahn", "levels", "dense",
                 "small_acyclic"),
)


def _bench_graphs(table: pd.DataFrame, which: str) -> pd.DataFrame:
    if which == "all" or "processed" not in table:
        return table
    acyclic = table["processed"] == table["vertices"]
    if which == "cyclic":
        return table[~acyclic]
    return table[acyclic & ((table["vertices"] <= 20000) if which == "small_acyclic" else True)]


def _bench_speedup_row(spec: BenchSpeedup, tables: Mapping[str, pd.DataFrame]) -> dict:
    table = tables.get(spec.table)
    key = "driver" if spec.table == "kahn" else "variant"
    source = f"results/bench/{spec.table}.csv"
    if table is None or table.empty:
        return _row(spec.claim_id, spec.section, spec.claim, spec.paper, "x", "not measured",
                    f"needs {source} (rule bench, backend: gpu)")
    rows = _bench_graphs(table[table[key].isin([spec.slow, spec.fast])], spec.graphs)
    both = rows.groupby("graph")[key].nunique() == 2
    rows = rows[rows["graph"].isin(both[both].index)]
    if rows.empty:
        return _row(spec.claim_id, spec.section, spec.claim, spec.paper, "x", "not measured",
                    f"{source} has no {spec.graphs} graph with both {spec.slow} and {spec.fast}", backend="gpu")
    units = bench_rows(rows, key)
    est, ci, graphs, _ = ratio(units, "approach", spec.slow, spec.fast, reduce=spec.reduce)
    spread = run_spread(units, "approach", [spec.slow, spec.fast])
    verdict = speedup_verdict(*ci, spec.paper, spread)
    stat = "largest per-graph ratio" if spec.reduce == "max" else "geometric mean across graphs"
    return _row(spec.claim_id, spec.section, spec.claim, spec.paper, "x", verdict,
                f"{spec.slow} over {spec.fast} time in {source}, {stat}, interval over graphs; "
                + speedup_basis(spec.paper, spread), measured=est, ci=ci, rows=units, backend="gpu",
                device=_devices(rows), graphs=graphs, needed=NEEDED_GRAPHS["kahn" if spec.table == "kahn" else "bench"])


def _bench_ordering_rows(tables: Mapping[str, pd.DataFrame]) -> list[dict]:
    out = []
    specs = (("R000-order", f"{STATIC_REPORTS}: Complete CUDA Implementation 6.2",
              "Kernel speed: naive < coalesced pull < shared-memory tiling < thread/warp hybrid",
              "push_atomic > pull_thread > pull_tiled > hybrid_thread_warp (time)", "static_variants", "variant",
              [("pull_thread", "push_atomic"), ("pull_tiled", "pull_thread"), ("hybrid_thread_warp", "pull_tiled")]),
             ("4.4-partition-order", "4.4, Fig. 1", "Partition G, G' is the fastest of the three partitioning levels "
              "for DF and DF-P", "G,G' < G' and < none (time)", "partition_ablation", "partition",
              [("in_out", "in"), ("in_out", "none")]))
    for claim_id, section, claim, paper_value, name, key, pairs in specs:
        table = tables.get(name)
        if table is None or table.empty:
            out.append(_row(claim_id, section, claim, paper_value, "ratio", "not measured",
                            f"needs results/bench/{name}.csv (rule bench, backend: gpu)"))
            continue
        if name == "partition_ablation":  # the paper's design, DF and DF-P: each (graph, approach) one unit
            table = table[(table["variant"] == "partitioned") & table["approach"].isin(["df", "dfp"])]
            table = table.assign(graph=table["graph"].astype(str) + "/" + table["approach"].astype(str))
        sel = Selection(bench_rows(table, key), "gpu", [])
        out.append(_ordering_row(claim_id, section, claim, paper_value, sel, "approach", pairs, "time_ms",
                                 speed=True, names={}, what=f"time in results/bench/{name}.csv; ",
                                 needed=NEEDED_GRAPHS["bench"]))
    return out


def evaluate(summary: pd.DataFrame, bench: Mapping[str, pd.DataFrame] | None = None) -> pd.DataFrame:
    """Every claim beside this run's measurement.

    Parameters
    ----------
    summary : DataFrame
        The summary table (:func:`dynpr.evaluation.results.read_csv` of ``results/summary.csv``).
    bench : mapping of str to DataFrame, optional
        ``static_variants``, ``partition_ablation`` and ``kahn`` tables of rule ``bench`` (GPU runs only);
        their claims are ``not measured`` without them.

    Returns
    -------
    DataFrame
        Columns :data:`COLUMNS`, one row per claim.
    """
    tables = dict(bench or {})
    rows = [_converged_row(summary), *_paper_rows(summary)]
    rows += [_bench_speedup_row(spec, tables) for spec in BENCH_SPEEDUPS]
    rows += _bench_ordering_rows(tables)
    table = pd.DataFrame(rows, columns=list(COLUMNS))
    for column in ("measured", "ci_low", "ci_high"):  # 4 significant digits: what the data can say
        table[column] = [float(f"{v:.4g}") for v in table[column].astype(float)]
    return table


def capped_runs(summary: pd.DataFrame) -> int:
    """Runs of the summary that stopped at max_iterations (left out of every claim)."""
    return int((~summary["converged"].astype(bool)).sum())


def _converged_row(summary: pd.DataFrame) -> dict:
    """How many runs stopped at MAX_ITERATIONS before meeting tau: the table says it once, in a row of its own."""
    runs = summary[summary["experiment"].isin(["temporal", "random"])]
    capped = capped_runs(runs)
    where = sorted(set(runs.loc[~runs["converged"].astype(bool), "dataset"]
                       + "/" + runs.loc[~runs["converged"].astype(bool), "approach"]))
    verdict = "not measured" if runs.empty else ("holds" if capped == 0 else "does not hold")
    return _row("5.1.2-converged", "5.1.2", "Every run meets tau = 1e-10 within MAX_ITERATIONS = 500", 0,
                "capped runs", verdict, "runs with converged false, left out of every other row"
                + (f": {', '.join(where)}" if where else "") + "; a count over every run, no interval",
                measured=capped, rows=runs, needed=1,
                backend="+".join(sorted(set(runs["backend"]))), device=_devices(runs),
                graphs=sorted(set(runs["dataset"])))
