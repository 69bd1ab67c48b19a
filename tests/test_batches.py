"""Batch generation, batch files and apply_batch against independent set-based oracles."""

from __future__ import annotations

import hashlib
import os
import runpy
import subprocess
import sys
import warnings
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from dynpr.batches import (
    Batch,
    BatchWarning,
    apply_batch,
    apply_batch_with_report,
    batch_rng,
    random_batch,
    read_batch_params,
    read_batches,
    temporal_batches,
    write_batches,
)
from dynpr.graph.graph import Graph
from batch_cases import messy_batch

ROOT = Path(__file__).resolve().parents[1]
COLLEGE_MSG = ROOT / "datasets" / "embedded" / "CollegeMsg.txt.gz"


def random_graph(n, m, seed):
    """A graph of ``n`` vertices with up to ``m`` random edges (self-loops in the input included)."""
    rng = np.random.default_rng(seed)
    return Graph.from_edges(rng.integers(0, n, m), rng.integers(0, n, m), n)


def edge_set(graph):
    src, dst = graph.edges()
    return set(zip(src.tolist(), dst.tolist()))


def pairs(src, dst):
    return list(zip(np.asarray(src).tolist(), np.asarray(dst).tolist()))


def sha256(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


# --------------------------------------------------------------------------- random batches


@pytest.mark.parametrize("n, m, fraction", [(300, 3000, 0.1), (50, 400, 0.5), (2000, 20000, 0.01)])
def test_random_batch_counts_shares_and_validity(n, m, fraction):
    graph = random_graph(n, m, seed=n)
    edges = edge_set(graph)
    non_loop = {e for e in edges if e[0] != e[1]}
    batch = random_batch(graph, fraction, 0.8, np.random.default_rng(7))

    assert batch.insertions == round(0.8 * fraction * len(non_loop))
    assert batch.deletions == round(0.2 * fraction * len(non_loop))
    ins, dels = pairs(batch.ins_src, batch.ins_dst), pairs(batch.del_src, batch.del_dst)
    assert len(set(ins)) == len(ins) and len(set(dels)) == len(dels)
    assert all(u != v for u, v in ins + dels)
    assert not set(ins) & edges
    assert set(dels) <= non_loop
    assert all(0 <= x < n for e in ins for x in e)


def test_random_batch_is_never_empty_and_keeps_the_share():
    graph = random_graph(100, 500, seed=1)
    tiny = random_batch(graph, 1e-7, 0.8, np.random.default_rng(0))
    assert (tiny.insertions, tiny.deletions) == (1, 0)
    deletions_only = random_batch(graph, 1e-7, 0.0, np.random.default_rng(0))
    assert (deletions_only.insertions, deletions_only.deletions) == (0, 1)


def test_random_batch_fills_a_nearly_complete_graph():
    # 10 vertices: 90 possible non-loop pairs; leave exactly 8 absent, ask for all 8.
    n = 10
    all_pairs = [(u, v) for u in range(n) for v in range(n) if u != v]
    absent = set(all_pairs[::11][:8])
    present = [e for e in all_pairs if e not in absent]
    graph = Graph.from_edges(*np.array(present).T, n)
    fraction = 8 / 0.8 / len(present)
    batch = random_batch(graph, fraction, 0.8, np.random.default_rng(3))
    assert set(pairs(batch.ins_src, batch.ins_dst)) == absent
    with pytest.raises(ValueError, match="absent vertex pairs"):
        random_batch(graph, 2 * fraction, 0.8, np.random.default_rng(3))


def test_random_batch_file_is_deterministic_across_processes(tmp_path):
    # Same (seed, dataset, fraction, repeat) -> byte-identical file, also in a fresh
    # interpreter with another string-hash seed (the rng must not use hash()).
    script = (
        "import sys, numpy as np\n"
        "from dynpr.graph.graph import Graph\n"
        "from dynpr.batches import batch_rng, random_batch, write_batches\n"
        "rng = np.random.default_rng(5)\n"
        "g = Graph.from_edges(rng.integers(0, 500, 5000), rng.integers(0, 500, 5000), 500)\n"
        "bs = [random_batch(g, 0.05, 0.8, batch_rng(42, 'toy', 0.05, r)) for r in range(2)]\n"
        "write_batches(sys.argv[1], bs, made_for=g, dataset='toy', experiment='random', fraction=0.05, seed=42)\n"
    )
    outputs = []
    for i, hash_seed in enumerate(["1", "2", "1"]):
        path = tmp_path / f"b{i}.npz"
        subprocess.run([sys.executable, "-c", script, str(path)], check=True,
                       env={"PYTHONHASHSEED": hash_seed, "PATH": "",  # an import path set by the caller still holds
                            **{k: v for k, v in os.environ.items() if k == "PYTHONPATH"}})
        outputs.append(sha256(path))
    assert outputs[0] == outputs[1] == outputs[2]
    first, second = read_batches(tmp_path / "b0.npz")
    assert not np.array_equal(first.ins_src, second.ins_src)  # repeats differ


def _digest(*arrays):
    digest = hashlib.sha256()
    for a in arrays:
        digest.update(np.ascontiguousarray(a).data)
    return digest.hexdigest()


# Recorded with the code before the random-batch speed-up (commit 80aa7bc): batch files are
# stored results, so the same generator must keep giving the same batch, and leave the
# generator in the same state (the next draw is recorded too). Fraction 0.1 takes NumPy's
# tail-shuffle path for the deletions (deletions > |E|/50), 0.01 its hash-set path.
@pytest.mark.parametrize("fraction, seed, sizes, batch_sha, next_draw", [
    (0.1, 0, (4264, 1066), "4419ed1d5318f97b74f4acf93e305d8d8f730b94188c5e4f77635df2ed0e2c7c", 675024320097190882),
    (0.01, 1, (426, 107), "52e737afc9268f55be2eff1858133e156af8f8927bed28892023c88644bcdd3f", 831596432100895172),
])
def test_random_batch_output_is_unchanged(fraction, seed, sizes, batch_sha, next_draw):
    from dynpr.generate.rmat import rmat_graph

    graph = rmat_graph(12, 16, seed=1, backend="cpu")
    rng = np.random.default_rng(seed)
    batch = random_batch(graph, fraction, 0.8, rng)
    assert (batch.insertions, batch.deletions) == sizes
    assert _digest(batch.del_src, batch.del_dst, batch.ins_src, batch.ins_dst) == batch_sha
    assert int(rng.integers(0, 2**62)) == next_draw
    if fraction == 0.1:
        updated = apply_batch(graph, batch, strict=True)
        assert _digest(updated.offsets, updated.targets, updated.in_offsets, updated.sources) == \
            "bce36961fe6ac744d2b41fa33ac7bf861bfcb3da38b89f0d710beab0c8bcb40f"


def test_random_batch_rounds_with_repeats_are_unchanged(monkeypatch):
    # Rounds of 37 draws on 50 vertices: pairs repeat across rounds, so the deferred
    # check redraws from a saved generator state; recorded before the change (see above).
    import dynpr.batches.make

    monkeypatch.setattr(dynpr.batches.make, "_MAX_DRAW", 37)
    calls = []
    first_repeat = dynpr.batches.make._first_repeat_round
    monkeypatch.setattr(dynpr.batches.make, "_first_repeat_round",
                        lambda rounds, n: calls.append(first_repeat(rounds, n)) or calls[-1])
    rng = np.random.default_rng(50)
    graph = Graph.from_edges(rng.integers(0, 50, 400), rng.integers(0, 50, 400), 50)
    rng = np.random.default_rng(0)
    batch = random_batch(graph, 0.5, 0.8, rng)
    assert any(c is not None for c in calls)  # the redraw path ran
    assert (batch.insertions, batch.deletions) == (146, 36)
    assert _digest(batch.del_src, batch.del_dst, batch.ins_src, batch.ins_dst) == \
        "c4b1ee7dcbd9c017668a3838615f2905f4559984d51405f9f3be51078642e869"
    assert int(rng.integers(0, 2**62)) == 587542675536419521


@pytest.mark.parametrize("population, size", [(10001, 9000), (10001, 10001), (20000, 401), (50000, 1001),
                                              (100000, 50000), (3_000_000, 70000)])
def test_sorted_sample_is_numpy_choice(population, size):
    from dynpr.batches.make import _sorted_sample

    for seed in range(3):
        numpy_rng, our_rng = np.random.default_rng(seed), np.random.default_rng(seed)
        expected = np.sort(numpy_rng.choice(population, size=size, replace=False))
        assert np.array_equal(_sorted_sample(population, size, our_rng), expected)
        assert numpy_rng.bit_generator.state == our_rng.bit_generator.state


def test_batch_rng_depends_on_every_part_of_the_config():
    draws = {
        key: batch_rng(*key).integers(0, 2**62)
        for key in [(42, "a", 0.1, 0), (43, "a", 0.1, 0), (42, "b", 0.1, 0), (42, "a", 0.01, 0), (42, "a", 0.1, 1)]
    }
    assert len(set(draws.values())) == len(draws)
    assert batch_rng(42, "a", 0.1, 0).integers(0, 2**62) == draws[(42, "a", 0.1, 0)]


# --------------------------------------------------------------------------- apply_batch


def reference_apply(edges, n, batch):
    """Set-based oracle: deletions first, never a self-loop; then insertions; loops on every vertex."""
    dels = pairs(batch.del_src, batch.del_dst)
    ins = pairs(batch.ins_src, batch.ins_dst)
    result = edges - {e for e in dels if e[0] != e[1]}
    counts = Counter(
        deleted=len({e for e in dels if e[0] != e[1]} & edges),
        missing_deletions=len({e for e in dels if e[0] != e[1]} - edges),
        repeated_deletions=sum(e[0] != e[1] for e in dels) - len({e for e in dels if e[0] != e[1]}),
        self_loop_deletions=sum(e[0] == e[1] for e in dels),
        present_insertions=len(set(ins) & result),
        inserted=len(set(ins) - result),
        repeated_insertions=len(ins) - len(set(ins)),
    )
    result |= set(ins) | {(v, v) for v in range(n)}
    return result, counts


@pytest.mark.parametrize("seed", range(6))
def test_apply_batch_matches_set_reference(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 60))
    graph = random_graph(n, int(rng.integers(0, 4 * n)), seed)
    batch = messy_batch(graph, rng)

    expected, counts = reference_apply(edge_set(graph), n, batch)
    updated, report = apply_batch_with_report(graph, batch)
    assert edge_set(updated) == expected
    assert {k: getattr(report, k) for k in counts} == dict(counts)
    # CSR and transpose describe the same graph as a fresh build.
    fresh = Graph.from_edges(*np.array(sorted(expected)).T, n)
    for name in ("offsets", "targets", "in_offsets", "sources"):
        assert np.array_equal(getattr(updated, name), getattr(fresh, name))


