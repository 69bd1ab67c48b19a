"""Kahn cycle detection on the CPU (CSR and dense matrix) against networkx."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from dynpr.graph.graph import Graph
from dynpr.kahn import kahn, kahn_dense


def to_networkx(graph: Graph) -> nx.DiGraph:
    g = nx.DiGraph()
    g.add_nodes_from(range(graph.num_vertices))
    src, dst = graph.edges()
    g.add_edges_from(zip(src.tolist(), dst.tolist()))
    return g


def expected_remaining(g: nx.DiGraph) -> list[int]:
    """Vertices on a cycle (non-trivial SCC or self-loop) and everything downstream of them."""
    cyclic = set()
    for comp in nx.strongly_connected_components(g):
        if len(comp) > 1 or any(g.has_edge(v, v) for v in comp):
            cyclic |= comp
    left = set(cyclic)
    for v in cyclic:
        left |= nx.descendants(g, v)
    return sorted(left)


def random_dag(n: int, m: int, seed: int) -> Graph:
    rng = np.random.default_rng(seed)
    u, v = rng.integers(0, n, m), rng.integers(0, n, m)
    keep = u < v
    perm = rng.permutation(n)  # hide the topological order
    return Graph.from_edges(perm[u[keep]], perm[v[keep]], n, self_loops=False)


@pytest.mark.parametrize("seed", range(4))
def test_random_dag(seed):
    graph = random_dag(300, 1500, seed)
    nxg = to_networkx(graph)
    assert nx.is_directed_acyclic_graph(nxg)
    result = kahn(graph, backend="cpu")
    assert result.is_dag and result.processed == 300
    assert result.levels == len(list(nx.topological_generations(nxg)))
    assert result.remaining.dtype == np.int32 and result.remaining.size == 0
    assert result.backend == "cpu" and result.time_ms >= 0


@pytest.mark.parametrize("seed", range(4))
def test_cyclic_graph(seed):
    rng = np.random.default_rng(100 + seed)
    dag = random_dag(300, 900, seed)
    src, dst = dag.edges()
    # A few back edges close cycles somewhere in the middle of the order.
    back_src, back_dst = rng.integers(0, 300, 3), rng.integers(0, 300, 3)
    graph = Graph.from_edges(np.concatenate([src, back_src]), np.concatenate([dst, back_dst]), 300, self_loops=False)
    nxg = to_networkx(graph)
    result = kahn(graph, backend="cpu")
    assert result.is_dag == nx.is_directed_acyclic_graph(nxg)
    assert result.remaining.tolist() == expected_remaining(nxg)
    assert result.processed == 300 - len(result.remaining)


def test_self_loops_are_cycles():
    graph = Graph.from_edges([0, 1], [1, 2], 3)  # self-loop on every vertex
    result = kahn(graph, backend="cpu")
    assert not result.is_dag and result.processed == 0 and result.levels == 0
    assert result.remaining.tolist() == [0, 1, 2]
    clean = kahn(graph.without_self_loops(), backend="cpu")
    assert clean.is_dag and clean.levels == 3


def test_deep_path_and_isolated_vertices():
    n = 5000
    graph = Graph.from_edges(np.arange(n - 1), np.arange(1, n), n + 2, self_loops=False)
    result = kahn(graph, backend="cpu")
    assert result.is_dag and result.processed == n + 2 and result.levels == n


def test_multi_edges_decrement_once_per_edge():
    # Graph.from_edges deduplicates, so build the CSR by hand with a repeated edge 0->1.
    graph = Graph(np.array([0, 2, 2]), np.array([1, 1], dtype=np.int32),
                  np.array([0, 0, 2]), np.array([0, 0], dtype=np.int32))
    result = kahn(graph, backend="cpu")
    assert result.is_dag and result.levels == 2


def test_gpu_without_device_is_an_error():
    from dynpr.backend import gpu_available

    if gpu_available():
        pytest.skip("a GPU is present")
    with pytest.raises(RuntimeError):
        kahn(Graph.from_edges([0], [1], 2), backend="gpu")


def _loops_here_and_there(seed=3, n=200, m=1500):
    rng = np.random.default_rng(seed)
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    return Graph.from_edges(src, dst, n, self_loops=False), src, dst


def test_without_self_loops_splices_out_exactly_the_loops():
    for graph in (_loops_here_and_there()[0], Graph.from_edges(np.array([0, 1, 2]), np.array([1, 2, 0]), 6)):
        src, dst = graph.edges()
        keep = src != dst
        want = Graph.from_edges(src[keep], dst[keep], graph.num_vertices, self_loops=False)
        got = graph.without_self_loops()
        for name in ("offsets", "targets", "in_offsets", "sources"):
            assert np.array_equal(getattr(got, name), getattr(want, name)), name


@pytest.mark.gpu
def test_without_self_loops_on_the_device_gives_the_hosts_arrays():
    cupy = pytest.importorskip("cupy")
    from dynpr.gpu.resident import to_resident

    graph = _loops_here_and_there(seed=5)[0]
    host, device = graph.without_self_loops(), to_resident(graph).without_self_loops()
    for name in ("offsets", "targets", "in_offsets", "sources"):
        assert isinstance(getattr(device, name), cupy.ndarray)
        assert np.array_equal(cupy.asnumpy(getattr(device, name)), getattr(host, name)), name


# ---- the dense-matrix twin (dynpr.kahn.kahn_dense) ----

def dense(graph: Graph) -> np.ndarray:
    matrix = np.zeros((graph.num_vertices,) * 2, dtype=np.uint8)
    src, dst = graph.edges()
    matrix[src, dst] = 1
    return matrix


def dense_cases():
    """(name, graph): DAGs with a hidden order, DAGs plus back edges, self-loops, and the report's graphs."""
    from dynpr.generate.random_dag import matrix_graph, report_matrix

    rng = np.random.default_rng(7)
    for seed in range(3):
        dag = random_dag(200, 900, seed)
        yield f"dag{seed}", dag
        src, dst = dag.edges()
        back = rng.integers(0, 200, (2, 2))
        yield f"cyclic{seed}", Graph.from_edges(np.append(src, back[0]), np.append(dst, back[1]), 200,
                                                self_loops=False)
    yield "self-loops", Graph.from_edges([0, 1, 3], [1, 2, 3], 5, self_loops=False)
    for kind in ("cyclic", "acyclic"):
        yield f"report-{kind}", matrix_graph(report_matrix(150, kind, seed=2))
    yield "report-sparse", matrix_graph(report_matrix(400, "cyclic", density=0.003, seed=2))


