"""dynpr.evaluation.bench's CPU-testable parts: the bytes model, row arithmetic, the no-GPU failure, the rule's wiring."""

from __future__ import annotations

import runpy
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import yaml

from dynpr.evaluation import bench
from dynpr.backend import gpu_available
from dynpr.evaluation.bench import NO_GPU

ROOT = Path(__file__).resolve().parents[1]


def test_bytes_model_counts_each_array_once():
    n, m = 1000, 16_000
    offsets, sources, gathers, read_r, write_r = 8 * (n + 1), 4 * m, 8 * m, 8 * n, 8 * n
    assert bench.bytes_per_iteration(n, m) == offsets + sources + gathers + read_r + write_r
    for term in ("8(n+1)", "4m", "8m", "8n"):
        assert term in bench.MODEL


def test_static_row_arithmetic():
    row = bench.static_row("g", "v", n=10, m=100, iterations=5, time_ms=2.0, copy_gbps=1.0, device="d", commit="c")
    per_iteration = 8 * 11 + 12 * 100 + 16 * 10
    assert row["bytes_per_iteration"] == per_iteration
    assert row["ms_per_iteration"] == pytest.approx(0.4)
    assert row["edges_per_second"] == pytest.approx(100 * 5 / 2e-3)
    assert row["achieved_gbps"] == pytest.approx(per_iteration * 5 / 2e-3 / 1e9)
    assert row["bandwidth_share"] == pytest.approx(row["achieved_gbps"] / 1.0)
    assert set(row) == set(bench.STATIC_COLUMNS)
    assert (row["benchmark"], row["dataset"], row["backend"]) == ("static_comparison", "g", "gpu")
    assert (row["time_min_ms"], row["time_max_ms"]) == (2.0, 2.0)  # one run: no spread
    spread = bench.static_row("g", "v", 10, 100, 5, 2.0, 1.0, "d", "c", repeats=3, spread=(1.5, 4.0))
    assert (spread["time_min_ms"], spread["time_max_ms"], spread["repeats"]) == (1.5, 4.0, 3)


@pytest.mark.parametrize("iterations, time_ms", [(0, 1.0), (3, 0.0), (3, float("nan"))])
def test_static_row_rejects_unratable_runs(iterations, time_ms):
    with pytest.raises(ValueError, match="cannot be rated"):
        bench.static_row("g", "v", 10, 100, iterations, time_ms, 1.0, "d", "c")


def test_required_columns_present():
    for column in ("graph", "variant", "device", "git_commit", "vertices", "edges", "iterations", "time_ms",
                   "ms_per_iteration", "edges_per_second", "bytes_per_iteration", "achieved_gbps", "copy_gbps",
                   "bandwidth_share", "model"):
        assert column in bench.STATIC_COLUMNS
    for column in ("graph", "approach", "partition", "batch_fraction", "time_ms", "device", "git_commit"):
        assert column in bench.ABLATION_COLUMNS


def _rule_params(tmp_path) -> SimpleNamespace:
    """The params of rule bench: config.yaml's bench section, seed and reference tolerance."""
    config = yaml.safe_load((ROOT / "config.yaml").read_text())
    return SimpleNamespace(**config["bench"], bench_graphs=["g"], batch_files=[], seed=config["seed"],
                           reference_tolerance=config["pagerank"]["reference_tolerance"])