def test_apply_batch_clean_batch_is_silent_and_strict_mode_raises():
    graph = random_graph(200, 2000, seed=9)
    batch = random_batch(graph, 0.1, 0.8, np.random.default_rng(1))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        updated = apply_batch(graph, batch, strict=True)
    assert updated.num_edges == graph.num_edges + batch.insertions - batch.deletions
    assert np.all(updated.has_edges(np.arange(200), np.arange(200)))

    # Applying the same batch twice: every edge is now a no-op, reported and never applied twice.
    with pytest.warns(BatchWarning, match=f"{batch.deletions} deletions of missing edges"):
        again = apply_batch(updated, batch)
    assert edge_set(again) == edge_set(updated)
    with pytest.raises(ValueError, match="insertions of present edges"):
        apply_batch(updated, batch, strict=True)


def test_apply_batch_never_deletes_self_loops_and_restores_missing_ones():
    graph = Graph.from_edges([0, 1], [1, 2], 4, self_loops=False)
    loops = np.arange(4)
    with pytest.warns(BatchWarning, match="4 of self-loops"):
        updated = apply_batch(graph, Batch(loops, loops, [], []))
    assert edge_set(updated) == {(0, 1), (1, 2), (0, 0), (1, 1), (2, 2), (3, 3)}


def test_apply_batch_rejects_out_of_range_ids():
    graph = random_graph(10, 20, seed=0)
    with pytest.raises(ValueError, match="vertex id 10 is outside 0..9"):
        apply_batch(graph, Batch([], [], [0], [10]))


