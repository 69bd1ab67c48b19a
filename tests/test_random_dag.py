"""dynpr.generate.random_dag's generators against independent oracles (networkx, NumPy, CPU Kahn)."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from dynpr.graph.graph import Graph
from dynpr.kahn import kahn
from dynpr.generate.random_dag import layer_starts, matrix_graph, random_dag, report_matrix, report_name


@pytest.mark.parametrize("n, m, depth", [(50, 200, 7), (1000, 5000, 37), (300, 0, 300), (64, 64, 1), (10, 90, 10)])
def test_depth_is_the_longest_path(n, m, depth):
    graph = random_dag(n, m, depth=depth, seed=4)
    src, dst = graph.edges()
    assert np.all(src < dst)  # lower to higher id only, as the Kahn report's test graphs
    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    g.add_edges_from(zip(src.tolist(), dst.tolist()))
    assert nx.dag_longest_path_length(g) == depth - 1
    result = kahn(graph, backend="cpu")
    assert result.is_dag and result.levels == depth and result.processed == n


def test_every_layer_vertex_has_a_parent_in_the_layer_before():
    n, depth = 500, 20
    graph = random_dag(n, 600, depth=depth, seed=9)
    starts = layer_starts(n, depth)
    src, dst = graph.edges()
    layer_of = np.searchsorted(starts, np.arange(n), side="right") - 1
    parent_layers = {(int(layer_of[d]), int(layer_of[s])) for s, d in zip(src, dst)}
    for v in range(starts[1], n):
        sources = src[dst == v]
        assert np.any(layer_of[sources] == layer_of[v] - 1), v
    assert all(child > parent for child, parent in parent_layers)


def test_edge_count_and_determinism():
    a = random_dag(2000, 30_000, depth=40, seed=5)
    b = random_dag(2000, 30_000, depth=40, seed=5)
    c = random_dag(2000, 30_000, depth=40, seed=6)
    np.testing.assert_array_equal(a.keys(), b.keys())
    assert not np.array_equal(a.keys(), c.keys())
    assert 0.9 * 30_000 <= a.num_edges <= 30_000  # only duplicates are dropped


def test_uniform_pairs_are_acyclic():
    graph = random_dag(3000, 20_000, seed=1)
    src, dst = graph.edges()
    assert np.all(src < dst) and graph.num_edges > 19_000
    result = kahn(graph, backend="cpu")
    assert result.is_dag and result.processed == 3000


@pytest.mark.parametrize("kwargs", [dict(num_vertices=0, num_edges=1), dict(num_vertices=10, num_edges=-1),
                                    dict(num_vertices=10, num_edges=5, depth=0),
                                    dict(num_vertices=10, num_edges=5, depth=11)])
def test_bad_arguments(kwargs):
    with pytest.raises(ValueError):
        random_dag(**kwargs)


# ---- the Kahn report's benchmark graphs (dense matrices) ----


def _networkx(matrix: np.ndarray) -> nx.DiGraph:
    return nx.from_numpy_array(matrix, create_using=nx.DiGraph)


@pytest.mark.parametrize("n", [1, 60, 1500])  # 1500 > the generator's row chunk: blocks past the first
def test_report_matrices_are_cyclic_and_acyclic(n):
    cyclic, acyclic = report_matrix(n, "cyclic", seed=3), report_matrix(n, "acyclic", seed=3)
    for matrix in (cyclic, acyclic):
        assert matrix.shape == (n, n) and matrix.dtype == np.uint8 and set(np.unique(matrix)) <= {0, 1}
    assert not np.tril(acyclic).any()  # edges only from a lower to a higher id
    if n > 1:
        # fair coin flips: the share of ones is 1/2 (of the upper triangle for the acyclic one)
        assert abs(cyclic.mean() - 0.5) < 5 / n
        assert abs(acyclic.sum() / (n * (n - 1) / 2) - 0.5) < 5 / n
        assert nx.is_directed_acyclic_graph(_networkx(acyclic))
    if n >= 60:
        assert not nx.is_directed_acyclic_graph(_networkx(cyclic))


def test_report_matrices_are_deterministic_and_the_kinds_independent():
    a = report_matrix(1200, "cyclic", seed=5)
    assert np.array_equal(a, report_matrix(1200, "cyclic", seed=5))
    assert not np.array_equal(a, report_matrix(1200, "cyclic", seed=6))
    # the acyclic matrix is not the cyclic one's upper triangle: each kind draws its own
    assert not np.array_equal(np.triu(a, 1), report_matrix(1200, "acyclic", seed=5))
    sparse = report_matrix(1200, "cyclic", density=0.01, seed=5)
    assert abs(sparse.mean() - 0.01) < 0.002


@pytest.mark.parametrize("kind, n, density", [("cyclic", 300, 0.5), ("acyclic", 1100, 0.02), ("cyclic", 5, 1.0)])
def test_matrix_graph_is_the_matrix_in_csr(kind, n, density):
    matrix = report_matrix(n, kind, density=density, seed=1)
    graph = matrix_graph(matrix)
    rows, cols = np.nonzero(matrix)
    expected = Graph.from_edges(rows, cols, n, self_loops=False)
    for field in ("offsets", "targets", "in_offsets", "sources"):
        np.testing.assert_array_equal(getattr(graph, field), getattr(expected, field))


def test_report_acyclic_depth_is_the_reports():
    # The report's Table 7 lists 5758 and 5772 levels for its 10k acyclic graphs; a fair-coin
    # upper-triangular matrix has a longest path near 0.58 n. A smaller n keeps the test quick.
    n = 2000
    result = kahn(matrix_graph(report_matrix(n, "acyclic", seed=0)), backend="cpu")
    assert result.is_dag and 0.54 * n < result.levels < 0.62 * n


@pytest.mark.parametrize("kind, n, name", [("cyclic", 10000, "cyclic-10k"), ("acyclic", 40000, "acyclic-40k"),
                                           ("acyclic", 1500, "acyclic-1500")])
def test_report_names(kind, n, name):
    assert report_name(kind, n) == name


@pytest.mark.parametrize("kwargs", [dict(kind="dense"), dict(density=0.0), dict(density=1.5),
                                    dict(num_vertices=0)])
def test_report_matrix_rejects_bad_arguments(kwargs):
    args = dict(num_vertices=10, kind="cyclic") | kwargs
    with pytest.raises(ValueError):
        report_matrix(args.pop("num_vertices"), args.pop("kind"), **args)
