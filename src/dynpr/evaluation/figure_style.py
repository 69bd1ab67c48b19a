"""How every figure looks: one colour, marker, hatching and line style per approach (from
:data:`dynpr.designs.APPROACH`), the palette of other bars, fonts, legends, log ticks, label
placement, and :func:`save_figure`. Colours are the Okabe–Ito palette, so every figure reads
the same way, also in grey print (tests render bar figures to grey and compare the series).
Text is at least 8 pt at the saved size; log axes label ticks as plain numbers.
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
from matplotlib import patheffects  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402
from matplotlib.text import Annotation  # noqa: E402
from matplotlib.ticker import LogFormatter, NullFormatter  # noqa: E402

from dynpr.graph.atomic_files import atomic_path  # noqa: E402
from dynpr.designs import APPROACH  # noqa: E402

#: approach code -> (label, Okabe–Ito colour, marker)
STYLE = {a.code: (a.label, a.colour, a.marker) for a in APPROACH.values()}
#: approach code -> line style: in grey print ND and DT (and DF and DF-P) differ by dash as well as marker
LINESTYLE = {a.code: a.linestyle for a in APPROACH.values()}
#: the smallest random batch that holds the 80/20 mix (dynpr.evaluation.claims.MIX_EDGES)
MIX_EDGES = 5
LOG = " (log scale)"
#: colours for bars that are not approaches (backends, kernel variants, partitionings):
#: Okabe–Ito plus a neutral grey, enough for every GPU kernel variant; CYCLE_HATCH[j]
#: patterns the j-th so that neighbours differ in grey print too
CYCLE = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000", "#999999"]
CYCLE_HATCH = ["", "////", "...", "xxx", "\\\\", "ooo", "---", "", "+++"]
#: markers for points that are not approaches; a length prime to CYCLE's, so (colour, marker) pairs repeat
#: only after 63 series
CYCLE_MARKER = ["o", "s", "^", "D", "v", "P", "X"]
#: opacity of the shaded spread (range over graphs, batches or repeats) around a line
BAND_ALPHA = 0.15
#: random batch sizes too small for the 80/20 mix, greyed out
BELOW_MIX_STYLE = {"color": "#999999", "alpha": 0.2, "hatch": "..", "linewidth": 0}
DPI = 200
#: smallest text anywhere (pt, at the saved size)
MIN_FONT = 8
RC = {"font.size": 9, "axes.titlesize": 9, "axes.labelsize": 9, "legend.fontsize": 8,
      "xtick.labelsize": 8, "ytick.labelsize": 8, "axes.grid": True, "grid.alpha": 0.3,
      "hatch.linewidth": 0.6}
NO_BENCH = "no benchmark rows yet — run `snakemake bench`, then `snakemake figures`"


def save_figure(fig: plt.Figure, png: str | Path, pdf: str | Path) -> None:
    """Write ``fig`` as PNG (``DPI``) and PDF, each atomically, then close it.

    Creation dates are left out of the metadata so reruns give identical files.
    """
    for path, fmt, meta in ((png, "png", {"Software": None}), (pdf, "pdf", {"CreationDate": None})):
        with atomic_path(path) as tmp:
            fig.savefig(tmp, format=fmt, dpi=DPI, bbox_inches="tight", metadata=meta)
    plt.close(fig)


def approaches_in(df: pd.DataFrame) -> list[str]:
    present = set(df["approach"])
    return [a for a in STYLE if a in present]


def pick_backend(df: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """Rows of one backend: the GPU's when present (the paper's figures), else the CPU's."""
    backends = set(df["backend"])
    backend = "gpu" if "gpu" in backends else ("cpu" if "cpu" in backends else next(iter(backends), ""))
    return df[df["backend"] == backend], backend


def message_figure(title: str, message: str) -> plt.Figure:
    with plt.rc_context(RC):
        fig, ax = plt.subplots(figsize=(7, 2.5))
        ax.axis("off")
        ax.set_title(title)
        ax.text(0.5, 0.5, message, ha="center", va="center", fontsize=11, wrap=True, transform=ax.transAxes)
    return fig


def band_patch(label: str) -> Patch:
    """Legend entry of the shaded spreads: ``shaded: {label}``."""
    return Patch(facecolor="#999999", alpha=BAND_ALPHA, label=f"shaded: {label}")


def panel_grid(n: int, ncols_max: int = 4, size=(3.6, 3.0)):
    ncols = min(n, ncols_max)
    nrows = math.ceil(n / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(size[0] * ncols, size[1] * nrows), squeeze=False)
    flat = axes.ravel()
    for ax in flat[n:]:
        ax.axis("off")
    return fig, flat[:n]


def figure_legend(fig: plt.Figure, approaches: Iterable[str], extra=()) -> None:
    """One legend for the figure: line-and-marker symbols of the approaches, then ``extra`` handles."""
    handles = [plt.Line2D([], [], color=STYLE[a][1], marker=STYLE[a][2], linestyle=LINESTYLE[a], label=STYLE[a][0])
               for a in approaches]
    handles += list(extra)
    fig.legend(handles=handles, loc="upper center", ncol=len(handles), frameon=False, bbox_to_anchor=(0.5, 1.0))


class PlainLogFormatter(LogFormatter):
    """matplotlib's log tick labeller (which ticks get a label), writing ``%g`` numbers: 0.6, 20, 1e-07."""

    def _num_to_string(self, x, vmin, vmax):
        return f"{x:g}"