# --------------------------------------------------------------------------- temporal slices


def reference_slices(src, dst, n, base_fraction, fraction, num_batches):
    """Set-based oracle of the temporal slicing, one event at a time."""
    total = len(src)
    nb = round(base_fraction * total)
    size = max(1, round(fraction * total))
    present = {(v, v) for v in range(n)} | set(pairs(src[:nb], dst[:nb]))
    base_edges = len(present)
    batches = []
    for i in range(num_batches):
        lo, hi = min(total, nb + i * size), min(total, nb + (i + 1) * size)
        new, counts = [], Counter(events=hi - lo)
        for u, v in pairs(src[lo:hi], dst[lo:hi]):
            if u == v:
                counts["self_loops"] += 1
            elif (u, v) in present:
                counts["present"] += 1
            elif (u, v) in new:
                counts["repeated"] += 1
            else:
                new.append((u, v))
        present |= set(new)
        batches.append((new, counts))
    return base_edges, size, batches


def check_against_reference(src, dst, n, base_fraction, fraction, num_batches):
    base, batches, stats = temporal_batches(src, dst, n, base_fraction, fraction, num_batches)
    base_edges, size, expected = reference_slices(src, dst, n, base_fraction, fraction, num_batches)
    assert base.num_vertices == n and base.num_edges == base_edges == stats.base_edges
    assert stats.batch_size == size and len(batches) == num_batches
    for i, (batch, (new, counts)) in enumerate(zip(batches, expected)):
        assert batch.deletions == 0
        assert pairs(batch.ins_src, batch.ins_dst) == new
        assert stats.events[i] == counts["events"]
        assert stats.inserted[i] == len(new)
        assert stats.dropped_present[i] == counts["present"]
        assert stats.dropped_repeated[i] == counts["repeated"]
        assert stats.dropped_self_loops[i] == counts["self_loops"]
    # Applying the batches in order never meets a present edge.
    graph = base
    for batch in batches:
        graph = apply_batch(graph, batch, strict=True)
    return stats


