"""Figures of the paper's section 5, from the summary table (and benchmark tables).

Every figure function takes a DataFrame and returns a matplotlib ``Figure``;
:func:`save_figure` writes it as PNG and PDF. Runtimes and errors across graphs
are geometric means of each graph's mean (:func:`dynpr.evaluation.results.aggregate`,
paper 5.1.5). How they look (one colour, marker and hatching per approach, fonts,
legends, log ticks) is :mod:`dynpr.evaluation.figure_style`'s.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Iterable

import matplotlib

matplotlib.use("Agg")  # files only: no display on cluster nodes or in CI

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

from dynpr.evaluation.figure_style import (BAND_ALPHA, BELOW_MIX_STYLE, CYCLE, CYCLE_HATCH, CYCLE_MARKER, LINESTYLE,
                                           LOG, MIN_FONT, MIX_EDGES, NO_BENCH, RC, STYLE, approaches_in, band_patch,
                                           coincident_notes, declutter, figure_legend, message_figure, panel_grid,
                                           panel_title, pick_backend, plain_log_ticks, points_with_spread,
                                           speedup_labels, save_figure, to_log_values)  # noqa: E402, F401
from dynpr.designs import BASELINE  # noqa: E402
from dynpr.evaluation.results import aggregate, geometric_mean  # noqa: E402


def temporal_runtime_error(df: pd.DataFrame) -> plt.Figure:
    """Fig. 3 of the paper: runtime and error per batch fraction and per graph, temporal graphs.

    (a) runtime and (b) L1 error per batch fraction, geometric mean across graphs, shaded over
    the range of the graphs' means; (c) each approach's speedup over Static, the same way; (d)
    runtime and (e) error per graph (geometric mean over the batch fractions of each fraction's
    mean, bars from the lowest to the highest fraction's mean).
    """
    t, backend = pick_backend(df[df["experiment"] == "temporal"])
    if t.empty:
        return message_figure("Temporal graphs", "no temporal rows in results/summary.csv — "
                                                  "add a temporal dataset to config 'datasets'")
    approaches = approaches_in(t)
    datasets = list(dict.fromkeys(t["dataset"]))
    by = ["approach", "batch_fraction"]
    with plt.rc_context(RC):
        fig, axes = panel_grid(5, ncols_max=3, size=(4.2, 3.4))
        for ax, value, label in ((axes[0], "time_ms", "runtime (ms)"), (axes[1], "l1_error", "L1 error")):
            notes = _lines(ax, aggregate(t, value, by), approaches, value, band=_range(t, value, by, "graphs"))
            ax.set_xlabel(f"batch size (fraction of |E_T|){LOG}")
            ax.set_ylabel(label + LOG)  # short: the labels of the rows above each other must not meet
            panel_title(ax, ("(a) runtime" if value == "time_ms" else "(b) L1 error vs Static at τ=1e-100")
                        + ", over graphs", notes)
        _speedup_panel(axes[2], t, approaches, "|E_T|")
        axes[2].set_title("(c) speedup vs Static")
        for ax, value, label, letter in ((axes[3], "time_ms", "runtime (ms)", "d"),
                                         (axes[4], "l1_error", "L1 error", "e")):
            _per_graph_points(ax, t, datasets, approaches, value)
            ax.set_ylabel(label + LOG)
            ax.set_title(f"({letter}) {'runtime' if value == 'time_ms' else 'rank error'} per graph, "
                         "mean over batch sizes")
        figure_legend(fig, approaches,
                      extra=[band_patch("range over graphs (a–c); whiskers (d, e): range over batch sizes")])
        fig.suptitle(f"Temporal graphs, {backend.upper()} ({len(datasets)} graphs)", y=1.05)
        fig.tight_layout()
    return fig


def _range(rows: pd.DataFrame, value: str, by: list[str], over: str) -> pd.DataFrame:
    """Per ``by`` the lowest and highest graph mean (``over="graphs"``) or batch median (``"batches"``)."""
    per_batch = rows.groupby(["dataset", *by, "batch_index"])[value].median()
    points = per_batch.groupby(["dataset", *by]).mean() if over == "graphs" else per_batch
    return points.groupby(by).agg(low="min", high="max").reset_index()


def _speedups(rows: pd.DataFrame) -> pd.DataFrame:
    """Per approach and batch fraction each graph's speedup over Static (ratio of the graphs' means): their
    geometric mean, lowest and highest."""
    per_batch = rows.groupby(["dataset", "approach", "batch_fraction", "batch_index"])["time_ms"].median()
    per_graph = per_batch.groupby(["dataset", "approach", "batch_fraction"]).mean().unstack("approach")
    ratio = per_graph.rdiv(per_graph[BASELINE], axis=0).drop(columns=BASELINE)
    long = ratio.stack().rename("speedup").reset_index()
    return long.groupby(["approach", "batch_fraction"])["speedup"].agg(
        speedup=geometric_mean, low="min", high="max").reset_index()


def _speedup_panel(ax, rows: pd.DataFrame, approaches, edges: str) -> None:
    """Each approach's speedup over Static per batch fraction: geometric mean over graphs, the graphs' range
    shaded, 1 (no speedup) drawn."""
    table = _speedups(rows)
    others = [a for a in approaches if a != BASELINE]
    _lines(ax, table.rename(columns={"speedup": "time_ms"}), others, "time_ms", band=table)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xlabel(f"batch size (fraction of {edges}){LOG}")
    ax.set_ylabel(f"speedup: Static's runtime / its{LOG}")


def _per_graph_points(ax, rows: pd.DataFrame, datasets, approaches, value: str) -> None:
    """Per graph and approach a point (geometric mean over batch fractions of each fraction's mean) with a bar
    from the lowest to the highest fraction's mean; approaches side by side."""
    per_batch = rows.groupby(["dataset", "approach", "batch_fraction", "batch_index"])[value].median()
    per_fraction = per_batch.groupby(["dataset", "approach", "batch_fraction"]).mean()
    grouped = per_fraction.groupby(["dataset", "approach"])
    table = pd.DataFrame({"mid": grouped.agg(geometric_mean), "low": grouped.min(), "high": grouped.max()})
    x = np.arange(len(datasets))
    for j, a in enumerate(approaches):
        sel = table.xs(a, level="approach").reindex(datasets)
        points_with_spread(ax, x + (j - (len(approaches) - 1) / 2) * 0.13, sel, STYLE[a][1], STYLE[a][2], size=4)
    ax.set_xticks(x, datasets, rotation=20)
    ax.set_yscale("log")
    plain_log_ticks(ax)



def _lines(ax, table: pd.DataFrame, approaches, value: str, speedup=(), label_suffix="", band=None) -> list[str]:
    """One line per approach over batch fractions (log-log), with its ``band`` (columns ``low, high`` per
    approach and batch fraction) shaded; the approaches in ``speedup`` get their speedup over Static
    written at each point. Returns notes on coincident lines, for the panel title."""
    drawn = {}
    for a in approaches:
        rows = table[table["approach"] == a].sort_values("batch_fraction")
        y = to_log_values(rows[value].to_numpy())
        drawn[STYLE[a][0]] = y
        ax.plot(rows["batch_fraction"], y, linestyle=LINESTYLE[a], color=STYLE[a][1], marker=STYLE[a][2],
                markersize=4, label=STYLE[a][0] + label_suffix)
        if band is not None:
            spread = band[band["approach"] == a].sort_values("batch_fraction")
            ax.fill_between(spread["batch_fraction"], to_log_values(spread["low"].to_numpy()),
                            to_log_values(spread["high"].to_numpy()), color=STYLE[a][1], alpha=BAND_ALPHA,
                            linewidth=0)
    wide = table.pivot(index="batch_fraction", columns="approach", values=value)
    for a in [a for a in approaches if a in speedup and a != BASELINE]:  # after every line: labels avoid them all
        at = wide[a].dropna()
        speedup_labels(ax, at.index, to_log_values(at.to_numpy()), (wide[BASELINE].reindex(at.index) / at).to_numpy(),
                       STYLE[a][1] if len(speedup) > 1 else "black", wide.drop(columns=a).reindex(at.index).to_numpy().T)
    ax.set_xscale("log")
    ax.set_yscale("log")
    if speedup:  # room for the labels above the highest point, below the lowest and beside the outermost ones
        ax.margins(x=0.08)
        low, high = ax.get_ylim()
        ax.set_ylim(low / 2, high * 2)
    plain_log_ticks(ax)
    plain_log_ticks(ax, "x", minor_labels=False)  # a decade apart at most: minor labels would run into each other
    return coincident_notes(drawn)


def _below_mix(rows: pd.DataFrame) -> dict[str, list[float]]:
    """Per dataset the random batch sizes whose batches have fewer than MIX_EDGES edges (no 80/20 mix)."""
    rows = rows[rows["experiment"] == "random"]
    size = (rows["insertions"] + rows["deletions"]).groupby([rows["dataset"], rows["batch_fraction"]]).max()
    small = size[size < MIX_EDGES].reset_index()
    return {d: sorted(small.loc[small["dataset"] == d, "batch_fraction"]) for d in dict.fromkeys(rows["dataset"])}


def _shade_below_mix(ax, fractions) -> None:
    """Grey out batch sizes whose batches cannot hold the 80/20 mix (a decade wide on the log x axis)."""
    for f in fractions:
        ax.axvspan(f / 10 ** 0.5, f * 10 ** 0.5, **BELOW_MIX_STYLE)



def _random_figure(df: pd.DataFrame, value: str, ylabel: str, title: str) -> plt.Figure:
    r, backend = pick_backend(df[df["experiment"] == "random"])
    if r.empty:
        return message_figure(title, "no random-batch rows in results/summary.csv — "
                                      "add a static dataset to config 'datasets'")
    approaches = approaches_in(r)
    datasets = list(dict.fromkeys(r["dataset"]))
    speedup = value == "time_ms"
    below = _below_mix(r)
    below_any = sorted({f for fs in below.values() for f in fs})
    with plt.rc_context(RC):
        by = ["approach", "batch_fraction"]
        overall = 1 + speedup  # the paper's Fig. 4 gives every approach's speedup: a panel of its own, no labels
        fig, axes = panel_grid(overall + len(datasets), ncols_max=3, size=(4.2, 3.4))
        notes = _lines(axes[0], aggregate(r, value, by), approaches, value, band=_range(r, value, by, "graphs"))
        _shade_below_mix(axes[0], below_any)
        panel_title(axes[0], "all graphs (geometric mean)", notes)
        for ax, d in zip(axes[overall:], datasets):
            rows = r[r["dataset"] == d]
            _shade_below_mix(ax, below[d])
            panel_title(ax, d, _lines(ax, aggregate(rows, value, by), approaches, value,
                                      band=_range(rows, value, by, "batches")))
        for ax in axes:
            ax.set_xlabel(f"batch size (fraction of |E|){LOG}")
            ax.set_ylabel(ylabel + LOG)
        if speedup:
            _speedup_panel(axes[1], r, approaches, "|E|")
            _shade_below_mix(axes[1], below_any)
            axes[1].set_title("all graphs: speedup vs Static")
        extra = [band_patch("range over graphs (all graphs), over batches (each graph)")]
        extra += [Patch(label=f"< {MIX_EDGES} edges: no 80/20 mix", **BELOW_MIX_STYLE)] if below_any else []
        figure_legend(fig, approaches, extra=extra)
        mix = "80% insertions, 20% deletions"
        if below_any:
            mix += f"; at {', '.join(f'{f:g}' for f in below_any)} |E| fewer than {MIX_EDGES} edges (shaded)"
        fig.suptitle(f"{title}, {backend.upper()}, random batches ({mix})", y=1.06)
        fig.tight_layout()
    return fig


def random_runtime(df: pd.DataFrame) -> plt.Figure:
    """Fig. 4 of the paper: runtime vs batch fraction on static graphs with random batches."""
    return _random_figure(df, "time_ms", "runtime (ms)", "Runtime")


def random_error(df: pd.DataFrame) -> plt.Figure:
    """Fig. 5 of the paper: L1 rank error vs batch fraction on static graphs with random batches."""
    return _random_figure(df, "l1_error", "L1 error vs reference", "Rank error")


def temporal_per_batch(df: pd.DataFrame, dataset: str) -> plt.Figure:
    """Fig. 9–13 of the paper: runtime and error on each consecutive batch of one temporal graph."""
    t, backend = pick_backend(df[(df["experiment"] == "temporal") & (df["dataset"] == dataset)])
    if t.empty:
        return message_figure(dataset, f"no temporal rows for {dataset} in results/summary.csv")
    approaches = approaches_in(t)
    fractions = sorted(t["batch_fraction"].unique())
    grouped = t.groupby(["batch_fraction", "approach", "batch_index"])[["time_ms", "l1_error"]]
    means = grouped.median().reset_index()
    lows, highs = grouped.min().reset_index(), grouped.max().reset_index()
    # batches with no new edge (all dropped as duplicates or present already): the approaches
    # have nothing to do there, so runtimes fall off a cliff that a reader should not decode
    updates = (t["insertions"] + t["deletions"]).groupby([t["batch_fraction"], t["batch_index"]]).max()
    empty_style = {"color": "#999999", "alpha": 0.25, "hatch": "..", "linewidth": 0}
    any_empty = False
    with plt.rc_context(RC):
        fig, axes = plt.subplots(len(fractions), 2, figsize=(10, 2.8 * len(fractions)), squeeze=False)
        for row, f in zip(axes, fractions):
            empty = updates.xs(f, level="batch_fraction")
            empty = empty.index[empty == 0].to_numpy() + 1
            any_empty |= bool(empty.size)
            for ax, value, label in zip(row, ("time_ms", "l1_error"), ("runtime (ms)", "L1 error")):
                drawn = {}
                for a in approaches:
                    at = (means["batch_fraction"] == f) & (means["approach"] == a)
                    sel = means[at]
                    y = to_log_values(sel[value].to_numpy())
                    drawn[STYLE[a][0]] = y
                    ax.plot(sel["batch_index"] + 1, y, color=STYLE[a][1], marker=STYLE[a][2], markersize=3,
                            linewidth=1, linestyle=LINESTYLE[a])
                    ax.fill_between(sel["batch_index"] + 1, to_log_values(lows.loc[at, value].to_numpy()),
                                    to_log_values(highs.loc[at, value].to_numpy()), color=STYLE[a][1],
                                    alpha=BAND_ALPHA, linewidth=0)
                for b in empty:
                    ax.axvspan(b - 0.5, b + 0.5, **empty_style)
                ax.set_yscale("log")
                plain_log_ticks(ax)
                ax.xaxis.get_major_locator().set_params(integer=True)
                ax.set_ylabel(label + LOG)
                notes = coincident_notes(drawn)
                if empty.size:
                    notes.append(f"{empty.size} of {len(updates.xs(f, level='batch_fraction'))} batches add no new edge")
                panel_title(ax, f"batch size {f:g}·|E_T|", notes)
        for ax in axes[-1]:
            ax.set_xlabel("batch update (consecutive)")
        extra = [band_patch("range over the timed repeats")]
        extra += [Patch(label="batch with no new edge", **empty_style)] if any_empty else []
        figure_legend(fig, approaches, extra=extra)
        fig.suptitle(f"{dataset}: runtime and rank error per batch, {backend.upper()}", y=1.03)
        fig.tight_layout()
    return fig


def gpu_vs_cpu(df: pd.DataFrame) -> plt.Figure:
    """Fig. 6–8 of the paper: runtime and error of each approach per backend (geometric means).

    One row of panels per backend that has rows; a note on the figure says so
    when only one backend has results.
    """
    rows = df[df["experiment"].isin(["temporal", "random"])]
    backends = [b for b in ("gpu", "cpu") if b in set(rows["backend"])]
    if not backends:
        return message_figure("GPU vs CPU", "no temporal or random rows in results/summary.csv")
    experiments = [e for e in ("temporal", "random") if e in set(rows["experiment"])]
    approaches = approaches_in(rows)
    panels = [(e, v) for e in experiments for v in ("time_ms", "l1_error")]
    with plt.rc_context(RC):
        fig, axes = plt.subplots(len(backends), len(panels), figsize=(3.6 * len(panels), 3.1 * len(backends)),
                                 squeeze=False)
        for i, b in enumerate(backends):
            for ax, (e, v) in zip(axes[i], panels):
                sel = rows[(rows["backend"] == b) & (rows["experiment"] == e)]
                notes = _lines(ax, aggregate(sel, v, ["approach", "batch_fraction"]), approaches, v,
                               speedup=("dfp",) if v == "time_ms" else (),
                               band=_range(sel, v, ["approach", "batch_fraction"], "graphs"))
                _shade_below_mix(ax, sorted({f for fs in _below_mix(sel).values() for f in fs}))
                panel_title(ax, f"{b.upper()}: {e} graphs, {'runtime' if v == 'time_ms' else 'L1 error'}", notes)
                ax.set_xlabel(f"batch size (fraction of |E_T| or |E|){LOG}")
                ax.set_ylabel(("runtime (ms)" if v == "time_ms" else "L1 error") + LOG)
        figure_legend(fig, approaches, extra=[band_patch("range over graphs")])
        title = "GPU vs CPU (geometric mean over graphs; DF-P speedup vs Static labelled)"
        if len(backends) == 1:
            other = "gpu" if backends[0] == "cpu" else "cpu"
            title += (f"\nonly {backends[0].upper()} rows in results/summary.csv: run `snakemake figures --config compare_backends=True` "
                      f"(adds {other.upper()} runs; needs a GPU) to compare")
        fig.suptitle(title, y=1.08 if len(backends) == 1 else 1.04)
        fig.tight_layout()
    return fig


def kahn(df: pd.DataFrame) -> plt.Figure:
    """Kahn's algorithm: runtime and levels per graph, per backend.

    The algorithm of the report *CUDA-Based Cycle Detection in Directed Graphs
    Using Kahn's Algorithm*, level-synchronous on CSR.
    """
    k = df[df["experiment"] == "kahn"]
    if k.empty:
        return message_figure("Kahn", "no kahn rows in results/summary.csv")
    means = k.groupby(["dataset", "backend"], sort=False).agg(
        mid=("time_ms", "median"), low=("time_ms", "min"), high=("time_ms", "max"),
        levels=("iterations", "max"), processed=("affected", "max"), vertices=("vertices", "max")).reset_index()
    datasets = list(dict.fromkeys(means["dataset"]))
    backends = list(dict.fromkeys(means["backend"]))
    width = 0.8 / len(backends)
    x = np.arange(len(datasets))
    with plt.rc_context(RC):
        fig, axes = plt.subplots(1, 2, figsize=(10, 4))
        for j, b in enumerate(backends):
            sel = means[means["backend"] == b].set_index("dataset").reindex(datasets)
            pos = x - 0.4 + width * (j + 0.5)
            points_with_spread(axes[0], pos, sel, CYCLE[j], CYCLE_MARKER[j], f"{b.upper()} (whisker: range over "
                               "repeats)", size=6)
            axes[1].bar(pos, sel["levels"].to_numpy(), width, color=CYCLE[j], hatch=CYCLE_HATCH[j], edgecolor="black",
                        linewidth=0.4, label=b.upper())
            for p, (_, r) in zip(pos, sel.iterrows()):
                done = r["processed"] / r["vertices"] if r["vertices"] else math.nan
                note = "DAG" if r["processed"] == r["vertices"] else f"cyclic\n{100 * done:.0f}% processed"
                if r["levels"] == 0:  # no bar to see: say why
                    note = "0 levels:\nno vertex\nwithout in-edges"
                axes[1].text(p, r["levels"], note, ha="center", va="bottom", fontsize=MIN_FONT)
        for ax, label in zip(axes, (f"runtime (ms){LOG}", "levels")):
            ax.set_xticks(x, datasets, rotation=20)
            ax.set_ylabel(label)
            ax.legend()
        axes[0].set_yscale("log")
        plain_log_ticks(axes[0])
        low, high = np.nanmin(means["low"].to_numpy()), np.nanmax(means["high"].to_numpy())
        axes[0].set_ylim(10 ** np.floor(np.log10(low)), 10 ** np.ceil(np.log10(high)))  # labelled decades at both ends
        axes[1].margins(y=0.35)  # room for the notes above the bars
        axes[1].yaxis.get_major_locator().set_params(integer=True)
        axes[0].set_title("Kahn runtime (graph without self-loops)")
        axes[1].set_title("levels until the frontier empties")
        fig.tight_layout()
        declutter(axes[1])
    return fig


def read_bench(paths: Iterable[str | Path]) -> pd.DataFrame:
    """All benchmark tables (``results/bench/*.csv``) concatenated; empty when there are none."""
    frames = [pd.read_csv(p) for p in paths]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def _bench_rows(bench: pd.DataFrame, name: str) -> pd.DataFrame:
    """Rows of benchmark ``name`` (column ``benchmark``) with a runtime."""
    if bench.empty or "benchmark" not in bench.columns or "time_ms" not in bench.columns:
        return pd.DataFrame()
    return bench[bench["benchmark"] == name]


def _bench_spread(rows: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Per ``keys`` the median runtime and the fastest and slowest repeat (``time_min_ms``, ``time_max_ms``;
    tables from before those columns: the rows' own range), with ``vertices`` and ``levels`` where present."""
    low = rows["time_min_ms"] if "time_min_ms" in rows.columns else rows["time_ms"]
    high = rows["time_max_ms"] if "time_max_ms" in rows.columns else rows["time_ms"]
    rows = rows.assign(low=low.fillna(rows["time_ms"]), high=high.fillna(rows["time_ms"]))
    extra = {c: (c, "max") for c in ("vertices", "levels") if c in rows.columns}
    return rows.groupby(keys, sort=False).agg(mid=("time_ms", "median"), low=("low", "min"), high=("high", "max"),
                                              **extra).reset_index()


def _with_geometric_mean(per_graph: pd.DataFrame) -> pd.DataFrame:
    """``mid, low, high`` per graph, then the geometric mean of ``mid`` over the graphs: a point without a
    whisker (it has no repeats of its own)."""
    mean = geometric_mean(per_graph["mid"].dropna())
    return pd.concat([per_graph[["mid", "low", "high"]], pd.DataFrame({"mid": [mean], "low": mean, "high": mean})])


def static_comparison(bench: pd.DataFrame) -> plt.Figure:
    """Analogue of Fig. 2 of the paper: Static PageRank runtime per graph for each implementation.

    Reads benchmark rows with ``benchmark == "static_comparison"`` and columns
    ``dataset``, ``variant`` (implementation or kernel design), ``backend`` and
    ``time_ms``; says so on the figure when there are none.
    """
    rows = _bench_rows(bench, "static_comparison")
    if rows.empty:
        return message_figure("Static PageRank: implementations compared", NO_BENCH)
    rows = rows.assign(impl=rows["backend"].astype(str).str.upper() + " " + rows["variant"].fillna("").astype(str))
    table = _bench_spread(rows, ["dataset", "impl"])
    datasets = list(dict.fromkeys(table["dataset"]))
    impls = list(dict.fromkeys(table["impl"]))
    width = 0.8 / len(impls)
    x = np.arange(len(datasets) + 1)
    with plt.rc_context(RC):
        fig, ax = plt.subplots(figsize=(max(6, len(x) * max(1.2, 0.09 * len(impls))), 3.6))  # room per point
        for j, impl in enumerate(impls):
            sel = _with_geometric_mean(table[table["impl"] == impl].set_index("dataset").reindex(datasets))
            # colour and marker cycles of different lengths: every implementation keeps its own pair
            points_with_spread(ax, x - 0.4 + width * (j + 0.5), sel, CYCLE[j % len(CYCLE)],
                               CYCLE_MARKER[j % len(CYCLE_MARKER)], label=impl)
        ax.set_xticks(x, datasets + ["geometric mean"], rotation=20)
        ax.set_yscale("log")
        plain_log_ticks(ax)
        ax.set_ylabel(f"runtime (ms){LOG}")
        ax.set_title("Static PageRank runtime per graph (point: median; whisker: fastest to slowest repeat)")
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), borderaxespad=0)  # beside the points, not on them
        fig.tight_layout()
    return fig


def partition_ablation(bench: pd.DataFrame) -> plt.Figure:
    """Analogue of Fig. 1 of the paper: runtime of each approach under each work partitioning.

    Reads benchmark rows with ``benchmark == "partition_ablation"`` and columns
    ``dataset``, ``approach``, ``partition`` (none, in, in_out), ``time_ms`` and
    optionally ``variant`` (kernel design; one group of bars per approach and
    variant). Runtime is relative to the slowest partitioning of each approach
    and variant on each graph, then geometric-meaned across graphs (whiskers: the graphs' range).
    """
    rows = _bench_rows(bench, "partition_ablation")
    if rows.empty or "partition" not in rows.columns:
        return message_figure("Work partitioning", NO_BENCH)
    rows = rows.assign(variant=rows["variant"].fillna("").astype(str) if "variant" in rows.columns else "")
    keys = ["approach", "variant"]
    means = rows.groupby(["dataset", *keys, "partition"])["time_ms"].mean().reset_index()
    means["relative"] = means["time_ms"] / means.groupby(["dataset", *keys])["time_ms"].transform("max")
    rel = means.groupby([*keys, "partition"])["relative"].agg(relative=geometric_mean, low="min", high="max")
    rel = rel.reset_index()
    partitions = [p for p in ("none", "in", "in_out") if p in set(rel["partition"])]
    names = {"none": "no partition", "in": "partition G'", "in_out": "partition G, G'"}
    order = {a: i for i, a in enumerate(STYLE)}
    groups = sorted({(a, v) for a, v in zip(rel["approach"], rel["variant"])},
                    key=lambda g: (order.get(g[0], len(order)), g[1]))
    labels = [STYLE.get(a, (a,))[0] + (f"\n{v}" if v else "") for a, v in groups]
    table = rel.set_index([*keys, "partition"])
    width = 0.8 / len(partitions)
    x = np.arange(len(groups))
    with plt.rc_context(RC):
        fig, ax = plt.subplots(figsize=(max(6, 0.9 * len(groups) + 2), 3.6))
        for j, p in enumerate(partitions):
            sel = table.reindex([(a, v, p) for a, v in groups])
            heights = sel["relative"].to_numpy()
            ax.bar(x - 0.4 + width * (j + 0.5), heights, width, color=CYCLE[j], hatch=CYCLE_HATCH[j],
                   edgecolor="black", linewidth=0.4, label=names[p], capsize=2, error_kw={"linewidth": 0.9},
                   yerr=np.abs(np.vstack([heights - sel["low"].to_numpy(), sel["high"].to_numpy() - heights])))
        ax.set_xticks(x, labels)
        ax.set_ylabel("relative runtime (geometric mean)")
        ax.set_title("Work partitioning on the GPU (1 = slowest choice; whisker: range over graphs)")
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), borderaxespad=0)  # beside the bars, not on them
        fig.tight_layout()
    return fig