def test_rule_script_without_gpu_fails_with_one_line(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr("dynpr.backend.gpu_available", lambda: False)
    log = tmp_path / "bench.log"
    out = SimpleNamespace(**{k: str(tmp_path / f"{k}.csv") for k in ("static", "ablation", "kahn")})
    snakemake = SimpleNamespace(rule="bench", log=[str(log)], params=_rule_params(tmp_path),
                                input=SimpleNamespace(graphs=[str(tmp_path / "g.npz")]), output=out)
    with pytest.raises(SystemExit) as info:
        runpy.run_path(str(ROOT / "workflow" / "scripts" / "bench_gpu_tables.py"),
                       init_globals={"snakemake": snakemake})
    assert info.value.code == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "bench needs a GPU: " in err[0]
    assert "bench needs a GPU: " in log.read_text()
    assert not any(Path(p).exists() for p in vars(out).values())


def test_scenarios_read_the_pipeline_batch_files(tmp_path):
    # Temporal slices chain from their base graph; random batches each update the full graph.
    from dynpr.batches import apply_batch, random_batch, write_batches
    from dynpr.graph.graph import Graph

    rng = np.random.default_rng(4)
    graph = Graph.from_edges(rng.integers(0, 50, 300), rng.integers(0, 50, 300), 50)
    base = Graph.from_edges(rng.integers(0, 50, 200), rng.integers(0, 50, 200), 50)
    batches = [random_batch(graph, 0.05, 0.8, rng) for _ in range(3)]
    graph.save(tmp_path / "g.npz")
    base.save(tmp_path / "base.npz")
    write_batches(tmp_path / "b.npz", batches, made_for=graph, graph="g", experiment="random", fraction=0.05)
    graphs = {"g": str(tmp_path / "g.npz")}

    independent = list(bench._scenarios(bench.BatchFile("g", 0.05, str(tmp_path / "b.npz")), graphs))
    assert [s[0] for s in independent] == [0, 1, 2] and not any(s[4] for s in independent)
    for _, old, new, batch, _ in independent:
        np.testing.assert_array_equal(old.offsets, graph.offsets)
        np.testing.assert_array_equal(new.targets, apply_batch(graph, batch).targets)

    slices, states = [], [base]
    for _ in range(3):  # each slice drawn on the graph the previous ones left
        slices.append(random_batch(states[-1], 0.05, 0.8, rng))
        states.append(apply_batch(states[-1], slices[-1]))
    write_batches(tmp_path / "t.npz", slices, made_for=base, graph="g", experiment="temporal", fraction=0.05)
    chained = list(bench._scenarios(bench.BatchFile("g", 0.05, str(tmp_path / "t.npz"), str(tmp_path / "base.npz")),
                                    graphs))
    assert len(chained) == 3 and all(s[4] for s in chained)
    for (_, old, new, _, _), before, after in zip(chained, states, states[1:]):
        np.testing.assert_array_equal(old.targets, before.targets)
        np.testing.assert_array_equal(new.targets, after.targets)


@pytest.mark.skipif(gpu_available(), reason="a GPU is present")
@pytest.mark.parametrize("script", ["bench_gpu.py", "bench_class_bounds.py", "bench_scale.py", "load_memory.py"])
def test_gpu_benchmarks_without_a_gpu_say_so_in_one_line(script):
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / script)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines() == [f"{script}: error: {NO_GPU}"], proc.stderr[-2000:]


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_available(), reason="needs a CUDA device")
def test_gather_pass_sums_the_gathered_contributions():
    import cupy

    from dynpr.evaluation.bench import gather_total

    rng = np.random.default_rng(0)
    contributions = rng.random(5000)
    ids = rng.integers(0, 5000, 300_001).astype(np.int32)  # not a multiple of the grid's threads
    total, ms = gather_total(cupy.asarray(ids), cupy.asarray(contributions), repeats=2)
    assert total == pytest.approx(contributions[ids].sum(), rel=1e-12)
    assert ms > 0


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("hot", [0, 1000, "most"])
def test_gather_pass_with_a_hot_set_sums_what_the_plain_pass_sums(dtype, hot):
    import cupy

    from dynpr.evaluation.bench import gather_total, max_hot

    rng = np.random.default_rng(1)
    contributions = rng.random(300_000).astype(dtype)
    ids = rng.integers(0, contributions.size, 1_000_003).astype(np.int32)
    ids[::7] = rng.integers(0, 50, ids[::7].size)  # sources the hot set holds, gathered often
    hot = max_hot(dtype) if hot == "most" else hot
    total, _ = gather_total(cupy.asarray(ids), cupy.asarray(contributions), hot=hot, block=1024)
    assert total == pytest.approx(contributions[ids].astype(np.float64).sum(), rel=1e-12)
    with pytest.raises(ValueError, match="shared memory holds"):
        gather_total(cupy.asarray(ids), cupy.asarray(contributions), hot=max_hot(dtype) + 1)


