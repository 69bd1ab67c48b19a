"""Edge lists as users have them (dynpr.io.edge_lists), read by the CLI and the library, against networkx."""

from __future__ import annotations

import logging
import re

import networkx as nx
import numpy as np
import pandas as pd
import pytest

import dynpr
from dynpr.io import edge_lists
from dynpr.cli import main
from dynpr.io.edge_lists import EdgeListOptions, Layout, read_edge_list, read_graph_file, sniff
from dynpr.errors import InputError, NoGpuError, ParseError
from dynpr.io.prepare import build_graph, read_graph_with_ids

from cli_errors import one_error_line

# labels whose sorted order is not the order of first appearance, one of them dangling ("erin")
LABELLED = [("carol", "alice"), ("alice", "bob"), ("bob", "carol"), ("dave", "alice"), ("dave", "erin"),
            ("bob", "dave")]
WEIGHTED = [(10, 20, 0.5), (20, 30, 2.0), (30, 10, 1e-3), (30, 40, 7.0), (40, 10, 1.0), (50, 10, 3.0)]
UNDIRECTED = [(1, 2), (2, 3), (3, 4), (4, 1), (1, 3), (5, 1)]


def networkx_ranks(graph: nx.DiGraph, self_loops: bool) -> pd.Series:
    graph = nx.DiGraph(graph)
    if self_loops:
        graph.add_edges_from((v, v) for v in list(graph.nodes))
    return pd.Series(nx.pagerank(graph, alpha=0.85, tol=1e-15, max_iter=1000, weight=None))


def assert_same_ranks(ranks: pd.Series, expected: pd.Series) -> None:
    assert sorted(ranks.index) == sorted(expected.index)
    assert float(np.abs(ranks - expected.reindex(ranks.index)).sum()) < 1e-10


@pytest.fixture
def labelled_csv(tmp_path):
    path = tmp_path / "people.csv"
    path.write_text("source,target\n" + "".join(f"{u},{v}\n" for u, v in LABELLED))
    return path


@pytest.fixture
def weighted_txt(tmp_path):
    path = tmp_path / "weighted.txt"
    path.write_text("# u v w\n" + "".join(f"{u} {v} {w}\n" for u, v, w in WEIGHTED))
    return path


@pytest.fixture
def undirected_tsv(tmp_path):
    path = tmp_path / "undirected.tsv"
    path.write_text("".join(f"{u}\t{v}\n" for u, v in UNDIRECTED))
    return path


# ----------------------------------------------------------------------------- against networkx


@pytest.mark.parametrize("self_loops", [True, False])
def test_library_reads_a_headed_csv_of_labels(labelled_csv, self_loops):
    ranks = dynpr.pagerank_file(labelled_csv, backend="cpu", self_loops=self_loops, tolerance=1e-15)
    assert ranks.index.tolist() == ["alice", "bob", "carol", "dave", "erin"]
    assert_same_ranks(ranks, networkx_ranks(nx.DiGraph(LABELLED), self_loops))


def test_library_reads_an_undirected_list(undirected_tsv):
    ranks = dynpr.pagerank_file(undirected_tsv, backend="cpu", undirected=True, tolerance=1e-15)
    assert_same_ranks(ranks, networkx_ranks(nx.Graph(UNDIRECTED).to_directed(), self_loops=True))
    directed = dynpr.pagerank_file(undirected_tsv, backend="cpu", tolerance=1e-15)
    assert float(np.abs(directed - ranks).sum()) > 0.1  # the flag is what made them agree


def test_library_reads_a_weighted_list_and_says_the_weights_are_ignored(weighted_txt, caplog):
    with caplog.at_level(logging.WARNING, logger="dynpr.io.edge_lists"):
        ranks = dynpr.pagerank_file(weighted_txt, backend="cpu", self_loops=False, tolerance=1e-15)
    assert_same_ranks(ranks, networkx_ranks(nx.DiGraph([(u, v) for u, v, _ in WEIGHTED]), self_loops=False))
    notes = [r.getMessage() for r in caplog.records if "weights" in r.getMessage()]
    assert len(notes) == 1 and "weighted.txt: column 3 read as edge weights and ignored" in notes[0]


