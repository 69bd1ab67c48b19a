"""Figures render from a small synthetic summary (and benchmark) table, and read in grey print."""

import itertools

import matplotlib
import matplotlib.collections
import matplotlib.container
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from matplotlib.transforms import Bbox

from dynpr.evaluation import plots
from dynpr.evaluation.results import make_row, to_frame

APPROACHES = ["static", "nd", "dt", "df", "dfp"]


def synthetic_summary(backends=("cpu",)) -> pd.DataFrame:
    """Rows of every experiment with runtimes that fall with the approach index."""
    rng = np.random.default_rng(0)
    rows = []
    specs = [("A", "temporal", [1e-5, 1e-4], 3), ("B", "temporal", [1e-5, 1e-4], 3),
             ("C", "random", [1e-7, 1e-3, 1e-1], 2)]
    for backend in backends:
        for dataset, experiment, fractions, batches in specs:
            for f in fractions:
                for i in range(batches):
                    for k, a in enumerate(APPROACHES):
                        rows.append(make_row(
                            dataset=dataset, experiment=experiment, approach=a, backend=backend, device="x",
                            batch_fraction=f, batch_index=i, repeat=0, deletions=1, insertions=4, vertices=100,
                            edges=500, iterations=10, time_ms=10.0 / (k + 1) * (1 + rng.random()),
                            l1_error=0.0 if a == "nd" and i == 0 else 1e-9 * (k + 1), affected=50,
                            git_commit="abc", timestamp="t"))
            rows.append(make_row(dataset=dataset, experiment="kahn", approach="kahn", backend=backend, device="x",
                                 batch_fraction=np.nan, deletions=0, insertions=0, vertices=100, edges=400,
                                 iterations=7, time_ms=1.5, l1_error=np.nan, affected=100 if dataset == "C" else 60,
                                 git_commit="abc", timestamp="t"))
    return to_frame(rows)


CASES = [(name, {}) for name in plots.SUMMARY_FIGURES if name != "temporal_per_batch"]
CASES += [("temporal_per_batch", {"dataset": "A"})]


@pytest.mark.parametrize("name,kwargs", CASES)
def test_summary_figures_render(tmp_path, name, kwargs):
    fig = plots.SUMMARY_FIGURES[name](synthetic_summary(("gpu", "cpu")), **kwargs)
    png, pdf = tmp_path / f"{name}.png", tmp_path / f"{name}.pdf"
    plots.save_figure(fig, png, pdf)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert pdf.read_bytes()[:5] == b"%PDF-"
    assert png.stat().st_size > 10_000


def test_figures_say_when_rows_are_missing(tmp_path):
    empty = synthetic_summary().iloc[0:0]
    for name, fn in plots.SUMMARY_FIGURES.items():
        fig = fn(empty, dataset="A") if name == "temporal_per_batch" else fn(empty)
        texts = [t.get_text() for ax in fig.axes for t in ax.texts]
        assert any("no " in t for t in texts), name
        plots.save_figure(fig, tmp_path / f"{name}.png", tmp_path / f"{name}.pdf")


def test_gpu_vs_cpu_notes_a_single_backend():
    fig = plots.gpu_vs_cpu(synthetic_summary(("cpu",)))
    assert "only CPU rows" in fig._suptitle.get_text()
    assert len([ax for ax in fig.axes if ax.has_data()]) == 4  # temporal and random, runtime and error
    fig = plots.gpu_vs_cpu(synthetic_summary(("gpu", "cpu")))
    assert "only" not in fig._suptitle.get_text()
    assert len([ax for ax in fig.axes if ax.has_data()]) == 8


