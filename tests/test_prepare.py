"""Prepared graphs: dedup, self-loops, stats, checks against the catalog, embedded datasets."""

from __future__ import annotations

import dataclasses
import json

import networkx as nx
import numpy as np
import pytest

from dynpr.io.catalog import get_dataset, load_catalog
from dynpr.io.readers import EdgeData
from dynpr.io.prepare import CountMismatchError, build_graph, load_prepared, prepare, read_graph


def _edge_set(graph):
    src, dst = graph.edges()
    return set(zip(src.tolist(), dst.tolist()))


def test_build_graph_against_networkx(random_edges):
    src, dst = random_edges(40, 300, seed=1)
    src[:3] = dst[:3] = [5, 7, 7]  # self-loops in the input (5 and 7 twice)
    src = src * 3 + 2  # sparse ids: renumbered densely in ascending order
    dst = dst * 3 + 2
    graph, temporal, vertex_ids, stats = build_graph(EdgeData(src, dst), name="t")
    original = nx.DiGraph(list(zip(src.tolist(), dst.tolist())))
    assert vertex_ids.tolist() == sorted(original.nodes)
    reference = nx.relabel_nodes(original, {v: i for i, v in enumerate(vertex_ids.tolist())})
    n = reference.number_of_nodes()
    assert graph.num_vertices == stats["vertices"] == stats["distinct_vertices"] == n
    assert stats["renumbered"] and stats["max_id"] == int(max(src.max(), dst.max()))
    assert stats["edges"] == reference.number_of_edges()
    assert stats["self_loops_in_input"] == int((src == dst).sum())
    assert stats["distinct_self_loops_in_input"] == nx.number_of_selfloops(reference)
    assert stats["duplicates_removed"] == len(src) - reference.number_of_edges()
    reference.add_edges_from((v, v) for v in range(n))
    assert _edge_set(graph) == set(reference.edges())
    assert stats["edges_with_self_loops"] == graph.num_edges == reference.number_of_edges()
    in_degree = np.array([reference.in_degree(v) for v in range(n)])
    out_degree = np.array([reference.out_degree(v) for v in range(n)])
    assert np.array_equal(graph.in_degree, in_degree) and np.array_equal(graph.out_degree, out_degree)
    assert stats["max_in_degree"] == in_degree.max() and stats["max_out_degree"] == out_degree.max()
    assert graph.offsets.dtype == np.int64 and graph.targets.dtype == np.int32
    # transpose holds exactly the reversed edges
    rows = np.repeat(np.arange(n), np.diff(graph.in_offsets))
    assert set(zip(graph.sources.tolist(), rows.tolist())) == _edge_set(graph)
    assert temporal is None and stats["temporal_edges"] is None


def test_temporal_edges_kept_in_order_with_self_loop_events():
    src, dst, time = np.array([3, 1, 1, 2]), np.array([3, 2, 2, 0]), np.array([5, 6, 6, 9])
    graph, temporal, _, stats = build_graph(EdgeData(src, dst, time))
    assert [t.tolist() for t in temporal] == [[3, 1, 1, 2], [3, 2, 2, 0], [5, 6, 6, 9]]
    assert temporal[0].dtype == np.int32 and temporal[2].dtype == np.int64
    assert stats["temporal_edges"] == 4 and stats["edges"] == 3 and stats["self_loops_in_input"] == 1


def test_ids_beyond_int32_are_renumbered():
    graph, _, vertex_ids, stats = build_graph(EdgeData(np.array([0, 2**40]), np.array([1, 2])), name="huge.txt")
    assert vertex_ids.tolist() == [0, 1, 2, 2**40] and graph.num_vertices == 4
    assert _edge_set(graph) == {(0, 1), (3, 2)} | {(v, v) for v in range(4)}


def test_matrix_ids_beyond_int32():
    with pytest.raises(ValueError, match="int32"):
        build_graph(EdgeData(np.array([0, 2**31]), np.array([1, 2]), num_vertices=2**31 + 1), name="huge.mtx")