def plain_log_ticks(ax, axis: str = "y", minor_labels: bool = True) -> None:
    """Label a log axis with plain numbers (0.001, 20, 1e-07), not 2×10¹.

    Minor ticks get labels only on axes spanning up to two decades, so short
    axes still carry numbers and long ones stay uncluttered; none with ``minor_labels=False``
    (an x axis of decades, whose minor labels side by side would collide).
    """
    target = ax.yaxis if axis == "y" else ax.xaxis
    target.set_major_formatter(PlainLogFormatter(labelOnlyBase=False))
    # minor labels: all of them below half a decade, some up to two decades, none beyond
    target.set_minor_formatter(PlainLogFormatter(labelOnlyBase=False, minor_thresholds=(2, 0.5)) if minor_labels
                               else NullFormatter())


def speedup_labels(ax, x, y, speedups, colour: str, others) -> None:
    """Write ``speedups`` (``5.1×``) at the points ``(x, y)`` of one line on a log y axis, each above or below
    its point: on the side with more room to the nearest of the ``others`` lines (one row of values at ``x``
    each), so that a label does not sit on another line. Points or speedups that are not finite get none."""
    others = np.asarray(others, dtype=float).reshape(-1, len(y))
    with np.errstate(divide="ignore", invalid="ignore"):
        gaps = np.log10(others / np.asarray(y, dtype=float))  # > 0: that line is above the point
    for i, (at, value, speedup) in enumerate(zip(x, y, speedups)):
        if not (np.isfinite(value) and np.isfinite(speedup)):
            continue
        column = gaps[:, i]
        up = np.min(column[column > 0], initial=np.inf) >= np.min(-column[column < 0], initial=np.inf)
        ax.annotate(f"{speedup:.1f}×", (at, value), textcoords="offset points", xytext=(0, 5 if up else -5),
                    ha="center", va="bottom" if up else "top", fontsize=MIN_FONT, color=colour,
                    path_effects=[patheffects.withStroke(linewidth=2.5, foreground="white")])


def panel_title(ax, title: str, notes: list[str]) -> None:
    """Panel title with notes (coincident series, empty batches) on a second line, off the data."""
    ax.set_title("\n".join([title, "; ".join(notes)]) if notes else title)


def declutter(ax) -> None:
    """Move data-anchored labels (speedups, Kahn notes) up until none overlaps another, and
    raise the y limit until all sit inside the axes, below the title. Call after ``tight_layout``."""
    renderer = ax.figure.canvas.get_renderer()
    to_data = ax.transData.inverted()
    placed = []
    labels = [t for t in ax.texts if t.get_transform() == ax.transData and not isinstance(t, Annotation)]
    for text in sorted(labels, key=lambda t: t.get_window_extent(renderer).x0):
        box = text.get_window_extent(renderer)
        for _ in range(len(placed) + 1):
            hits = [p for p in placed if p.overlaps(box.padded(3))]  # 3 px apart: not touching
            if not hits:
                break
            x, y = ax.transData.transform(text.get_position())
            text.set_position(to_data.transform((x, y + max(h.y1 for h in hits) - box.y0 + 1)))
            box = text.get_window_extent(renderer)
        placed.append(box)
    for _ in range(20):  # each pass grows the axis; text boxes move with the limits
        top = max((t.get_window_extent(renderer).y1 for t in labels), default=-np.inf)
        if top <= ax.get_window_extent(renderer).y1:
            break
        low, high = ax.get_ylim()
        ax.set_ylim(low, high * 1.5 if ax.get_yscale() == "log" else high + 0.15 * (high - low))


def coincident_notes(series: dict[str, np.ndarray], rtol: float = 0.01) -> list[str]:
    """Notes naming series drawn on top of each other (every point within ``rtol``): ``["ND = DT = DF"]``.

    Series are grouped with the first earlier one they coincide with; the later
    ones, drawn over it, are the hidden ones.
    """
    groups: list[list[str]] = []
    for name, y in series.items():
        for group in groups:
            other = series[group[0]]
            if other.shape == y.shape and (np.isfinite(other) == np.isfinite(y)).all() and np.isfinite(y).any() \
                    and np.allclose(other[np.isfinite(y)], y[np.isfinite(y)], rtol=rtol, atol=0):
                group.append(name)
                break
        else:
            groups.append([name])
    return [f"overlapping: {' = '.join(g)}" for g in groups if len(g) > 1]


def to_log_values(values: np.ndarray) -> np.ndarray:
    """Values with non-positive entries masked, since log axes cannot show them."""
    values = np.asarray(values, dtype=float)
    return np.where(values > 0, values, np.nan)


def points_with_spread(ax, x, table: pd.DataFrame, colour: str, marker: str, label=None, linestyle="none",
                       size: float = 5):
    """Points at ``table["mid"]`` (joined by ``linestyle``), each with a whisker from ``low`` to ``high``: the
    look of every runtime drawn on a log axis (no bar from a cut-off base). Non-positive values are left out.

    Returns
    -------
    matplotlib.container.ErrorbarContainer
        The points and whiskers; its label is the legend's.
    """
    mid = to_log_values(table["mid"].to_numpy())
    spread = np.vstack([mid - table["low"].to_numpy(), table["high"].to_numpy() - mid])
    return ax.errorbar(x, mid, yerr=np.abs(spread), fmt=marker, linestyle=linestyle, color=colour, markersize=size,
                       capsize=2, linewidth=0.9, label=label)