#: Kahn driver (kahn.csv) -> (label, colour, marker, line style): a marker and a line style each, for grey print
KAHN_DRIVERS = {
    "cpu": ("CPU, CSR", "#000000", "o", "-"),
    "levels": ("GPU levels, CSR", CYCLE[0], "s", "-"),
    "persistent": ("GPU persistent, CSR", CYCLE[1], "^", ":"),
    "two_phase": ("GPU two-phase removal, CSR", CYCLE[2], "P", "-"),
    "host_removal": ("GPU + host removal, CSR", CYCLE[4], "X", ":"),
    "dense": ("GPU dense matrix", CYCLE[5], "D", "--"),
    "dense_shared": ("GPU dense, shared memory", CYCLE[3], "v", "-."),
}
#: The Kahn report's graphs in kahn.csv (dynpr.generate.random_dag.report_name): kind and size in the name
REPORT_GRAPH = r"^(cyclic|acyclic)-"


def _kahn_style(driver: str, j: int) -> tuple[str, str, str, str]:
    """A driver's look: :data:`KAHN_DRIVERS`, or the j-th colour of the cycle for one not declared there."""
    return KAHN_DRIVERS.get(driver, (driver, CYCLE[j % len(CYCLE)], "x", "-."))


def kahn_bench(bench: pd.DataFrame) -> plt.Figure:
    """Kahn's algorithm per driver from ``results/bench/kahn.csv`` (rows with ``benchmark == "kahn"``).

    One panel per kind of the report's graphs (random cyclic, upper-triangular acyclic): runtime
    against vertices, a line per driver (CPU against GPU, the dense matrix against CSR); a last
    panel: the other graphs (random DAGs, the bench graphs), a point per driver. Points are medians of the
    repeats, whiskers span the fastest to the slowest. Says so when there are no rows.
    """
    rows = _bench_rows(bench, "kahn")
    if rows.empty or "driver" not in rows.columns:
        return message_figure("Kahn's algorithm per driver", NO_BENCH)
    means = _bench_spread(rows, ["dataset", "driver"])
    drivers = [d for d in KAHN_DRIVERS if d in set(means["driver"])]
    drivers += [d for d in dict.fromkeys(means["driver"]) if d not in KAHN_DRIVERS]
    kind = means["dataset"].str.extract(REPORT_GRAPH, expand=False)
    kinds = [k for k in ("acyclic", "cyclic") if (kind == k).any()]
    others = means[kind.isna()]
    panels = len(kinds) + (not others.empty)
    titles = {"acyclic": "upper-triangular acyclic (the report's)", "cyclic": "random cyclic (the report's)"}
    with plt.rc_context(RC):
        fig, axes = plt.subplots(1, panels, figsize=(4.2 * panels, 3.6), squeeze=False)
        axes = list(axes[0])
        for ax, k in zip(axes, kinds):
            table = means[kind == k]
            for j, d in enumerate(drivers):
                sel = table[table["driver"] == d].sort_values("vertices")
                if sel.empty:
                    continue
                label, colour, marker, line = _kahn_style(d, j)
                points_with_spread(ax, sel["vertices"], sel, colour, marker, label=label, linestyle=line)
            ax.set_yscale("log")
            plain_log_ticks(ax)
            ax.set_xlabel("vertices")
            ax.set_ylabel(f"runtime (ms){LOG}")
            levels = table.groupby("vertices")["levels"].max()
            ax.set_title(f"{titles[k]}\nlevels: " + ", ".join(f"{lv:,.0f}" for lv in levels))  # float once tables join
        if not others.empty:
            ax = axes[-1]
            graphs = list(dict.fromkeys(others["dataset"]))
            present = [d for d in drivers if d in set(others["driver"])]
            width, x = 0.8 / len(present), np.arange(len(graphs))
            for j, d in enumerate(present):
                label, colour, marker, _ = _kahn_style(d, drivers.index(d))
                sel = others[others["driver"] == d].set_index("dataset").reindex(graphs)
                points_with_spread(ax, x - 0.4 + width * (j + 0.5), sel, colour, marker, label=label)
            ax.set_xticks(x, graphs, rotation=20)
            ax.set_yscale("log")
            plain_log_ticks(ax)
            ax.set_ylabel(f"runtime (ms){LOG}")
            ax.set_title("random DAGs and the bench graphs (CSR)")
            ax.set_ylim(top=ax.get_ylim()[1] * 30)  # headroom for the legend above the points
            ax.legend(loc="upper right")
        if kinds:  # one legend for the line panels, below them, off the lines
            fig.legend(*axes[0].get_legend_handles_labels(), loc="lower center", ncol=min(len(drivers), 4))
        fig.suptitle("Kahn's algorithm per driver (point: median of the repeats; whisker: fastest to slowest)")
        fig.tight_layout(rect=(0, 0.16 if kinds else 0, 1, 1))
    return fig