def test_matrix_dimension_is_the_vertex_count():
    graph, _, vertex_ids, stats = build_graph(EdgeData(np.array([0]), np.array([1]), num_vertices=5))
    assert graph.num_vertices == 5 and stats["distinct_vertices"] == 2 and not stats["renumbered"]
    assert vertex_ids.tolist() == list(range(5))
    with pytest.raises(ValueError, match="not below the dimension"):
        build_graph(EdgeData(np.array([0]), np.array([5]), num_vertices=5))


def test_college_msg(tmp_path):
    stats = prepare("CollegeMsg", tmp_path / "g.npz", tmp_path / "g.json")
    assert json.loads((tmp_path / "g.json").read_text()) == stats
    # SNAP: 1,899 nodes (ids 1..1899, renumbered 0..1898), 59,835 temporal edges, 20,296 static edges
    assert stats["vertices"] == 1899 and stats["max_id"] == 1899
    assert stats["temporal_edges"] == 59835 and stats["edges"] == 20296
    assert stats["edges_with_self_loops"] == 20296 + 1899 - stats["distinct_self_loops_in_input"]
    assert stats["source_sha256"] == get_dataset("CollegeMsg").sha256
    graph, temporal = load_prepared(tmp_path / "g.npz")
    assert graph.num_vertices == 1899 and graph.num_edges == stats["edges_with_self_loops"]
    assert (np.diff(temporal[2]) >= 0).all() and len(temporal[0]) == 59835
    with np.load(tmp_path / "g.npz") as data:
        assert data["vertex_ids"].tolist() == list(range(1, 1900))
    assert (graph.out_degree >= 1).all()  # every vertex has its self-loop


@pytest.mark.parametrize("name, vertices, max_id, edges", [
    ("sx-mathoverflow", 24818, 88580, 239978),
    ("web-NotreDame", 325729, 325728, 1497134),
    ("soc-Epinions1", 75879, 75887, 508837),
])
def test_other_embedded_graphs_match_published_counts(tmp_path, name, vertices, max_id, edges):
    stats = prepare(name, tmp_path / "g.npz", tmp_path / "g.json")
    assert (stats["vertices"], stats["max_id"], stats["edges"]) == (vertices, max_id, edges)


def test_count_mismatch_names_the_count_and_writes_nothing(tmp_path):
    ds = dataclasses.replace(get_dataset("CollegeMsg"), edges=20297)
    with pytest.raises(CountMismatchError, match=r"prepared edges = 20,296 .* publishes 20,297"):
        prepare(ds, tmp_path / "g.npz", tmp_path / "g.json")
    ds = dataclasses.replace(get_dataset("CollegeMsg"), vertices=1900)
    with pytest.raises(CountMismatchError, match="prepared vertices = 1,899"):
        prepare(ds, tmp_path / "g.npz", tmp_path / "g.json")
    assert list(tmp_path.iterdir()) == []


def test_corrupt_source_is_rejected(tmp_path, write_file):
    ds = get_dataset("CollegeMsg")
    bad = write_file(f"src/{ds.file_name}", "1 2 3\n")
    with pytest.raises(ValueError, match="sha256"):
        prepare(ds, tmp_path / "g.npz", tmp_path / "g.json", source=bad)
    assert not (tmp_path / "g.npz").exists() and not (tmp_path / "g.json").exists()


def test_malformed_source_names_line_and_writes_nothing(tmp_path, write_file):
    ds = dataclasses.replace(get_dataset("CollegeMsg"), sha256=None)
    bad = write_file("src/x.txt", "1 2 3\n2 3 4\n3 oops 5\n")
    with pytest.raises(ValueError, match=r"x\.txt: line 3"):
        prepare(ds, tmp_path / "g.npz", tmp_path / "g.json", source=bad)
    assert not (tmp_path / "g.npz").exists() and not (tmp_path / "g.json").exists()


