"""Experiment drivers on tiny graphs, checked against the same steps done by hand."""

from dataclasses import replace

import numpy as np
import pytest

from dynpr.batches import Batch, GraphSlot, apply_batch
from dynpr.evaluation import experiments
from dynpr.graph.graph import Graph
from dynpr.pagerank import PageRankOptions, l1_error, reference, static, update
from dynpr.evaluation.results import COLUMNS, to_frame

APPROACHES = ["static", "nd", "dt", "df", "dfp"]
OPTIONS = PageRankOptions()
FIELDS = ("offsets", "targets", "in_offsets", "sources")


def random_graph(n=40, m=160, seed=1):
    rng = np.random.default_rng(seed)
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    keep = src != dst
    return Graph.from_edges(src[keep], dst[keep], n)


def insertions(graph, count, rng):
    """A batch of ``count`` distinct absent, non-loop edges."""
    n = graph.num_vertices
    keys = set(graph.keys().tolist())
    out = []
    while len(out) < count:
        u, v = map(int, rng.integers(0, n, 2))
        if u != v and u * n + v not in keys:
            keys.add(u * n + v)
            out.append((u, v))
    src, dst = np.array(out).T
    e = np.empty(0, np.int32)
    return Batch(e, e, src, dst)


def mixed(graph, ins, dels, rng):
    src, dst = graph.edges()
    loops = src == dst
    pick = rng.choice(np.flatnonzero(~loops), dels, replace=False)
    b = insertions(graph, ins, rng)
    return Batch(src[pick], dst[pick], b.ins_src, b.ins_dst)


def temporal_case():
    rng = np.random.default_rng(7)
    base = random_graph()
    sequences = {}
    for f in (1e-3, 1e-2):
        seq, g = [], base
        for _ in range(3):
            b = insertions(g, 3 if f == 1e-3 else 8, rng)
            seq.append(b)
            g = apply_batch(g, b)
        sequences[f] = seq
    return base, sequences


def test_temporal_rows_follow_ranks_carried_from_batch_to_batch():
    base, sequences = temporal_case()
    rows = experiments.run_batches("temporal", "t", base, sequences, APPROACHES, OPTIONS, repeat=2, commit="c0", backend="cpu")
    df = to_frame(rows)
    assert list(df.columns) == list(COLUMNS)
    assert len(df) == 2 * 3 * 5 * 2  # fractions x batches x approaches x repeats
    assert not df.duplicated(["approach", "batch_fraction", "batch_index", "repeat"]).any()
    assert set(df["experiment"]) == {"temporal"} and set(df["git_commit"]) == {"c0"}
    # Oracle: the same sequence done by hand, each approach continuing from its own ranks.
    for f, seq in sequences.items():
        old, prev = base, {a: static(base, OPTIONS, backend="cpu").ranks for a in APPROACHES}
        for i, b in enumerate(seq):
            new = apply_batch(old, b)
            ref = reference(new, OPTIONS, backend="cpu")
            for a in APPROACHES:
                res = update(a, old, new, b, prev[a], OPTIONS, backend="cpu")
                prev[a] = res.ranks
                got = df[(df.batch_fraction == f) & (df.batch_index == i) & (df.approach == a)]
                assert (got["iterations"] == res.iterations).all(), (f, i, a)
                assert got["l1_error"].to_numpy() == pytest.approx(l1_error(res.ranks, ref), rel=1e-12, abs=0)
                assert (got["edges"] == new.num_edges).all() and (got["insertions"] == b.insertions).all()
            old = new


def test_temporal_dynamic_approaches_need_fewer_iterations_than_static():
    base, sequences = temporal_case()
    df = to_frame(experiments.run_batches("temporal", "t", base, sequences, ["static", "nd"], OPTIONS, backend="cpu"))
    it = df.groupby("approach")["iterations"].mean()
    assert it["nd"] < it["static"]