def test_cli_reads_the_three_lists(labelled_csv, undirected_tsv, weighted_txt, tmp_path, capsys):
    cases = [(labelled_csv, [], nx.DiGraph(LABELLED)),
             (undirected_tsv, ["--undirected"], nx.Graph(UNDIRECTED).to_directed()),
             (weighted_txt, [], nx.DiGraph([(u, v) for u, v, _ in WEIGHTED]))]
    for path, flags, graph in cases:
        out = tmp_path / f"{path.stem}.ranks.csv"
        assert main(["pagerank", str(path), *flags, "--backend", "cpu", "--tolerance", "1e-15",
                     "--ranks-out", str(out)]) == 0
        table = pd.read_csv(out, dtype={"vertex": str})
        expected = networkx_ranks(graph, self_loops=True)
        expected.index = expected.index.map(str)
        assert_same_ranks(table.set_index("vertex")["rank"], expected)
    assert "column 3 read as edge weights" in capsys.readouterr().err


def test_cli_flags_override_what_the_file_suggests(tmp_path, capsys):
    path = tmp_path / "semi.txt"
    path.write_text("u;v\n7;8\n8;9\n")  # 'u;v' is no header without the semicolon as delimiter
    out = tmp_path / "r.csv"
    assert main(["pagerank", str(path), "--delimiter", ";", "--header", "--backend", "cpu",
                 "--ranks-out", str(out)]) == 0
    assert sorted(pd.read_csv(out)["vertex"]) == [7, 8, 9]
    line = one_error_line(capsys, ["pagerank", str(path), "--backend", "cpu"])
    assert "line 1 of the data: expected 2 or 3 fields" in line


# ----------------------------------------------------------------------------- layouts


@pytest.mark.parametrize("text, layout", [
    ("1 2\n2 3\n", Layout(None, False, 2, False)),
    ("1,2\n2,3\n", Layout(",", False, 2, False)),
    ("from,to\n1,2\n", Layout(",", True, 2, False)),
    ("a b\tc d\ne f\tg\n", Layout("\t", False, 2, True)),  # labels holding spaces
    ("alice bob\nbob carol\n", Layout(None, False, 2, True)),
    ("x y w\nalice bob 1.5\n", Layout(None, True, 3, True)),  # a name above a number: a header
    ("1 2 0.5\n", Layout(None, False, 3, False)),
])
def test_sniff_finds_the_layout(write_file, text, layout):
    assert sniff(write_file("e.txt", text)) == layout


def test_a_header_read_as_an_edge_when_told_so(write_file):
    path = write_file("e.csv", "source,target\nalice,bob\n")
    assert read_edge_list(path).labels.tolist() == ["alice", "bob"]
    assert read_edge_list(path, EdgeListOptions(header=False)).labels.tolist() == ["alice", "bob", "source", "target"]


def test_third_column_is_a_time_only_when_said_temporal(write_file):
    path = write_file("t.txt", "1 2 30\n2 3 10\n")
    assert read_graph_file(path).time is None
    temporal = read_graph_file(path, options=EdgeListOptions(temporal=True))
    assert temporal.time.tolist() == [10, 30] and temporal.src.tolist() == [2, 1]
    assert read_graph_file(path, "snap-temporal").time.tolist() == [10, 30]  # a catalog format says so
    csv = write_file("t.csv", "src,dst,time\na,b,5\nb,c,1\n")
    edges = read_edge_list(csv, EdgeListOptions(temporal=True))
    assert edges.labels[edges.src].tolist() == ["b", "a"] and edges.time.tolist() == [1, 5]


def test_undirected_temporal_list_stays_in_time_order(write_file):
    edges = read_edge_list(write_file("t.txt", "1 2 5\n3 4 1\n"), EdgeListOptions(temporal=True, undirected=True))
    assert edges.time.tolist() == [1, 1, 5, 5]
    assert sorted(zip(edges.src.tolist(), edges.dst.tolist())) == [(1, 2), (2, 1), (3, 4), (4, 3)]


