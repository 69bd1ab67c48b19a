"""The ``dynpr`` command line end to end, through ``main([...])``."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from dynpr import pagerank as pr
from dynpr.batches import Batch, apply_batch, read_batches, write_batches
from dynpr.cli import main
from dynpr.graph.graph import Graph
from dynpr.io.prepare import read_graph

EDGES = [(0, 1), (1, 2), (2, 0), (2, 3), (3, 4), (4, 5), (5, 3), (6, 0), (1, 6)]


@pytest.fixture
def graph_file(tmp_path):
    path = tmp_path / "tiny.txt"
    path.write_text("# tiny\n" + "".join(f"{u}\t{v}\n" for u, v in EDGES))
    return path


def graph():
    src, dst = np.array(EDGES).T
    return Graph.from_edges(src, dst)


def records(capsys) -> list[dict]:
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def test_static_default(graph_file, capsys, tmp_path):
    out = tmp_path / "ranks.csv"
    assert main(["pagerank", str(graph_file), "--backend", "cpu", "--reference", "--ranks-out", str(out)]) == 0
    (rec,) = records(capsys)
    assert rec["approach"] == "static" and rec["backend"] == "cpu"
    assert rec["vertices"] == 7 and rec["edges"] == len(EDGES) and rec["self_loops"] == 7
    assert rec["batch_index"] is None and rec["iterations"] > 1
    assert set(rec["phases"]) == {"partition_ms", "mark_ms", "compute_ms"}
    assert rec["l1_error"] < 1e-8
    table = pd.read_csv(out).sort_values("vertex")
    np.testing.assert_allclose(table["rank"], pr.reference(graph(), backend="cpu"), atol=1e-10)


def test_batches_in_sequence(graph_file, capsys, tmp_path):
    batches = [Batch([0], [1], [3], [0]), Batch([], [], [4, 5], [6, 1])]
    batch_file = tmp_path / "b.npz"
    write_batches(batch_file, batches, made_for=graph(), dataset="tiny")
    argv = ["pagerank", str(graph_file), "--batch", str(batch_file), "--backend", "cpu", "--reference",
            "--approach", "nd,dt", "--approach", "dfp", "--repeat", "2", "--ranks-out", str(tmp_path / "r.csv")]
    assert main(argv) == 0
    recs = records(capsys)
    assert [(r["batch_index"], r["approach"], r["repeat"]) for r in recs] == [
        (b, a, k) for b in (0, 1) for a in ("nd", "dt", "dfp") for k in (0, 1)]
    final = apply_batch(apply_batch(graph(), batches[0]), batches[1])
    assert recs[-1]["edges"] + recs[-1]["self_loops"] == final.num_edges and recs[-1]["insertions"] == 2
    assert all(r["l1_error"] < 1e-5 for r in recs)
    # ND after two batches from the converged base = the independent computation.
    base = pr.static(graph(), backend="cpu").ranks
    g1 = apply_batch(graph(), batches[0])
    step1 = pr.naive_dynamic(graph(), g1, batches[0], base, backend="cpu").ranks
    step2 = pr.naive_dynamic(g1, final, batches[1], step1, backend="cpu").ranks
    assert recs[7]["l1_error"] == pytest.approx(pr.l1_error(step2, pr.reference(final, backend="cpu")), rel=1e-6, abs=1e-15)
    table = pd.read_csv(tmp_path / "r.csv")
    assert sorted(set(zip(table["batch_index"], table["approach"]))) == [
        (b, a) for b in (0, 1) for a in ("dfp", "dt", "nd")]  # one table per run, repeats once
    last = table[(table["batch_index"] == 1) & (table["approach"] == "dfp")].sort_values("vertex")
    np.testing.assert_allclose(last["rank"], pr.reference(final, backend="cpu"), atol=1e-5)


def test_batch_then_pagerank(tmp_path, capsys, random_edges):
    src, dst = random_edges(200, 2000, seed=3)
    path = tmp_path / "g.txt"
    path.write_text("".join(f"{u} {v}\n" for u, v in zip(src, dst)))
    out = tmp_path / "b.npz"
    assert main(["batch", str(path), "--fraction", "0.01", "--count", "3", "--out", str(out)]) == 0
    (rec,) = records(capsys)
    batches = read_batches(out)
    assert rec["batches"] == len(batches) == 3
    assert rec["insertions"] == sum(b.insertions for b in batches) and rec["deletions"] > 0
    # random batches are independent updates of the graph (the paper's static-graph experiment)
    base, _ = read_graph(path)
    for batch in batches:
        assert base.has_edges(batch.del_src, batch.del_dst).all()
        assert not base.has_edges(batch.ins_src, batch.ins_dst).any()
    assert main(["pagerank", str(path), "--batch", str(out), "--approach", "nd", "--backend", "cpu",
                 "--reference"]) == 0
    recs = records(capsys)
    assert [r["batch_index"] for r in recs] == [0, 1, 2] and all(r["l1_error"] < 1e-8 for r in recs)
    assert [r["edges"] + r["self_loops"] for r in recs] == [apply_batch(base, b).num_edges for b in batches]
    # ND on batch 2 starts from the base graph's ranks, not from batch 1's
    start = pr.static(base, backend="cpu").ranks
    expected = pr.naive_dynamic(base, apply_batch(base, batches[2]), batches[2], start, backend="cpu")
    assert recs[2]["iterations"] == expected.iterations


def test_batch_file_of_another_graph_is_refused(tmp_path, capsys, graph_file):
    other = tmp_path / "other.txt"
    other.write_text("".join(f"{v} {u}\n" for u, v in EDGES))  # every edge reversed: none is in tiny's
    out = tmp_path / "b.npz"
    assert main(["batch", str(other), "--fraction", "0.5", "--out", str(out)]) == 0
    capsys.readouterr()
    assert main(["pagerank", str(graph_file), "--batch", str(out), "--backend", "cpu"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{out}: made for a graph of 7 vertices" in err[0] and f"not {graph_file}" in err[0]


def test_kahn(graph_file, capsys, tmp_path):
    assert main(["kahn", str(graph_file), "--backend", "cpu"]) == 0
    (rec,) = records(capsys)
    assert rec["is_dag"] is False and rec["edges"] == len(EDGES) and rec["self_loops"] == 0
    # 6 -> 0 -> 1 -> 6 is a cycle and everything is downstream of it or of 3->4->5->3.
    assert rec["processed"] == 0 and rec["remaining"] == 7
    dag = tmp_path / "dag.txt"
    dag.write_text("0 1\n1 2\n0 2\n")
    assert main(["kahn", str(dag), "--backend", "cpu"]) == 0
    (rec,) = records(capsys)
    assert rec["is_dag"] is True and rec["levels"] == 3
    assert main(["kahn", str(dag), "--backend", "cpu", "--keep-self-loops"]) == 0
    assert records(capsys)[0]["is_dag"] is False


@pytest.mark.parametrize("argv,code,text", [
    (["pagerank", "{g}", "--approach", "df"], 2, "needs --batch"),
    (["pagerank", "{g}", "--approach", "bogus"], 2, "unknown approach"),
    (["pagerank", "{g}", "--repeat", "0"], 2, "at least 1"),
    (["pagerank", "{g}", "--alpha", "1.5"], 2, "alpha"),
    (["pagerank", "{missing}"], 2, "missing.txt"),
    (["pagerank", "{g}", "--batch", "{missing}"], 2, "missing.txt"),
    (["pagerank", "{g}", "--tolerance", "-1"], 2, "--tolerance: must be a finite number in [0, inf), got -1"),
    (["pagerank", "{g}", "--batch", "{g}"], 2, "not a batch file"),
])
def test_errors_are_one_line(argv, code, text, graph_file, tmp_path, capsys):
    argv = [a.format(g=graph_file, missing=tmp_path / "missing.txt") for a in argv]
    assert_error(lambda: main(argv + ["--backend", "cpu"]), code, text, capsys)


def test_gpu_missing_is_exit_1(graph_file, capsys):
    from dynpr.backend import gpu_available

    if gpu_available():
        pytest.skip("a GPU is present")
    assert_error(lambda: main(["pagerank", str(graph_file), "--backend", "gpu"]), 1, "gpu", capsys)


def assert_error(call, code, text, capsys):
    try:
        status = call()
    except SystemExit as exit_:  # argparse errors
        status = exit_.code
    captured = capsys.readouterr()
    assert status == code
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("dynpr: error: ") and text in lines[0], captured.err


def test_unconverged_runs_are_reported_or_fail(graph_file, capsys):
    assert main(["pagerank", str(graph_file), "--backend", "cpu"]) == 0
    assert records(capsys)[0]["converged"] is True
    assert main(["pagerank", str(graph_file), "--backend", "cpu", "--max-iterations", "2"]) == 0
    captured = capsys.readouterr()
    (rec,) = [json.loads(line) for line in captured.out.splitlines()]
    assert rec["converged"] is False and rec["iterations"] == 2
    assert "static stopped at --max-iterations 2" in captured.err
    assert main(["pagerank", str(graph_file), "--backend", "cpu", "--max-iterations", "2", "--fail-unconverged"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["dynpr: error: static on cpu stopped at max_iterations=2 before the change met tolerance=1e-10"]


@pytest.mark.parametrize("where", ["build_parser", "_run_pagerank"])
def test_ctrl_c_anywhere_in_main_is_one_line_and_exit_130(monkeypatch, capsys, tmp_path, where):
    """Re-audit WEAK case: Ctrl-C while a subcommand's modules were imported (building the parser)
    printed a 20-35-line KeyboardInterrupt traceback."""
    from dynpr import cli

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt
    monkeypatch.setattr(cli, where, interrupted)
    graph = tmp_path / "g.txt"
    graph.write_text("0 1\n1 2\n")
    assert main(["pagerank", str(graph), "--backend", "cpu"]) == 130
    assert capsys.readouterr().err.splitlines() == ["dynpr: interrupted"]
