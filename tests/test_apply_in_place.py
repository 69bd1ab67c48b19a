"""Applying a batch in place, one CSR at a time, and undoing it (dynpr.batches.apply_batch_in_place):
the same arrays as the copying apply, the graph before restored bit for bit, and never two graphs
in memory. The NumPy path here is the device path with xp=numpy; the GPU twin is in test_gpu.py."""

from __future__ import annotations

import tracemalloc
import warnings

import numpy as np
import pytest

from dynpr.batches import (Batch, BatchWarning, GraphSlot, apply_batch_in_place, apply_batch_with_report,
                           random_batch, undo_batch_in_place)
from dynpr.graph.graph import Graph
from batch_cases import messy_batch

FIELDS = ("offsets", "targets", "in_offsets", "sources")


def random_graph(n, m, seed, self_loops=True):
    rng = np.random.default_rng(seed)
    return Graph.from_edges(rng.integers(0, n, m), rng.integers(0, n, m), n, self_loops=self_loops)


def copy_of(graph):
    return Graph(*(getattr(graph, name).copy() for name in FIELDS), graph.vertex_ids)


def assert_same_arrays(a, b):
    for name in FIELDS:
        assert getattr(a, name).dtype == getattr(b, name).dtype, name
        assert np.array_equal(getattr(a, name), getattr(b, name)), name


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("self_loops", [True, False])
def test_in_place_apply_is_the_copying_apply_and_undo_restores_the_graph(seed, self_loops):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 60))
    base = random_graph(n, int(rng.integers(0, 4 * n)), seed, self_loops)
    batch = messy_batch(base, rng)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BatchWarning)
        expected, expected_report = apply_batch_with_report(base, batch)
    slot = GraphSlot(copy_of(base))
    with pytest.warns(BatchWarning, match="batch edges skipped"):
        report, undo = apply_batch_in_place(slot, batch)
    assert report == expected_report
    assert_same_arrays(slot.graph, expected)
    assert slot.loops_complete  # every vertex has its self-loop after an apply
    assert undo.reversed_batch is None  # skipped edges: undone from the exact edges, not the batch
    undo_batch_in_place(slot, undo)
    assert_same_arrays(slot.graph, base)  # self-loops the batch added are gone again
    assert slot.loops_complete == (undo.reversed_batch is not None)


def test_clean_batches_undo_through_the_reversed_batch_and_chain():
    base = random_graph(300, 3000, seed=4)
    slot = GraphSlot(copy_of(base))
    expected = base
    for seed in range(3):  # one after another, as the temporal experiment applies them
        batch = random_batch(expected, 0.1, 0.8, np.random.default_rng(seed))
        expected, expected_report = apply_batch_with_report(expected, batch)
        report, undo = apply_batch_in_place(slot, batch)
        assert report == expected_report and not report.skipped
        assert_same_arrays(slot.graph, expected)
    # the last batch reversed: views of its arrays, no lists of its own
    assert undo.reversed_batch is not None and undo.edges is None
    assert undo.reversed_batch.del_src is batch.ins_src and undo.reversed_batch.ins_dst is batch.del_dst
    undo_batch_in_place(slot, undo)
    before_last, _ = apply_batch_with_report(expected, undo.reversed_batch)
    assert_same_arrays(slot.graph, before_last)


def test_strict_in_place_apply_refuses_and_keeps_the_graph():
    base = random_graph(50, 200, seed=1)
    slot = GraphSlot(copy_of(base))
    with pytest.raises(ValueError, match="deletions of missing edges"):
        apply_batch_in_place(slot, Batch([0, 0], [1, 1], [], []), strict=True)
    assert_same_arrays(slot.graph, base)


def test_undo_on_another_graph_is_refused():
    base = random_graph(100, 800, seed=2)
    batch = random_batch(base, 0.1, 0.8, np.random.default_rng(0))
    slot = GraphSlot(copy_of(base))
    _, undo = apply_batch_in_place(slot, batch)
    undo_batch_in_place(slot, undo)
    with pytest.raises(ValueError, match="not the one the batch was applied to"):
        undo_batch_in_place(slot, undo)  # its inserted edges are gone already