@pytest.mark.parametrize("name, graph", list(dense_cases()), ids=lambda x: x if isinstance(x, str) else "")
def test_dense_kahn_matches_csr_kahn_and_networkx(name, graph):
    result = kahn_dense(dense(graph))
    csr = kahn(graph, backend="cpu")
    nxg = to_networkx(graph)
    assert (result.is_dag, result.processed, result.levels) == (csr.is_dag, csr.processed, csr.levels)
    np.testing.assert_array_equal(result.remaining, csr.remaining)
    assert result.remaining.dtype == np.int32 and result.backend == "cpu"
    assert result.is_dag == nx.is_directed_acyclic_graph(nxg)
    assert result.remaining.tolist() == expected_remaining(nxg)
    if result.is_dag:
        assert result.levels == len(list(nx.topological_generations(nxg)))


def test_dense_kahn_of_the_report_graphs():
    from dynpr.generate.random_dag import report_matrix

    cyclic = kahn_dense(report_matrix(300, "cyclic", seed=0))
    assert not cyclic.is_dag and cyclic.levels == 0 and cyclic.processed == 0  # no vertex without in-edges
    acyclic = kahn_dense(report_matrix(300, "acyclic", seed=0))
    assert acyclic.is_dag and acyclic.processed == 300 and acyclic.levels > 100