def test_speedup_panel_draws_the_geometric_means_and_the_graphs_range():
    df = synthetic_summary()
    fig = plots.temporal_runtime_error(df)
    t = df[df["experiment"] == "temporal"]
    per_graph = t.groupby(["dataset", "approach", "batch_fraction"])["time_ms"].mean()
    f = 1e-5
    each = {a: per_graph.xs((a, f), level=("approach", "batch_fraction")) for a in APPROACHES}
    ratios = each["static"] / each["dfp"]
    panel = fig.axes[2]
    (line,) = [ln for ln in panel.get_lines() if ln.get_label() == "DF-P"]
    x, y = line.get_data()
    assert y[list(x).index(f)] == pytest.approx(np.exp(np.log(ratios).mean()))
    # the shaded band spans the graphs' lowest to highest speedup
    bands = [c for c in panel.collections if isinstance(c, matplotlib.collections.PolyCollection)]
    assert len(bands) == 4  # every approach beside Static
    dfp_band = bands[3].get_paths()[0].vertices
    at = dfp_band[np.isclose(dfp_band[:, 0], f)][:, 1]
    assert at.min() == pytest.approx(ratios.min()) and at.max() == pytest.approx(ratios.max())
    plt.close(fig)


def test_bench_figures_placeholder_and_rows(tmp_path):
    for name, fn in plots.BENCH_FIGURES.items():
        fig = fn(pd.DataFrame())
        assert plots.NO_BENCH in [t.get_text() for ax in fig.axes for t in ax.texts]
        plots.save_figure(fig, tmp_path / f"{name}.png", tmp_path / f"{name}.pdf")
        assert (tmp_path / f"{name}.png").stat().st_size > 0
    bench = pd.DataFrame({
        "benchmark": ["static_comparison"] * 4 + ["partition_ablation"] * 6,
        "dataset": ["A", "A", "B", "B"] + ["A"] * 6,
        "backend": ["gpu"] * 10,
        "variant": ["v1", "v2", "v1", "v2"] + [""] * 6,
        "approach": ["static"] * 4 + ["df", "df", "df", "dfp", "dfp", "dfp"],
        "partition": [""] * 4 + ["none", "in", "in_out"] * 2,
        "time_ms": [1.0, 2.0, 3.0, 4.0, 4.0, 2.0, 1.0, 8.0, 4.0, 2.0],
    })
    fig = plots.partition_ablation(bench)
    heights = sorted(round(p.get_height(), 6) for p in fig.axes[0].patches)
    assert heights == [0.25, 0.25, 0.5, 0.5, 1.0, 1.0]  # relative to the slowest partitioning
    plots.save_figure(plots.static_comparison(bench), tmp_path / "s.png", tmp_path / "s.pdf")
    assert (tmp_path / "s.pdf").stat().st_size > 0


def test_partition_ablation_keeps_kernel_variants_apart():
    bench = pd.DataFrame({
        "benchmark": "partition_ablation", "dataset": "A", "backend": "gpu", "approach": "dfp",
        "variant": ["partitioned"] * 3 + ["classes"] * 3, "partition": ["none", "in", "in_out"] * 2,
        "time_ms": [2.0, 1.0, 1.0, 10.0, 10.0, 5.0],
    })
    fig = plots.partition_ablation(bench)
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["DF-P\nclasses", "DF-P\npartitioned"]
    assert sorted(round(p.get_height(), 6) for p in fig.axes[0].patches) == [0.5, 0.5, 0.5, 1.0, 1.0, 1.0]


def test_partition_ablation_whiskers_span_the_graphs():
    bench = pd.DataFrame({"benchmark": "partition_ablation", "dataset": ["A", "A", "B", "B"], "backend": "gpu",
                          "approach": "dfp", "variant": "", "partition": ["none", "in"] * 2,
                          "time_ms": [2.0, 1.0, 1.0, 4.0]})  # relative: none 1, 0.25; in 0.5, 1
    ax = plots.partition_ablation(bench).axes[0]
    spreads = [c for c in ax.containers if isinstance(c, matplotlib.container.ErrorbarContainer)]
    assert [whisker(c, 0) for c in spreads] == [(0.25, 1.0), (0.5, 1.0)]
    assert [round(p.get_height(), 6) for p in ax.patches] == [0.5, round(0.5 ** 0.5, 6)]  # geometric means
    plt.close("all")


def test_static_comparison_keeps_every_variant_distinct():
    variants = [f"v{i}" for i in range(len(plots.CYCLE) + 3)]
    bench = pd.DataFrame({"benchmark": "static_comparison", "dataset": "A", "backend": "gpu",
                          "variant": variants, "time_ms": np.arange(1.0, len(variants) + 1)})
    fig = plots.static_comparison(bench)
    handles, labels = fig.axes[0].get_legend_handles_labels()
    looks = {(h[0].get_color(), h[0].get_marker()) for h in handles}  # h[0]: the points of an errorbar
    assert labels == [f"GPU {v}" for v in variants] and len(looks) == len(variants)


