"""Personalized PageRank on the CPU engine: networkx's ``pagerank(personalization=...)`` as the oracle
(self-loops added on the networkx side, as dynpr adds them), for every approach after a batch; the
checks of the teleport weights; ``DynamicPageRank`` and the CLI's ``--personalize``."""

from __future__ import annotations

import json
from dataclasses import replace

import networkx as nx
import numpy as np
import pytest

from dynpr import DynamicPageRank
from dynpr import pagerank as pr
from dynpr.batches import apply_batch, random_batch
from dynpr.cli import main
from dynpr.errors import InputError
from dynpr.graph.graph import Graph
from dynpr.pagerank.options import PageRankOptions
from dynpr.pagerank.personalization import read_personalization, teleport

APPROACHES = ("static", "nd", "dt", "df", "dfp")
# tight enough that every approach reaches the fixed point networkx computes (DF-P's pruning too)
TIGHT = PageRankOptions(tolerance=1e-13, frontier_tolerance=1e-13, prune_tolerance=1e-13)


def random_graph(n: int, m: int, seed: int, self_loops: bool = True) -> Graph:
    rng = np.random.default_rng(seed)
    return Graph.from_edges(rng.integers(0, n, m), rng.integers(0, n, m), n, self_loops=self_loops)


def networkx_ranks(graph: Graph, personalization: dict, alpha: float = 0.85) -> np.ndarray:
    """networkx's personalized PageRank of ``graph`` (its self-loops included), by dense vertex id."""
    nxg = nx.DiGraph()
    nxg.add_nodes_from(range(graph.num_vertices))
    src, dst = graph.edges()
    nxg.add_edges_from(zip(src.tolist(), dst.tolist()))
    ranks = nx.pagerank(nxg, alpha=alpha, personalization=personalization, tol=1e-15, max_iter=3000)
    return np.array([ranks[v] for v in range(graph.num_vertices)])


def weights_on(n: int, count: int, seed: int) -> dict[int, float]:
    """Random positive weights on ``count`` of n vertices (the rest left out: weight 0)."""
    rng = np.random.default_rng(seed)
    return {int(v): float(w) for v, w in zip(rng.choice(n, count, replace=False), rng.random(count) + 0.1)}


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("count", [1, 15, 300])
def test_static_agrees_with_networkx(seed, count):
    graph = random_graph(300, 1500, seed)
    weights = weights_on(300, count, seed)
    expected = networkx_ranks(graph, weights)
    ranks = pr.reference(graph, PageRankOptions(personalization=weights), backend="cpu")
    assert pr.l1_error(ranks, expected) < 1e-8
    assert ranks.sum() == pytest.approx(1.0, abs=1e-12)
    # personalized ranks are not the uniform ones (the test could not pass with the teleport ignored)
    assert pr.l1_error(pr.reference(graph, backend="cpu"), expected) > 0.05


@pytest.mark.parametrize("approach", APPROACHES)
def test_every_approach_after_a_batch_agrees_with_networkx(approach):
    old = random_graph(400, 2400, 7)
    batch = random_batch(old, 0.01, 0.8, np.random.default_rng(7))
    new = apply_batch(old, batch)
    weights = weights_on(400, 4, 3)  # 1% of the vertices
    options = replace(TIGHT, personalization=weights)
    previous = pr.static(old, options, backend="cpu").ranks
    result = pr.update(approach, old, new, batch, previous, options, backend="cpu")
    expected = networkx_ranks(new, weights)
    assert pr.l1_error(result.ranks, expected) < 1e-8
    assert pr.l1_error(previous, expected) > 1e-4  # the batch changed the ranks
    if approach in ("dt", "df", "dfp"):
        assert 0 < result.affected


# The paper's tolerances: the dynamic approaches end as close to the personalized fixed point
# as they do to the uniform one (test_pagerank_cpu.test_dynamic_error_vs_reference).
@pytest.mark.parametrize("approach,bound", [("static", 1e-8), ("nd", 1e-8), ("dt", 1e-8), ("df", 1e-6),
                                            ("dfp", 1e-5)])
def test_dynamic_error_vs_personalized_reference(approach, bound):
    old = random_graph(400, 2400, 7)
    batch = random_batch(old, 0.01, 0.8, np.random.default_rng(7))
    new = apply_batch(old, batch)
    options = PageRankOptions(personalization=weights_on(400, 40, 5))
    previous = pr.reference(old, options, backend="cpu")
    ref = pr.reference(new, options, backend="cpu")
    result = pr.update(approach, old, new, batch, previous, options, backend="cpu")
    assert pr.l1_error(result.ranks, ref) < bound
    assert pr.l1_error(previous, ref) > 100 * pr.l1_error(result.ranks, ref)