def test_random_rows_start_every_approach_from_the_base_ranks():
    rng = np.random.default_rng(3)
    graph = random_graph(seed=5)
    batches = {1e-2: [mixed(graph, 4, 1, rng), mixed(graph, 4, 1, rng)], 1e-1: [mixed(graph, 12, 3, rng)]}
    logged = []
    df = to_frame(experiments.run_batches("random", "r", graph, batches, APPROACHES, OPTIONS, log=logged.append, commit="c", backend="cpu"))
    assert len(df) == (2 + 1) * 5
    base = static(graph, OPTIONS, backend="cpu").ranks
    for f, seq in batches.items():
        for i, b in enumerate(seq):
            new = apply_batch(graph, b)
            ref = reference(new, OPTIONS, backend="cpu")
            for a in APPROACHES:
                res = update(a, graph, new, b, base, OPTIONS, backend="cpu")
                got = df[(df.batch_fraction == f) & (df.batch_index == i) & (df.approach == a)].iloc[0]
                assert got["iterations"] == res.iterations and got["affected"] == res.affected
                assert got["l1_error"] == pytest.approx(l1_error(res.ranks, ref), rel=1e-12)
                assert (got["deletions"], got["insertions"]) == (b.deletions, b.insertions)
    # one progress line per approach and batch, naming dataset, approach, fraction, batch i/N and ms,
    # then one per batch saying where its time went
    assert len(logged) == 15 + 3
    assert logged[0].startswith("r static fraction=0.01 batch 1/2: ") and " ms" in logged[0]
    where = [line for line in logged if "reference" in line]
    assert len(where) == 3 and where[0].startswith("r fraction=0.01 batch 1/2: load ")
    for step in ("apply", "runs", "timed PageRank", "reference", "score"):
        assert all(f"{step} " in line for line in where)


def test_random_batches_go_in_place_and_leave_the_base_graph_in_the_slot():
    rng = np.random.default_rng(4)
    graph = random_graph(seed=6)
    batches = {1e-1: [mixed(graph, 12, 3, rng), mixed(graph, 1, 9, rng)]}
    slot = GraphSlot(Graph(*(getattr(graph, f).copy() for f in FIELDS)))
    rows = experiments.run_batches("random", "r", slot, batches, APPROACHES, OPTIONS, commit="c", backend="cpu")
    assert len(rows) == 2 * len(APPROACHES)
    for name in FIELDS:  # every batch undone: the graph before, bit for bit
        assert np.array_equal(getattr(slot.graph, name), getattr(graph, name))
    assert not experiments.keeps_old_graph(APPROACHES, OPTIONS)
    assert experiments.keeps_old_graph(APPROACHES, replace(OPTIONS, variant="partitioned"))


def test_unknown_experiment_is_an_error():
    with pytest.raises(ValueError, match="experiment must be 'temporal' or 'random', got 'kahn'"):
        experiments.run_batches("kahn", "k", random_graph(), {}, APPROACHES, OPTIONS, commit="c", backend="cpu")


def test_kahn_rows_on_a_dag_and_on_a_cycle():
    # DAG 0->1->2->3, 0->2: 4 levels; self-loops added by from_edges are removed by run_kahn.
    dag = Graph.from_edges(np.array([0, 1, 2, 0]), np.array([1, 2, 3, 2]), 5)
    r = to_frame(experiments.run_kahn("d", dag, repeat=2, commit="c", backend="cpu"))
    assert len(r) == 2 and set(r["experiment"]) == {"kahn"} and set(r["approach"]) == {"kahn"}
    assert list(r["iterations"]) == [4, 4] and list(r["affected"]) == [5, 5]
    assert list(r["edges"]) == [4, 4]
    cyc = Graph.from_edges(np.array([0, 1, 2, 3]), np.array([1, 2, 1, 0]), 4)  # 1<->2 cycle
    r = to_frame(experiments.run_kahn("c", cyc, commit="c", backend="cpu"))
    # 3 has no in-edge, then 0 (its only in-edge is from 3); 1 and 2 stay on the cycle
    assert (r.loc[0, "affected"], r.loc[0, "iterations"], r.loc[0, "vertices"]) == (2, 2, 4)