def whisker(container, i: int) -> tuple[float, float]:
    """The i-th whisker of an errorbar container: its lowest and highest y."""
    y = container.lines[2][0].get_segments()[i][:, 1]
    return float(y.min()), float(y.max())


def test_static_comparison_draws_points_with_the_repeats_spread_on_a_log_axis():
    bench = pd.DataFrame({"benchmark": "static_comparison", "dataset": ["A", "B"], "backend": "gpu", "variant": "v",
                          "time_ms": [2.0, 8.0], "time_min_ms": [1.5, 7.0], "time_max_ms": [3.0, 8.5]})
    fig = plots.static_comparison(bench)
    ax = fig.axes[0]
    assert ax.get_yscale() == "log" and not ax.patches  # points, no bar from a cut-off base
    (points,) = ax.containers
    assert list(points[0].get_ydata()) == [2.0, 8.0, 4.0]  # each graph's median, then their geometric mean
    assert whisker(points, 0) == (1.5, 3.0) and whisker(points, 1) == (7.0, 8.5)
    assert whisker(points, 2) == (4.0, 4.0)  # the geometric mean has no repeats: no whisker
    assert "whisker: fastest to slowest repeat" in ax.get_title()
    older = plots.static_comparison(bench.drop(columns=["time_min_ms", "time_max_ms"]))  # a table from before
    assert whisker(older.axes[0].containers[0], 0) == (2.0, 2.0)
    plt.close("all")


def grey(fig) -> np.ndarray:
    """The figure rendered and converted to luminance in [0, 1] (ITU-R BT.601), as grey print shows it."""
    fig.canvas.draw()
    rgba = np.asarray(fig.canvas.buffer_rgba(), dtype=float) / 255
    return rgba[..., :3] @ np.array([0.299, 0.587, 0.114])


def series_pixels(fig, image, ax, container) -> np.ndarray:
    """Grey values inside the tallest bar of a bar container (2 px in from its edges)."""
    bar = max(container.patches, key=lambda p: np.nan_to_num(p.get_height()))
    # a log-axis bar starts at 0, far below the axes: keep the part inside them
    box = Bbox.intersection(bar.get_window_extent(fig.canvas.get_renderer()), ax.get_window_extent())
    height = image.shape[0]
    rows = slice(int(height - box.y1) + 2, int(height - box.y0) - 2)
    cols = slice(int(box.x0) + 2, int(box.x1) - 2)
    return image[rows, cols].ravel()


def grey_distance(a: np.ndarray, b: np.ndarray) -> float:
    """Mean gap between the two grey-value distributions (their quantiles): 0 = same shade and texture."""
    q = np.linspace(0, 1, 101)
    return float(np.abs(np.quantile(a, q) - np.quantile(b, q)).mean())


def test_every_bar_series_reads_apart_in_grey():
    bench = pd.DataFrame({"benchmark": "partition_ablation", "dataset": "A", "backend": "gpu", "approach": "dfp",
                          "variant": "", "partition": ["none", "in", "in_out"], "time_ms": [1.0, 1.0, 1.0]})
    fig = plots.partition_ablation(bench)
    image = grey(fig)
    ax = fig.axes[0]
    pixels = {c.get_label(): series_pixels(fig, image, ax, c) for c in ax.containers
              if isinstance(c, matplotlib.container.BarContainer)}  # not the whiskers
    assert len(pixels) >= 2
    for (a, pa), (b, pb) in itertools.combinations(pixels.items(), 2):
        assert grey_distance(pa, pb) > 0.05, f"{a} and {b} look alike in grey"
    plt.close(fig)


def texts(fig):
    return [t for t in fig.findobj(matplotlib.text.Text) if t.get_visible() and t.get_text().strip()]


