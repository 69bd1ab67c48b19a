"""Ranks with original vertex ids: the CLI's --ranks-out table, --top, --no-self-loops, dynpr.io.ranks."""

from __future__ import annotations

import json

import networkx as nx
import numpy as np
import pandas as pd
import pytest

from dynpr import pagerank as pr
from dynpr.io import ranks
from dynpr.cli import main
from dynpr.graph.graph import Graph
from dynpr.io.prepare import read_graph_with_ids

# ids far from 0..n-1, so a table that forgot to map them back cannot pass
EDGES = [(10, 20), (20, 30), (30, 10), (30, 40), (40, 50), (50, 40), (70, 10), (20, 70), (70, 99)]


@pytest.fixture
def graph_file(tmp_path):
    path = tmp_path / "ids.txt"
    path.write_text("".join(f"{u} {v}\n" for u, v in EDGES))
    return path


def networkx_ranks(edges, self_loops: bool) -> dict:
    g = nx.DiGraph(edges)
    if self_loops:
        g.add_edges_from((v, v) for v in list(g.nodes))
    return nx.pagerank(g, alpha=0.85, tol=1e-15, max_iter=1000)


def test_table_matches_networkx_with_loops_on_collegemsg(repo_root, tmp_path, capsys):
    source = repo_root / "datasets" / "embedded" / "CollegeMsg.txt.gz"
    out = tmp_path / "ranks.csv"
    assert main(["pagerank", str(source), "--backend", "cpu", "--tolerance", "1e-13", "--ranks-out", str(out)]) == 0
    assert json.loads(capsys.readouterr().out)["self_loops_added"] is True
    table = pd.read_csv(out)
    assert list(table.columns) == ["vertex", "rank", "approach"] and (table["approach"] == "static").all()
    assert table["rank"].is_monotonic_decreasing
    edges = np.loadtxt(source, dtype=np.int64, usecols=(0, 1))
    expected = networkx_ranks(edges.tolist(), self_loops=True)
    assert len(table) == len(expected) == 1899
    got = table.set_index("vertex")["rank"]
    assert np.abs(got - pd.Series(expected)).sum() < 1e-8


def test_no_self_loops_is_networkx_default_with_dangling_vertices(graph_file, tmp_path, capsys):
    out = tmp_path / "ranks.csv.gz"
    assert main(["pagerank", str(graph_file), "--no-self-loops", "--tolerance", "1e-14", "--ranks-out", str(out)]) == 0
    rec = json.loads(capsys.readouterr().out)
    # auto picks the CPU; vertex 99 is dangling and its rank is spread as NetworkX does
    assert rec["backend"] == "cpu" and rec["self_loops"] == 0 and rec["self_loops_added"] is False
    assert rec["edges"] == len(EDGES)
    got = pd.read_csv(out).set_index("vertex")["rank"]
    expected = pd.Series(networkx_ranks(EDGES, self_loops=False))
    assert np.abs(got - expected).max() < 1e-12
    with_loops = pd.Series(networkx_ranks(EDGES, self_loops=True))
    assert np.abs(got - with_loops).sum() > 0.05  # the two conventions differ, so the test can tell them apart


@pytest.mark.parametrize("argv, message", [
    (["--no-self-loops", "--backend", "gpu"], "CPU engine only"),
    (["--no-self-loops", "--batch", "b.npz"], "without --batch"),
    (["--top", "3"], "--top needs --ranks-out"),
    (["--ranks-out", "r.npy"], "must end in"),
])
def test_refused_before_running(graph_file, capsys, argv, message):
    assert main(["pagerank", str(graph_file), *argv]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and message in captured.err and len(captured.err.strip().splitlines()) == 1


def test_parquet_without_pyarrow_is_one_clear_error(graph_file, capsys, monkeypatch):
    real = ranks.importlib.util.find_spec
    monkeypatch.setattr(ranks.importlib.util, "find_spec", lambda name: None if name == "pyarrow" else real(name))
    assert main(["pagerank", str(graph_file), "--ranks-out", "r.parquet"]) == 2
    assert "needs pyarrow" in capsys.readouterr().err


def test_dangling_vertices_refuse_frontier_approaches():
    from dynpr.batches import Batch

    graph = Graph.from_edges(np.array([0, 1]), np.array([1, 2]), self_loops=False)
    assert pr.static(graph, backend="cpu").ranks.sum() == pytest.approx(1.0)
    with pytest.raises(ValueError, match="dangling"):
        pr.update("dfp", graph, graph, Batch.empty(), np.full(3, 1 / 3), backend="cpu")


def test_top_k_and_by_id(graph_file, tmp_path, capsys):
    out = tmp_path / "top.csv"
    assert main(["pagerank", str(graph_file), "--top", "3", "--ranks-out", str(out)]) == 0
    capsys.readouterr()
    top = pd.read_csv(out)
    graph, _, ids = read_graph_with_ids(graph_file)
    series = ranks.by_id(pr.static(graph, backend="cpu").ranks, ids)
    assert set(series.index) == {u for e in EDGES for u in e}
    assert list(top["vertex"]) == list(series.sort_values(ascending=False).index[:3])
    np.testing.assert_allclose(top["rank"], series.sort_values(ascending=False).iloc[:3], rtol=1e-12)
    with pytest.raises(ValueError, match="ranks for"):
        ranks.by_id(np.ones(2), ids)
