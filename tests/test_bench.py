"""dynpr.bench's CPU-testable parts: the bytes model, row arithmetic, the no-GPU failure, the rule's wiring."""

from __future__ import annotations

import runpy
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import yaml

from dynpr import bench

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


def test_main_without_gpu_fails_with_one_line(monkeypatch, capsys):
    monkeypatch.setattr("dynpr.backend.gpu_available", lambda: False)
    with pytest.raises(SystemExit) as info:
        bench.main(["--tables", "static"])
    assert str(info.value).startswith("bench needs a GPU: ")
    assert "\n" not in str(info.value)


def _rule_params() -> dict:
    """The params of rule bench: config.yaml's bench section."""
    return yaml.safe_load((ROOT / "config.yaml").read_text())["bench"]


def test_rule_script_without_gpu_fails_with_one_line(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr("dynpr.backend.gpu_available", lambda: False)
    log = tmp_path / "bench.log"
    snakemake = SimpleNamespace(
        rule="bench", log=[str(log)], params=SimpleNamespace(**_rule_params()),
        output=SimpleNamespace(static=str(tmp_path / "static_variants.csv")))
    with pytest.raises(SystemExit) as info:
        runpy.run_path(str(ROOT / "workflow" / "scripts" / "bench_gpu_tables.py"),
                       init_globals={"snakemake": snakemake})
    assert info.value.code == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "bench needs a GPU: " in err[0]
    assert "bench needs a GPU: " in log.read_text()
    assert not (tmp_path / "static_variants.csv").exists()


def test_rule_params_parse():
    params = _rule_params()
    args = bench.build_parser().parse_args(["--graphs", *params["graphs"], "--fractions",
                                            *map(str, params["fractions"])])
    assert args.graphs == params["graphs"] and args.fractions == params["fractions"]


def test_embedded_graphs_renumbered_as_prepare_does():
    from dynpr.io import read_edges
    from dynpr.prepare import build_graph

    graph, temporal = bench.load_graph("CollegeMsg")
    expected, expected_temporal, vertex_ids, _ = build_graph(read_edges(bench.EMBEDDED / "CollegeMsg.txt.gz"))
    assert graph.num_vertices == len(vertex_ids) == 1899
    for got, want in zip((graph.offsets, graph.targets, *temporal), (expected.offsets, expected.targets,
                                                                     *expected_temporal)):
        np.testing.assert_array_equal(got, want)