def test_plain_snap_files_keep_the_fast_path(write_file, monkeypatch):
    calls = []
    monkeypatch.setattr(edge_lists, "read_snap", lambda path, temporal: calls.append(temporal) or "fast")
    assert read_edge_list(write_file("e.txt", "# c\n1 2\n")) == "fast"
    assert read_edge_list(write_file("t.txt", "1 2 3\n"), EdgeListOptions(temporal=True)) == "fast"
    assert calls == [False, True]


def test_labels_go_through_a_prepared_graph_and_back(write_file, tmp_path):
    graph, _, ids, stats = build_graph(read_edge_list(write_file("e.csv", "b,a\nc,b\n")))
    assert ids.tolist() == ["a", "b", "c"] and stats["renumbered"]
    graph.save(tmp_path / "g.npz")
    loaded, _, loaded_ids = read_graph_with_ids(tmp_path / "g.npz")
    assert loaded_ids.tolist() == ["a", "b", "c"] and loaded.sha256 == graph.sha256


# ----------------------------------------------------------------------------- refusals


@pytest.mark.parametrize("text, line, reason", [
    ("1,2\n" * 150 + "2,3.0\n", 151, "expected non-negative integer ids as on the lines before, got '2,3.0'"),
    ("1 2 0.5\n2 3 heavy\n", 2, "expected a finite number (a weight) in column 3, got '2 3 heavy'"),
    ("1 2 0.5\n2 3 inf\n", 2, "expected a finite number (a weight) in column 3, got '2 3 inf'"),
    ("1 2 0.5\n2 3\n", 2, "expected 3 fields (source, target, weight), got 2"),
    ("source,target\na,b\n,c\n", 3, "an empty vertex label"),
    ("src dst\n" + "1 2\n" * 150 + "alice bob\n", 152, "ask for labels"),
    ("1 2\n2 3\n3 oops\n", 3, "expected 2 non-negative integer ids, got '3 oops'"),  # the plain SNAP path
    ("1 2 0.5\n2 3\n3 oops 1\n", 2, "expected 3 fields"),
    ("a b\nb c\nc \x01d\n", 3, "binary data, not a text edge list"),
])
def test_a_bad_line_is_named(write_file, text, line, reason):
    with pytest.raises(ParseError, match=rf"e\.txt: line {line}: .*{re.escape(reason)}"):
        read_edge_list(write_file("e.txt", text))


def test_labels_asked_for_read_integer_looking_ids_as_labels(write_file):
    edges = read_edge_list(write_file("e.txt", "1 2\n" * 150 + "alice bob\n"), EdgeListOptions(labels=True))
    assert edges.labels.tolist() == ["1", "2", "alice", "bob"]


def test_text_options_are_refused_where_they_do_not_apply(write_file, tmp_path, capsys):
    mtx = write_file("m.mtx", "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 2\n")
    with pytest.raises(InputError, match="a Matrix Market file has no delimiter"):
        read_graph_file(mtx, options=EdgeListOptions(header=True))
    assert read_graph_file(mtx, options=EdgeListOptions(undirected=True)).src.tolist() == [0, 1]
    graph, _, _, _ = build_graph(read_graph_file(mtx))
    graph.save(tmp_path / "g.npz")
    line = one_error_line(capsys, ["kahn", str(tmp_path / "g.npz"), "--undirected", "--backend", "cpu"])
    assert "g.npz: is a prepared graph, not a text edge list" in line
    assert "--delimiter" in one_error_line(capsys, ["kahn", str(mtx), "--delimiter", "xy"])


def test_two_fields_refused_as_temporal(write_file):
    with pytest.raises(ParseError, match="a temporal edge list needs a third column of times"):
        read_edge_list(write_file("e.txt", "1 2\n"), EdgeListOptions(temporal=True))


# ----------------------------------------------------------------------------- API parity