def test_kahn_cases_are_the_dags_the_report_graphs_and_the_bench_graphs(tmp_path):
    from dynpr.graph.graph import Graph
    from dynpr.generate.random_dag import matrix_graph, report_matrix

    Graph.from_edges([0, 1, 2], [1, 2, 0], 3).save(tmp_path / "g.npz")  # a cycle, with PageRank's self-loops
    params = SimpleNamespace(kahn_vertices=50, kahn_edges=200, kahn_depth=5, kahn_report_sizes=[1000, 40],
                             kahn_report_density=0.5, seed=3, graphs=["g"])
    cases = list(bench.kahn_cases(params, {"g": str(tmp_path / "g.npz")}))
    assert [c[0] for c in cases] == ["dag-random", "dag-depth5", "cyclic-1k", "acyclic-1k", "cyclic-40",
                                     "acyclic-40", "g"]
    for name, graph, matrix in cases:
        # the dense driver runs on the report's graphs only: their matrices are the graphs
        assert (matrix is not None) == (name.split("-")[0] in ("cyclic", "acyclic"))
        if matrix is not None:
            kind, size = name.split("-")
            n = 1000 if size == "1k" else int(size)
            np.testing.assert_array_equal(matrix, report_matrix(n, kind, seed=3))
            np.testing.assert_array_equal(graph.targets, matrix_graph(matrix).targets)
    assert cases[-1][1].num_self_loops == 0 and cases[-1][1].num_edges == 3  # the bench graph without loops


def test_kahn_columns_and_drivers_are_the_interface():
    # claims rows read these tables: the column set and driver names are a contract
    assert bench.KAHN_COLUMNS == ("graph", "driver", "device", "git_commit", "vertices", "edges", "levels",
                                  "processed", "time_ms", "us_per_level", "speedup_vs_cpu", "repeats", "benchmark",
                                  "dataset", "backend", "time_min_ms", "time_max_ms")
    assert bench.KAHN_DRIVERS == ("cpu", "levels", "persistent", "two_phase", "host_removal", "dense", "dense_shared")


class FakeClock:
    """A clock each run advances by its own cost."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_budgeted_runs_stop_at_the_budget_or_the_repeats():
    clock = FakeClock()

    def solve(seconds):
        def run():
            clock.now += seconds
            return seconds
        return run

    # milliseconds: every repeat fits; seconds: the first run (it may compile) and one more
    assert len(bench.budgeted_runs(solve(0.05), 5, 1.0, clock)) == 5
    assert len(bench.budgeted_runs(solve(1.4), 5, 1.0, clock)) == 2
    assert len(bench.budgeted_runs(solve(0.3), 5, 1.0, clock)) == 5  # the fifth starts at 0.9 s, within the budget
    assert len(bench.budgeted_runs(solve(0.4), 5, 1.0, clock)) == 4  # runs after the first at 0, 0.4 and 0.8 s; at 1.2 s it stops
    assert len(bench.budgeted_runs(solve(9.0), 5, 0.0, clock)) == 1
    assert len(bench.budgeted_runs(solve(0.0), 1, 1.0, clock)) == 1


def test_static_plan_keeps_the_naive_variants_on_small_graphs_only():
    variants = ("classes", "pull_thread", "pull_tiled", "hybrid_thread_warp")
    plan = bench.static_plan({"rmat-20": 17_000_000, "rmat-22": 70_000_000}, variants,
                             ["pull_thread", "pull_tiled"], 20_000_000)
    assert plan == {"rmat-20": list(variants), "rmat-22": ["classes", "hybrid_thread_warp"]}
    with pytest.raises(ValueError, match=r"bench.naive_variants: \['pull_thred'\] are not kernel variants"):
        bench.static_plan({}, variants, ["pull_thred"], 1)


def test_the_configured_bench_names_real_variants_and_keeps_the_ordering_claims_pairs():
    # every pair the R000 claims compare shares a graph: the naive designs keep the small ones
    config = yaml.safe_load((ROOT / "config.yaml").read_text())["bench"]
    from dynpr.io.catalog import get_dataset
    from dynpr.designs import VARIANTS
    from dynpr.pipeline.footprint import dataset_counts

    edges = {g: dataset_counts(get_dataset(g)).edges for g in config["graphs"]}
    plan = bench.static_plan(edges, VARIANTS, config["naive_variants"], config["naive_max_edges"])
    for slow, fast in (("push_atomic", "pull_thread"), ("pull_thread", "pull_tiled"), ("pull_tiled", "hybrid_thread_warp")):
        assert sum(slow in kept and fast in kept for kept in plan.values()) >= 4
    assert plan["rmat-22"] == [v for v in VARIANTS if v not in config["naive_variants"]]


def test_progress_lines_carry_the_seconds_since_the_bench_started():
    clock, lines = FakeClock(), []
    progress = bench.Progress(lines.append, clock)
    clock.now = 12.34
    progress("rmat-20 classes")
    assert lines == ["[   12.3 s] rmat-20 classes"] and progress.elapsed() == pytest.approx(12.34)