def test_dangling_vertices_teleport_by_the_personalization_as_networkx():
    # without self-loops some vertices have no out-edge: networkx spreads their rank by the
    # personalization vector (its default `dangling`), and so does the CPU engine
    graph = random_graph(200, 300, 4, self_loops=False)
    assert (graph.out_degree == 0).sum() > 10
    weights = weights_on(200, 20, 6)
    ranks = pr.reference(graph, PageRankOptions(personalization=weights), backend="cpu")
    assert pr.l1_error(ranks, networkx_ranks(graph, weights)) < 1e-8


def test_uniform_personalization_is_plain_pagerank():
    graph = random_graph(300, 1500, 2)
    plain = pr.static(graph, backend="cpu")
    uniform = pr.static(graph, PageRankOptions(personalization=np.full(300, 2.5)), backend="cpu")
    assert uniform.iterations == plain.iterations
    np.testing.assert_allclose(uniform.ranks, plain.ranks, rtol=1e-13, atol=0)


def test_array_and_mapping_by_original_id_agree():
    graph = random_graph(100, 500, 8)
    # original ids: 1000 + 3 * vertex, shuffled order of ids does not matter
    ids = 1000 + 3 * np.arange(100)
    named = Graph(graph.offsets, graph.targets, graph.in_offsets, graph.sources, ids)
    dense = np.zeros(100)
    dense[[4, 50, 99]] = [1.0, 2.0, 5.0]
    by_id = {1012: 1.0, 1150: 2.0, 1297: 5.0}
    a = pr.static(named, PageRankOptions(personalization=dense), backend="cpu").ranks
    b = pr.static(named, PageRankOptions(personalization=by_id), backend="cpu").ranks
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(teleport(by_id, named), dense / 8.0)
    with pytest.raises(InputError, match="vertex 4 is not in the graph"):
        pr.static(named, PageRankOptions(personalization={4: 1.0}), backend="cpu")


@pytest.mark.parametrize("value,message", [
    ({0: -1.0}, "vertex 0 has the negative weight -1"),
    ({0: float("nan")}, "vertex 0 has weight nan; weights must be finite"),
    (np.array([0.5, np.inf]), "vertex 1 has weight inf; weights must be finite"),
    ({0: 0.0, 1: 0.0}, "every weight is zero"),
    (np.zeros(3), "every weight is zero"),
    ({}, "the mapping is empty"),
    ({"a": 1.0}, "key 'a' is not a vertex id"),
    ({-2: 1.0}, "key -2 is not a vertex id"),
    ({0: "heavy"}, "every weight must be a number"),
    (np.ones((2, 2)), "one weight per vertex, got shape"),
    ("abc", "expected a mapping or an array of numbers"),
])
def test_bad_weights_get_one_clear_error(value, message):
    with pytest.raises(InputError, match=f"personalization: .*{message}"):
        PageRankOptions(personalization=value)


def test_weights_that_do_not_fit_the_graph_are_refused_before_any_run():
    graph = random_graph(20, 60, 1)
    with pytest.raises(InputError, match="3 weights for a graph of 20 vertices"):
        pr.static(graph, PageRankOptions(personalization=np.ones(3)), backend="cpu")
    with pytest.raises(InputError, match="vertex 20 is not in the graph"):
        pr.update("nd", graph, graph, None, np.full(20, 0.05), PageRankOptions(personalization={20: 1.0}),
                  backend="cpu")


def test_options_keep_their_own_copy():
    weights = np.ones(10)
    options = PageRankOptions(personalization=weights)
    weights[0] = -5.0  # the caller's array, changed afterwards
    assert options.personalization[0] == 1.0
    assert not options.personalization.flags.writeable
    assert replace(options, alpha=0.9).personalization is options.personalization  # not copied again


@pytest.mark.parametrize("weights,goes_on", [(np.arange(1.0, 301.0), True), ({0: 1.0}, False)])
def test_reference_goes_on_from_static_only_where_every_vertex_has_teleport(monkeypatch, weights, goes_on):
    # going on is bit for bit the fresh reference only where every rank is at least (1 - alpha) min(p) > 0
    graph = random_graph(300, 1500, 5)
    options = PageRankOptions(personalization=weights)
    result = pr.static(graph, options, backend="cpu")
    fresh = pr.reference(graph, options, backend="cpu")
    starts = []
    static = pr.static
    monkeypatch.setattr(pr, "static", lambda *a, **k: starts.append(k.get("initial")) or static(*a, **k))
    assert np.array_equal(pr.reference(graph, options, backend="cpu", static_result=result), fresh)
    assert (starts[0] is result.ranks) == goes_on


def test_dynamic_pagerank_keeps_the_personalization():
    graph = random_graph(300, 1800, 9)
    weights = weights_on(300, 3, 9)
    tracker = DynamicPageRank(graph, "dfp", backend="cpu", options=TIGHT, personalization=weights)
    assert pr.l1_error(tracker.ranks, networkx_ranks(graph, weights)) < 1e-8
    current = graph
    for seed in (1, 2):
        batch = random_batch(current, 0.01, 0.8, np.random.default_rng(seed))
        current = apply_batch(current, batch)
        ranks = tracker.update(batch)
        assert pr.l1_error(ranks, networkx_ranks(current, weights)) < 1e-8
    with pytest.raises(InputError, match="vertex 300 is not in the graph"):
        DynamicPageRank(graph, backend="cpu", personalization={300: 1.0})