@pytest.mark.parametrize("name,kwargs", CASES)
def test_text_is_legible_and_ticks_plain(name, kwargs):
    fig = plots.SUMMARY_FIGURES[name](synthetic_summary(("gpu", "cpu")), **kwargs)
    fig.canvas.draw()
    small = [(t.get_text(), t.get_fontsize()) for t in texts(fig) if t.get_fontsize() < plots.MIN_FONT]
    assert not small
    ticks = [t.get_text() for ax in fig.axes for t in ax.get_xticklabels() + ax.get_yticklabels()]
    assert not [t for t in ticks if "$" in t or "times" in t or "^" in t]  # no 3×10⁰ mathtext
    plt.close(fig)


@pytest.mark.parametrize("name,kwargs", CASES)
def test_labels_in_the_axes_do_not_overlap_or_leave_them(name, kwargs):
    fig = plots.SUMMARY_FIGURES[name](synthetic_summary(("gpu", "cpu")), **kwargs)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    for ax in fig.axes:
        boxes = [t.get_window_extent(renderer) for t in ax.texts if t.get_visible() and t.get_text().strip()]
        assert not [(a, b) for a, b in itertools.combinations(boxes, 2) if a.overlaps(b)], name
        inside = ax.get_window_extent(renderer)
        assert all(b.y1 <= inside.y1 + 1 and b.x0 >= inside.x0 - 1 and b.x1 <= inside.x1 + 1 for b in boxes), name
    plt.close(fig)


def test_speedup_labels_take_the_side_away_from_the_nearest_line():
    fig, ax = plt.subplots()
    ax.set_yscale("log")
    others = [[12.0, 12.0, 1.0], [1.0, 1.0, 1.0]]  # a line just above the first two points, one far below
    plots.speedup_labels(ax, [1, 2, 3], np.array([10.0, 10.0, 10.0]), [2.0, np.nan, 3.0], "black", others)
    assert [(t.get_text(), t.get_va()) for t in ax.texts] == [("2.0×", "top"), ("3.0×", "bottom")]
    plt.close(fig)


def test_coincident_lines_and_empty_batches_are_said():
    df = synthetic_summary()
    dt = df["approach"] == "dt"
    nd = df[df["approach"] == "nd"].set_index(["dataset", "batch_fraction", "batch_index"])["l1_error"]
    keys = pd.MultiIndex.from_frame(df.loc[dt, ["dataset", "batch_fraction", "batch_index"]])
    df.loc[dt, "l1_error"] = nd.reindex(keys).to_numpy()  # DT's errors = ND's: drawn on top of each other
    empty = (df["dataset"] == "A") & (df["batch_index"] == 1) & (df["experiment"] == "temporal")
    df.loc[empty, ["insertions", "deletions"]] = 0
    fig = plots.temporal_per_batch(df, "A")
    titles = [ax.get_title() for ax in fig.axes]
    assert any("overlapping: ND = DT" in t for t in titles)
    assert sum("1 of 3 batches add no new edge" in t for t in titles) == 4  # both batch sizes, both panels
    assert "batch with no new edge" in [t.get_text() for t in fig.legends[0].get_texts()]
    plt.close(fig)


def test_random_figures_shade_batches_below_the_mix_and_lines_differ_in_grey():
    df = synthetic_summary()
    single = (df["experiment"] == "random") & (df["batch_fraction"] == df.loc[df["experiment"] == "random",
                                                                              "batch_fraction"].min())
    df.loc[single, ["insertions", "deletions"]] = [1, 0]
    fig = plots.random_runtime(df)
    assert "fewer than 5 edges (shaded)" in fig._suptitle.get_text()
    assert "< 5 edges: no 80/20 mix" in [t.get_text() for t in fig.legends[0].get_texts()]
    styles = {line.get_label(): (line.get_linestyle(), line.get_marker()) for line in fig.axes[0].get_lines()}
    assert styles["ND"] != styles["DT"] and styles["ND"][0] != styles["DT"][0]  # dash, not only the marker
    assert styles["DF"][0] != styles["DF-P"][0]
    assert all("log scale" in ax.get_ylabel() for ax in fig.axes if ax.has_data())
    # every approach's speedup over Static in a panel of its own, with the graphs' range shaded
    assert {ln.get_label() for ln in fig.axes[1].get_lines()} >= {"ND", "DT", "DF", "DF-P"}
    assert "speedup" in fig.axes[1].get_title()
    assert "shaded: range over graphs (all graphs), over batches (each graph)" in [
        t.get_text() for t in fig.legends[0].get_texts()]
    plt.close(fig)