#: figure name -> function of the summary DataFrame (temporal_per_batch also takes the dataset)
SUMMARY_FIGURES = {
    "temporal_runtime_error": temporal_runtime_error,
    "random_runtime": random_runtime,
    "random_error": random_error,
    "gpu_vs_cpu": gpu_vs_cpu,
    "kahn": kahn,
    "temporal_per_batch": temporal_per_batch,
}
#: figure name -> function of the benchmark DataFrame
BENCH_FIGURES = {"static_comparison": static_comparison, "partition_ablation": partition_ablation,
                 "kahn_bench": kahn_bench}


def peers_static(peers: pd.DataFrame) -> plt.Figure:
    """Analogue of Fig. 2(b) of the paper: Static PageRank runtime per graph of dynpr and every peer, total (left)
    and per iteration (right), each peer's point labelled with dynpr's speedup over it.

    Reads the peers tables (``results/peers/*.csv``: columns ``dataset``, ``peer``, ``backend``, ``time_ms``,
    ``ms_per_iteration``): the median over repeats per graph with a whisker from the fastest to the slowest
    repeat; the geometric mean across graphs last.
    """
    if peers.empty:
        return message_figure("Static PageRank beside its peers", "no peers rows yet: add a `peers` section to the "
                              "config (docs/config.md)")
    names = ["dynpr"] + sorted(set(peers["peer"].astype(str)) - {"dynpr"})
    datasets = list(dict.fromkeys(peers["dataset"].astype(str)))
    width, x = 0.8 / len(names), np.arange(len(datasets) + 1)
    backend = "+".join(sorted(set(peers.loc[peers["peer"] == "dynpr", "backend"].astype(str)))).upper()
    with plt.rc_context(RC):
        fig, axes = plt.subplots(1, 2, figsize=(max(8, 2.2 * len(x)), 3.8))
        for ax, value, label in zip(axes, ("time_ms", "ms_per_iteration"), ("runtime (ms)", "runtime per iteration (ms)")):
            stats = peers.groupby(["dataset", "peer"])[value].agg(mid="median", low="min", high="max").unstack("peer")
            stats = stats.reindex(index=datasets, columns=pd.MultiIndex.from_product([["mid", "low", "high"], names]))
            ours = _with_geometric_mean(stats.xs("dynpr", axis=1, level=1))["mid"].to_numpy()
            for j, name in enumerate(names):
                spread = _with_geometric_mean(stats.xs(name, axis=1, level=1))
                pos = x - 0.4 + width * (j + 0.5)
                points_with_spread(ax, pos, spread, CYCLE[j % len(CYCLE)], CYCLE_MARKER[j % len(CYCLE_MARKER)], name)
                with np.errstate(divide="ignore", invalid="ignore"):
                    speedups = spread["mid"].to_numpy() / ours
                for p, top, v in zip(pos, spread["high"], speedups):  # dynpr's speedup over a peer, above its whisker
                    if name != "dynpr" and np.isfinite(v) and top > 0:
                        ax.text(p, top * 1.15, f"{v:.2g}x", rotation=90, ha="center", va="bottom", fontsize=MIN_FONT)
            ax.set_xticks(x, datasets + ["geometric mean"], rotation=20)
            ax.set_yscale("log")
            plain_log_ticks(ax)
            ax.set_ylabel(f"{label}{LOG}")
        axes[0].set_title(f"Static PageRank, total (dynpr on {backend})")
        axes[1].set_title("per iteration (labels: dynpr's speedup)")
        axes[1].legend(title="whisker: fastest to slowest repeat", loc="upper left", bbox_to_anchor=(1.01, 1),
                       borderaxespad=0)
        fig.tight_layout()
        for ax in axes:
            declutter(ax)
    return fig


#: figure name -> function of the peers tables (rule plot_peers)
PEER_FIGURES = {"peers_static": peers_static}