def _write(path, text: str):
    path.write_text(text)
    return path


def test_read_personalization_maps_original_ids(tmp_path):
    ids = np.array([10, 20, 30, 40])
    path = _write(tmp_path / "p.txt", "# vertex weight\n30 2\n\n10,0.5  # comma too\n")
    np.testing.assert_array_equal(read_personalization(path, ids, 4), [0.5, 0.0, 2.0, 0.0])
    np.testing.assert_array_equal(read_personalization(_write(tmp_path / "q.txt", "1 1\n3 3\n"), None, 4),
                                  [0, 1, 0, 3])


@pytest.mark.parametrize("text,message", [
    ("1 1\n2\n", ":2: expected two fields"),
    ("1 1\n2 1 7\n", ":2: expected two fields"),
    ("1 1\nx 1\n", ":2: vertex id 'x' is not a non-negative integer"),
    ("1 1\n-1 1\n", ":2: vertex id '-1' is not a non-negative integer"),
    ("1 1\n# c\n2 heavy\n", ":3: weight 'heavy' is not a number"),
    ("1 1\n2 nan\n", ":2: vertex 2 has weight nan"),
    ("1 1\n\n2 -3\n", ":3: vertex 2 has the negative weight -3"),
    ("1 1\n9 1\n", ":2: vertex 9 is not in the graph"),
    ("1 1\n2 1\n1 4\n", ":3: vertex 1 is given a second time"),
    ("1 0\n2 0\n", "every weight is zero"),
    ("# nothing\n", ":1: no vertex weights in the file"),
])
def test_read_personalization_names_the_line(tmp_path, text, message):
    path = _write(tmp_path / "p.txt", text)
    with pytest.raises(InputError, match=message):
        read_personalization(path, None, 4)


def test_cli_personalize(tmp_path, capsys):
    src, dst = random_graph(50, 200, 3, self_loops=False).edges()
    edges = tmp_path / "g.txt"
    edges.write_text("".join(f"{u + 100} {v + 100}\n" for u, v in zip(src.tolist(), dst.tolist())))
    weights = _write(tmp_path / "w.txt", "105 1\n130 3\n")
    out = tmp_path / "r.csv"
    assert main(["pagerank", str(edges), "--backend", "cpu", "--personalize", str(weights), "--ranks-out", str(out),
                 "--tolerance", "1e-14"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["converged"]
    import pandas as pd

    table = pd.read_csv(out).set_index("vertex")["rank"]
    graph = Graph.from_edges(src, dst)  # the ids the file's graph gets: 100 + dense id (all 50 appear)
    expected = networkx_ranks(graph, {5: 1.0, 30: 3.0})
    got = table.reindex(100 + np.arange(graph.num_vertices)).to_numpy()
    assert pr.l1_error(got, expected) < 1e-8
    bad = _write(tmp_path / "bad.txt", "105 -1\n")
    assert main(["pagerank", str(edges), "--backend", "cpu", "--personalize", str(bad)]) == 2
    assert f"{bad}:1: vertex 105 has the negative weight -1" in capsys.readouterr().err


def test_memory_model_counts_the_teleport_terms():
    from dynpr.gpu.memory import device_bytes_needed

    n, m = 1000, 20000
    for approach in APPROACHES:
        plain = device_bytes_needed(n, m, approach)
        assert device_bytes_needed(n, m, approach, personalized=True) == plain + 8 * n
    # relabelled: a second copy, in the relabelled ids
    relabelled = device_bytes_needed(n, m, "dfp", relabel=True)
    assert device_bytes_needed(n, m, "dfp", relabel=True, personalized=True) == relabelled + 16 * n


def test_dfp_prunes_a_vertex_unchanged_at_rank_zero():
    # vertex 0 has no teleport weight and no in-edge but its self-loop: DF-P's closed form gives it
    # rank 0 at once, and its next change, 0 at rank 0, is a relative change of 0 (pruned), not 0/0
    old = Graph.from_edges([1, 2, 3], [2, 1, 1], 4)
    new = Graph.from_edges([0, 1, 2, 3], [1, 2, 1, 1], 4)
    options = PageRankOptions(personalization={1: 1.0})
    previous = pr.static(old, options, backend="cpu").ranks
    assert previous[0] > 0
    from dynpr.batches import Batch

    with np.errstate(invalid="raise"):
        result = pr.update("dfp", old, new, Batch([], [], [0], [1]), previous, options, backend="cpu")
    assert result.ranks[0] == 0.0
    assert pr.l1_error(result.ranks, networkx_ranks(new, {1: 1.0})) < 1e-5