def test_options_from_config_passes_known_keys_only():
    opts, ref_tol = experiments.options_from_config({"alpha": 0.5, "tolerance": 1e-8, "reference_tolerance": 1e-50})
    assert opts.alpha == 0.5 and opts.tolerance == 1e-8 and opts.prune_tolerance == 1e-6
    assert ref_tol == 1e-50


def _files(tmp_path):
    from dynpr.batches import write_batches

    rng = np.random.default_rng(11)
    graph = random_graph(seed=9)
    graph.save(tmp_path / "g.npz")
    batches = {1e-2: [mixed(graph, 4, 1, rng)], 1e-1: [mixed(graph, 12, 3, rng)]}
    paths = {}
    for f, seq in batches.items():
        paths[f] = tmp_path / f"random_{f:g}.npz"
        write_batches(paths[f], seq, made_for=graph, experiment="random")
    return graph, batches, paths


TIMING = ["time_ms", "partition_ms", "mark_ms", "compute_ms", "timestamp"]


def test_run_dataset_from_files_equals_run_batches_then_kahn(tmp_path):
    graph, batches, paths = _files(tmp_path)
    logged = []
    got = to_frame(experiments.run_dataset("random", "r", tmp_path / "g.npz", paths, APPROACHES, OPTIONS,
                                           backend="cpu", commit="c", log=logged.append))
    want = to_frame(experiments.run_batches("random", "r", graph, batches, APPROACHES, OPTIONS, backend="cpu",
                                            commit="c") + experiments.run_kahn("r", graph, backend="cpu", commit="c"))
    assert got.drop(columns=TIMING).equals(want.drop(columns=TIMING))
    assert any(line.startswith("r: graph 40 vertices") and "loaded and checked" in line for line in logged)


def test_run_dataset_refuses_a_batch_file_before_any_run(tmp_path):
    from dynpr.batches import write_batches
    from dynpr.errors import BatchError

    graph, batches, paths = _files(tmp_path)
    write_batches(paths[1e-1], batches[1e-1], made_for=random_graph(seed=10), experiment="random")
    logged = []
    with pytest.raises(BatchError, match="made for a graph"):
        experiments.run_dataset("random", "r", tmp_path / "g.npz", paths, APPROACHES, OPTIONS, backend="cpu",
                                commit="c", log=logged.append)
    assert logged == []  # refused while checking the files, before the first run


@pytest.mark.gpu
def test_run_dataset_on_the_gpu_plans_uploads_and_matches_the_cpu(tmp_path):
    pytest.importorskip("cupy")
    _graph, _batches, paths = _files(tmp_path)
    logged = []
    gpu = to_frame(experiments.run_dataset("random", "r", tmp_path / "g.npz", paths, APPROACHES, OPTIONS,
                                           backend="gpu", commit="c", log=logged.append))
    cpu = to_frame(experiments.run_dataset("random", "r", tmp_path / "g.npz", paths, APPROACHES, OPTIONS,
                                           backend="cpu", commit="c"))
    assert list(gpu["approach"]) == list(cpu["approach"]) and set(gpu["backend"]) == {"gpu"}
    assert np.allclose(gpu["l1_error"], cpu["l1_error"], rtol=0.5, atol=1e-9, equal_nan=True)
    kahn = gpu[gpu.approach == "kahn"].iloc[0], cpu[cpu.approach == "kahn"].iloc[0]
    assert (kahn[0]["iterations"], kahn[0]["affected"]) == (kahn[1]["iterations"], kahn[1]["affected"])
    assert any("GPU memory plan: graphs" in line for line in logged)
    assert any("host copy dropped" in line for line in logged)
    assert sum("GPU pool peak" in line for line in logged) == 2  # one per batch
    # the pool's peak per phase and the plan's peak, in every batch's line
    peaks = [line for line in logged if "GPU pool peak" in line]
    for phase in ("load", "base static", "apply", "static", "reference", "dfp", "restore"):
        assert all(f"{phase} " in line.split("by phase: ")[1] for line in peaks), phase
    assert all("; plan " in line for line in peaks)