@pytest.fixture(scope="module")
def college_msg():
    df = pd.read_csv(COLLEGE_MSG, sep=" ", header=None, names=["src", "dst", "time"])
    assert len(df) == 59835 and df["time"].is_monotonic_increasing
    # SNAP ids are 1..1899; renumber to 0..1898.
    return df["src"].to_numpy() - 1, df["dst"].to_numpy() - 1, 1899


@pytest.mark.parametrize("fraction", [1e-4, 1e-3])
def test_temporal_slices_on_college_msg(college_msg, fraction):
    src, dst, n = college_msg
    stats = check_against_reference(src, dst, n, 0.9, fraction, 10)
    assert stats.base_events == 53852 and stats.short_batches == 0
    assert stats.inserted.sum() > 0 and stats.dropped_present.sum() > 0


def test_temporal_slices_run_out_on_college_msg(college_msg):
    src, dst, n = college_msg
    # B = 598; 5983 events after the base: 10 full batches, one of 3 events, 9 empty.
    stats = check_against_reference(src, dst, n, 0.9, 1e-2, 20)
    assert stats.events.tolist() == [598] * 10 + [3] + [0] * 9
    assert stats.short_batches == 10


def test_temporal_slices_with_self_loops_and_repeats():
    rng = np.random.default_rng(4)
    src = rng.integers(0, 12, 400)
    dst = np.where(rng.random(400) < 0.2, src, rng.integers(0, 12, 400))
    stats = check_against_reference(src, dst, 15, 0.5, 0.05, 6)
    assert stats.dropped_self_loops.sum() > 0 and stats.dropped_repeated.sum() > 0


def test_temporal_base_keeps_every_vertex():
    base, batches, stats = temporal_batches([0, 1], [1, 2], 10, 0.5, 0.5, 1)
    assert base.num_vertices == 10 and edge_set(base) == {(0, 1)} | {(v, v) for v in range(10)}
    assert pairs(batches[0].ins_src, batches[0].ins_dst) == [(1, 2)]


# --------------------------------------------------------------------------- files


def test_write_read_round_trip(tmp_path):
    batches = [
        Batch([1, 2], [3, 4], [5], [6]),
        Batch.empty(),
        Batch([], [], [7, 8, 9], [0, 1, 2]),
    ]
    path = tmp_path / "sub" / "batches.npz"
    made_for = Graph.from_edges([0], [1], 10)
    write_batches(path, batches, made_for=made_for, dataset="toy", experiment="random", fraction=1e-5, repeats=3,
                  strict=True)
    back = read_batches(path)
    assert len(back) == 3
    for a, b in zip(batches, back):
        for name in ("del_src", "del_dst", "ins_src", "ins_dst"):
            assert getattr(b, name).dtype == np.int32
            assert np.array_equal(getattr(a, name), getattr(b, name))
    assert read_batch_params(path) == dict(dataset="toy", experiment="random", fraction=1e-5, repeats=3, strict=True,
                                           graph_vertices=10, graph_edges=11, graph_sha256=made_for.sha256)
    with np.load(path) as data:
        assert data["del_ptr"].tolist() == [0, 2, 2, 2] and data["ins_ptr"].tolist() == [0, 1, 1, 4]
        assert data["del_ptr"].dtype == np.int64
    assert [p.name for p in path.parent.iterdir()] == ["batches.npz"]  # no temp file left


