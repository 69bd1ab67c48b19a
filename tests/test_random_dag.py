"""dynpr.random_dag.random_dag against independent oracles (networkx longest paths, CPU Kahn)."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from dynpr.random_dag import layer_starts, random_dag
from dynpr.kahn import kahn


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