def _kahn_csv(tmp_path) -> pd.DataFrame:
    """A small kahn.csv as rule bench writes it (dynpr.evaluation.bench.KAHN_COLUMNS), read back like plot_bench does."""
    from dynpr.evaluation.bench import KAHN_COLUMNS

    rows = []
    times = {"cpu": 100.0, "levels": 10.0, "persistent": 5.0, "two_phase": 12.0, "host_removal": 50.0, "dense": 20.0,
             "dense_shared": 30.0}
    for kind in ("cyclic", "acyclic"):
        for n in (10_000, 20_000):
            for driver, t in times.items():
                rows.append({"graph": f"{kind}-{n // 1000}k", "driver": driver, "vertices": n,
                             "levels": 0 if kind == "cyclic" else n // 2, "time_ms": t * n / 10_000})
    for driver in ("cpu", "levels", "persistent", "two_phase", "host_removal"):
        rows.append({"graph": "web-NotreDame", "driver": driver, "vertices": 325_729, "levels": 3,
                     "time_ms": times[driver]})
    for row in rows:  # the repeats within 10% of their median
        row.update(time_min_ms=row["time_ms"] * 0.9, time_max_ms=row["time_ms"] * 1.1)
    table = pd.DataFrame(rows).assign(benchmark="kahn", backend="gpu", device="d", git_commit="c", edges=1,
                                      processed=1, us_per_level=1.0, speedup_vs_cpu=1.0, repeats=3)
    table["dataset"] = table["graph"]
    table[list(KAHN_COLUMNS)].to_csv(tmp_path / "kahn.csv", index=False)
    return plots.read_bench([tmp_path / "kahn.csv"])


def test_kahn_bench_draws_each_driver_per_size_and_the_other_graphs(tmp_path):
    fig = plots.kahn_bench(_kahn_csv(tmp_path))
    acyclic, cyclic, others = fig.axes
    for ax, kind in ((acyclic, "acyclic"), (cyclic, "cyclic")):
        lines = {c.get_label(): c[0] for c in ax.containers}  # c[0]: the line through the points
        assert list(lines) == [plots.KAHN_DRIVERS[d][0] for d in plots.KAHN_DRIVERS]
        dense = lines["GPU dense matrix"]
        assert list(dense.get_xdata()) == [10_000, 20_000] and list(dense.get_ydata()) == [20.0, 40.0]
        assert dense.get_linestyle() == "--" and ax.get_yscale() == "log"
        assert kind in ax.get_title()
    assert "levels: 5,000, 10,000" in acyclic.get_title() and "levels: 0, 0" in cyclic.get_title()
    # the other graphs: CSR drivers only, one point each with the repeats' spread
    assert [t.get_text() for t in others.get_legend().get_texts()] == [
        "CPU, CSR", "GPU levels, CSR", "GPU persistent, CSR", "GPU two-phase removal, CSR", "GPU + host removal, CSR"]
    assert not others.patches and sorted(c[0].get_ydata()[0] for c in others.containers) == [5.0, 10.0, 12.0, 50.0,
                                                                                              100.0]
    levels = {c.get_label(): c for c in others.containers}["GPU levels, CSR"]
    assert whisker(levels, 0) == (9.0, 11.0)
    plots.save_figure(fig, tmp_path / "kahn_bench.png", tmp_path / "kahn_bench.pdf")
    assert (tmp_path / "kahn_bench.png").stat().st_size > 0 and (tmp_path / "kahn_bench.pdf").stat().st_size > 0


def test_kahn_bench_ignores_the_other_tables_rows(tmp_path):
    static = pd.DataFrame({"benchmark": "static_comparison", "dataset": "A", "backend": "gpu", "variant": "v",
                           "time_ms": 1.0}, index=[0])
    bench = pd.concat([_kahn_csv(tmp_path), static], ignore_index=True)
    assert len(plots.kahn_bench(bench).axes) == 3
    assert len(plots.kahn_bench(static).axes[0].texts) == 1  # no kahn rows: the note alone