def test_batch_file_errors(tmp_path):
    with pytest.raises(ValueError, match="at least one batch"):
        write_batches(tmp_path / "none.npz", [], made_for=Graph.from_edges([0], [1]))
    with pytest.raises(TypeError, match="parameter note=None"):
        write_batches(tmp_path / "bad.npz", [Batch.empty()], made_for=Graph.from_edges([0], [1]), note=None)
    assert not (tmp_path / "bad.npz").exists()
    np.savez(tmp_path / "other.npz", del_src=np.zeros(1, np.int32))
    with pytest.raises(ValueError, match="not a batch file"):
        read_batches(tmp_path / "other.npz")


# --------------------------------------------------------------------------- workflow scripts


def run_script(script, tmp_path, dataset, output, **params):
    """Run a workflow script the way Snakemake's ``script:`` does, with a stand-in ``snakemake`` object
    (``output``: a list, or a dict of named outputs)."""
    log = tmp_path / f"{script}_{len(list(tmp_path.iterdir()))}.log"
    names = output if isinstance(output, dict) else {}
    files = [f for v in names.values() for f in (v if isinstance(v, list) else [v])] if names else output
    snakemake = SimpleNamespace(
        rule=script, input=[str(tmp_path / "graph.npz")], output=SimpleNamespace(**names) if names else files,
        log=[str(log)], params=SimpleNamespace(**params), wildcards=SimpleNamespace(dataset=dataset),
    )
    runpy.run_path(str(ROOT / "workflow" / "scripts" / f"{script}.py"), init_globals={"snakemake": snakemake})
    return log.read_text()


def test_workflow_scripts_write_what_the_library_computes(tmp_path, monkeypatch):
    checked = []  # each script checks the prepared graph against the catalog first (toy is in none)
    monkeypatch.setattr("dynpr.io.prepare.check_prepared_file", lambda *args: checked.append(args))
    rng = np.random.default_rng(8)
    src, dst = rng.integers(0, 40, 600).astype(np.int32), rng.integers(0, 40, 600).astype(np.int32)
    Graph.from_edges(src, dst, 40).save(tmp_path / "graph.npz", temporal_src=src, temporal_dst=dst,
                                         temporal_time=np.arange(600, dtype=np.int64))

    outputs = {"base": tmp_path / "base.npz", "batches": [tmp_path / "t1.npz", tmp_path / "t2.npz"]}
    log = run_script("make_temporal_batches", tmp_path, "toy", outputs, fractions=[0.02, 0.05], base_fraction=0.9,
                     num_batches=5)
    base, expected, stats = temporal_batches(src, dst, 40, 0.9, 0.02, 5)
    assert edge_set(Graph.load(tmp_path / "base.npz")) == edge_set(base)
    assert "540 of 600 temporal edges" in log
    got = read_batches(tmp_path / "t1.npz")
    assert [pairs(b.ins_src, b.ins_dst) for b in got] == [pairs(b.ins_src, b.ins_dst) for b in expected]
    assert f"inserted {stats.inserted.sum()}," in log and "short batches" in log
    assert read_batch_params(tmp_path / "t1.npz")["batch_size"] == 12
    assert read_batch_params(tmp_path / "t2.npz")["batch_size"] == 30  # each fraction its own file
    # the log ends with where the job's wall time went, every phase booked
    last = log.splitlines()[-1]
    assert last.startswith("make_temporal_batches for toy: wall time ")
    assert all(f"{phase} " in last for phase in ("start and imports", "load and checks", "work", "writing"))

    params = dict(fractions=[0.1, 0.2], insert_share=0.8, repeats=2, seed=42)
    run_script("make_random_batches", tmp_path, "toy", [tmp_path / "r1.npz", tmp_path / "q1.npz"], **params)
    log = run_script("make_random_batches", tmp_path, "toy", [tmp_path / "r2.npz", tmp_path / "q2.npz"], **params)
    assert sha256(tmp_path / "r1.npz") == sha256(tmp_path / "r2.npz")
    assert sha256(tmp_path / "q1.npz") == sha256(tmp_path / "q2.npz") != sha256(tmp_path / "r1.npz")
    graph = Graph.load(tmp_path / "graph.npz")
    direct = random_batch(graph, 0.1, 0.8, batch_rng(42, "toy", 0.1, 1))
    assert np.array_equal(read_batches(tmp_path / "r1.npz")[1].ins_src, direct.ins_src)
    assert f"{direct.insertions}/{direct.insertions} insertions" in log
    assert read_batch_params(tmp_path / "q1.npz")["fraction"] == 0.2
    assert checked == [(str(tmp_path / "graph.npz"), "toy")] * 3