def test_in_place_apply_never_holds_two_graphs(monkeypatch):
    """The copying apply holds the old graph and the new one; in place, the old CSR is given back
    before the transpose is spliced: the peak is the graph, one CSR and splice scratch."""
    monkeypatch.setattr("dynpr.graph.graph._MIN_PIECE", 1 << 16)  # pieces of an eighth, as on large graphs
    base = random_graph(1 << 16, 1 << 21, seed=3)
    batch = random_batch(base, 1e-3, 0.8, np.random.default_rng(0))
    one_csr = base.offsets.nbytes + base.targets.nbytes

    def peak(apply):
        tracemalloc.start()  # before the copy, so that giving its arrays back counts
        try:
            slot = GraphSlot(copy_of(base), loops_complete=True)  # no search for missing self-loops
            apply(slot)
            return tracemalloc.get_traced_memory()[1], slot.graph
        finally:
            tracemalloc.stop()

    copying, _ = peak(lambda slot: slot.put(apply_batch_with_report(slot.graph, batch)[0]))
    in_place, applied = peak(lambda slot: apply_batch_in_place(slot, batch))
    assert copying > 2 * base.nbytes
    # scratch: one byte per entry of the new CSR, an eighth of the kept columns and masks, offsets
    assert in_place < base.nbytes + one_csr + 2 * base.num_edges + 32 * base.num_vertices < copying
    assert applied.num_edges == base.num_edges + batch.insertions - batch.deletions


def test_the_memory_check_reads_the_run_logs_batch_lines():
    """benchmarks/experiment_memory.py parses the line run_batches logs per batch on the GPU."""
    import runpy
    from pathlib import Path

    script = runpy.run_path(str(Path(__file__).resolve().parents[1] / "benchmarks" / "experiment_memory.py"))
    line = ("rmat-26 fraction=1e-4 batch 1/1: load 0.01 s, apply 0.20 s; GPU pool peak 24.10 GiB (by phase: "
            "load 9.40, apply 14.20, static 21.30, reference 20.90, dfp 24.10, restore 14.10), 9.90 GiB in use, "
            "device 60.00 of 79.10 GiB free; plan 24.68 GiB; host RSS 1.2 GiB")
    (row,) = script["pool_rows"](f"x\n{line}\n")
    assert (row["dataset"], row["fraction"], row["batch"]) == ("rmat-26", "1e-4", 1)
    assert (row["apply"], row["dfp"], row["peak"], row["plan"]) == (14.20, 24.10, 24.10, 24.68)
    assert row["peak/plan"] == pytest.approx(24.10 / 24.68)


@pytest.mark.gpu
@pytest.mark.parametrize("fraction", [1e-3, 0.1])
def test_in_place_apply_on_the_device_is_the_host_one(fraction):
    """The device path: the same arrays as the host's in-place apply, the graph before restored,
    and the old graph's memory given back (the pool in use never holds two graphs)."""
    cupy = pytest.importorskip("cupy")
    from dynpr.gpu.resident import to_host_graph, to_resident, to_resident_batch

    base = random_graph(1 << 14, 1 << 18, seed=5)
    batch = random_batch(base, fraction, 0.8, np.random.default_rng(1))
    host = GraphSlot(copy_of(base))
    apply_batch_in_place(host, batch)
    pool = cupy.get_default_memory_pool()
    device = GraphSlot(to_resident(base))
    resident = pool.used_bytes()
    _, undo = apply_batch_in_place(device, to_resident_batch(batch))
    assert_same_arrays(to_host_graph(device.graph), host.graph)
    assert pool.used_bytes() < resident + base.nbytes // 2  # the new graph, not the old one beside it
    undo_batch_in_place(device, undo)
    assert_same_arrays(to_host_graph(device.graph), base)