def test_generated_rmat(tmp_path):
    ds = dataclasses.replace(load_catalog()["rmat-16"], scale=8, vertices=256)
    stats = prepare(ds, tmp_path / "g.npz", tmp_path / "g.json")
    graph, temporal = load_prepared(tmp_path / "g.npz")
    assert temporal is None and graph.num_vertices == 256 == stats["vertices"]
    assert stats["self_loops_in_input"] == 0 and stats["duplicates_removed"] == 0
    assert stats["source_sha256"] is None and stats["scale"] == 8


def test_read_graph_path_and_name(tmp_path, write_file):
    path = write_file("g.txt", "# c\n0\t1\n1\t2\n1\t2\n")
    graph, temporal = read_graph(path)
    assert _edge_set(graph) == {(0, 1), (1, 2), (0, 0), (1, 1), (2, 2)} and temporal is None
    graph, temporal = read_graph("CollegeMsg", results=tmp_path)
    assert graph.num_vertices == 1899 and len(temporal[0]) == 59835
    prepare("CollegeMsg", tmp_path / "CollegeMsg.npz", tmp_path / "CollegeMsg.json")
    again, _ = read_graph("CollegeMsg", results=tmp_path)
    assert np.array_equal(again.targets, graph.targets)
    with pytest.raises(KeyError, match="unknown dataset"):
        read_graph("not-a-graph")
    for missing in ("nope.txt", "nope.mtx.gz", str(tmp_path / "nope")):
        with pytest.raises(FileNotFoundError, match="no such file"):
            read_graph(missing)


def test_generated_rmat_of_the_counter_stream_is_the_same_graph_on_every_backend(tmp_path, monkeypatch, caplog):
    import dynpr.generate.rmat as rmat_mod
    from dynpr.backend import gpu_available

    monkeypatch.setattr(rmat_mod, "CHUNK_EDGES", 1000)  # 8192 drawn edges: the counter-based stream
    ds = dataclasses.replace(load_catalog()["rmat-16"], scale=9, vertices=512)
    want = rmat_mod.rmat_graph(9, ds.edge_factor, ds.seed, backend="cpu")
    for backend in ("cpu", "auto") + (("gpu",) if gpu_available() else ()):
        with caplog.at_level("INFO", logger="dynpr.io.prepare"):
            prepare(ds, tmp_path / "g.npz", tmp_path / "g.json", backend=backend)
        graph, _ = load_prepared(tmp_path / "g.npz")
        assert graph.sha256 == want.sha256
        where = "GPU" if backend != "cpu" and gpu_available() else "CPU"
        assert f"generated R-MAT scale 9 edge factor 16 on the {where} in" in caplog.text
        caplog.clear()


def test_a_cached_prepared_graph_of_another_graph_is_refused(tmp_path):
    """Re-audit WEAK case: a results/graphs/CollegeMsg.npz that held another graph (75,879 vertices against
    the catalog's 1,899) was accepted, by the CLI's catalog name and by the workflow's jobs."""
    from dynpr.graph.graph import Graph
    from dynpr.io.prepare import check_prepared_file

    prepare("CollegeMsg", tmp_path / "CollegeMsg.npz", tmp_path / "CollegeMsg.json")
    check_prepared_file(tmp_path / "CollegeMsg.npz", "CollegeMsg")  # its own file passes
    Graph.from_edges(np.array([0, 1, 2]), np.array([1, 2, 0]), 5).save(tmp_path / "CollegeMsg.npz")
    message = (rf"{tmp_path}/CollegeMsg\.npz: holds a graph of 5 vertices, but the catalog's CollegeMsg has 1,899: "
               r"it is another graph's file; delete it and prepare it again")
    with pytest.raises(CountMismatchError, match=message):
        check_prepared_file(tmp_path / "CollegeMsg.npz", "CollegeMsg")
    with pytest.raises(CountMismatchError, match=message):
        read_graph("CollegeMsg", results=tmp_path)