def test_nstart_is_networkx_semantics(labelled_csv):
    plain = dynpr.pagerank_file(labelled_csv, backend="cpu", tolerance=1e-14)
    started = dynpr.pagerank_file(labelled_csv, backend="cpu", tolerance=1e-14, nstart={"alice": 3.0, "bob": 1.0})
    assert float(np.abs(plain - started).sum()) < 1e-12
    with pytest.raises(InputError, match="nstart: .* not all 0"):
        dynpr.pagerank_file(labelled_csv, backend="cpu", nstart={"nobody": 1.0})
    with pytest.raises(dynpr_errors().ConvergenceError):
        dynpr.pagerank_file(labelled_csv, backend="cpu", max_iterations=2)


def dynpr_errors():
    from dynpr import errors

    return errors


def _power_iteration_changes(n: int, seed: int) -> list[np.ndarray]:
    """The change of each iteration of PageRank on a random graph (self-loops, so no dangling vertex)."""
    rng = np.random.default_rng(seed)
    adjacency = (rng.random((n, n)) < 0.2) | np.eye(n, dtype=bool)
    transition = adjacency / adjacency.sum(axis=1, keepdims=True)
    ranks, changes = np.full(n, 1 / n), []
    for _ in range(200):
        new = 0.15 / n + 0.85 * ranks @ transition
        changes.append(new - ranks)
        ranks = new
    return changes


def test_tolerance_mapping_bounds_networkx_stop():
    n, tol = 50, 1e-8
    changes = _power_iteration_changes(n, seed=3)

    def first_stop(rule):
        return next(i for i, change in enumerate(changes) if rule(change))

    networkx = first_stop(lambda c: np.abs(c).sum() < n * tol)
    strict = dynpr.tolerance_from_networkx(tol, n)
    loose = dynpr.tolerance_from_networkx(tol, n, at_least_as_strict=False)
    assert first_stop(lambda c: np.abs(c).max() < strict) >= networkx
    assert first_stop(lambda c: np.abs(c).max() < loose) <= networkx
    back = dynpr.tolerance_to_networkx(strict, n)
    assert first_stop(lambda c: np.abs(c).sum() < n * back) >= first_stop(lambda c: np.abs(c).max() < strict)
    with pytest.raises(InputError, match="num_vertices"):
        dynpr.tolerance_to_networkx(1e-6, 0)


def test_no_gpu_error_speaks_the_library_language(monkeypatch, capsys, labelled_csv):
    from dynpr import backend

    monkeypatch.setattr(backend, "gpu_available", lambda: False)
    with pytest.raises(NoGpuError) as raised:
        backend.resolve_backend("gpu")
    assert "--" not in str(raised.value) and "backend 'cpu'" in str(raised.value)
    line = one_error_line(capsys, ["pagerank", str(labelled_csv), "--backend", "gpu"], code=1)
    assert line.endswith("on the command line: --backend cpu or auto")


def test_a_catalog_entry_says_how_its_list_is_read(repo_root, write_file):
    import dataclasses

    import jsonschema
    import yaml

    from dynpr.io.catalog import get_dataset
    from dynpr.io.prepare import read_dataset

    entry = {"kind": "static", "format": "snap-edgelist", "url": "https://example.org/p.csv", "vertices": 3,
             "edges": 2, "delimiter": ";", "header": True, "labels": True, "undirected": True}
    schema = yaml.safe_load((repo_root / "workflow/schemas/catalog.schema.yaml").read_text())
    jsonschema.validate({"datasets": {"people": entry}}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"datasets": {"people": {**entry, "delimiter": "x"}}}, schema)
    ds = dataclasses.replace(get_dataset("CollegeMsg"), kind="static", format="snap-edgelist", sha256=None,
                             temporal_edges=None, delimiter=";", header=True, labels=True, undirected=True)
    edges, _ = read_dataset(ds, write_file("p.txt", "a;b\n1;x\nx;2\n"))
    assert edges.labels.tolist() == ["1", "2", "x"]
    assert sorted(zip(edges.src.tolist(), edges.dst.tolist())) == [(0, 2), (1, 2), (2, 0), (2, 1)]
