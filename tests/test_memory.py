"""dynpr.gpu.memory: the byte model against real arrays, and the fits check's message."""

from __future__ import annotations

import numpy as np
import pytest

from dynpr.graph.graph import Graph
from dynpr.gpu.memory import DEFAULT_RESERVE_BYTES, GIB, MODEL_APPROACHES, check_fits, device_bytes_needed


def engine_arrays(graph: Graph, approach: str, batch_edges: int, partition: str, contribution=np.float64) -> int:
    """Bytes of the arrays the GPU engine's default variant (``classes``; ``classes_c32`` with
    ``contribution`` float32) keeps on the device, built with NumPy and summed (as listed in
    ``dynpr.gpu.iterations.IterationLoop`` and ``ClassRanks``)."""
    n = graph.num_vertices
    if approach == "kahn":
        # as dynpr.gpu.kahn._buffers: in-degree, flags, scan, two frontiers, per-level sizes
        arrays = [graph.offsets, graph.targets, graph.in_offsets, np.empty((5, n), np.int32),
                  np.empty(n + 1, np.int32)]
        return sum(a.nbytes for a in arrays)
    degree = np.diff(graph.offsets)  # the upload's scratch
    uploaded = [graph.offsets, graph.targets, graph.in_offsets, graph.sources, 1.0 / degree, degree]
    listed = partition != "none"
    arrays = uploaded + [
        np.empty((2, n), np.float64),  # R, Rnew
        np.empty((2, n), contribution),  # contributions C, Cnew
        np.empty(n, np.uint8),  # dv
        np.empty(2, np.float64), np.empty(6, np.int32),  # change and push work, IterationState
        # the persistent launch's slots, work counters, and barrier counters (a ring of three and its prologue's)
        np.empty(6, np.float64), np.empty(3, np.int32), np.empty(4, np.uint64),
        np.empty((2, batch_edges if approach in ("dt", "df", "dfp") else 0), np.int32),  # the batch, where read
        np.empty(3, np.int64),  # the classes' three in-degree bounds (listed or not)
    ]
    if listed:  # four in-degree classes: ids, the plan (counts, first units, total, ticket)
        arrays += [np.empty((4, n), np.int32), np.empty(10, np.int32)]
    if approach in ("df", "dfp"):
        arrays.append(np.empty(n, np.uint8))  # ever affected
        arrays.append(np.empty((2, n), np.uint8))  # dx_in, dx_out of the fused expansion (every level)
    if approach == "dt":  # BFS visited flags, two levels' queues, control words
        arrays += [np.empty(n, np.int32), np.empty(2 * n, np.uint32), np.empty(4, np.int32)]
    return sum(a.nbytes for a in arrays)


def baseline_arrays(graph: Graph, approach: str, batch_edges: int, partition: str) -> int:
    """The same for the baseline variant ``partitioned`` (``dynpr.gpu.baselines.run_partitioned``)."""
    n = graph.num_vertices
    degree = np.diff(graph.offsets)
    uploaded = [graph.offsets, graph.targets, graph.in_offsets, graph.sources, 1.0 / degree, degree]
    arrays = uploaded + [np.empty((2, n), np.float64), np.empty((3, n), np.uint8), np.empty(500, np.float64),
                         np.empty((2, batch_edges), np.int32)]
    if partition != "none":
        arrays.append(np.empty((3, n), np.int32))  # in-degree partition: flag, scan, ids
    if partition == "in_out" and approach in ("df", "dfp"):
        arrays.append(np.empty((3, n), np.int32))  # out-degree partition for the expansion
    if approach == "dt":
        arrays += uploaded + [np.empty((3, n), np.uint8), np.empty(1, np.int32)]  # old graph, BFS
    return sum(a.nbytes for a in arrays)


def _graph() -> Graph:
    rng = np.random.default_rng(5)
    return Graph.from_edges(rng.integers(0, 700, 3000), rng.integers(0, 700, 3000), 700)


@pytest.mark.parametrize("partition", ["none", "in", "in_out"])
@pytest.mark.parametrize("approach", ["static", "nd", "dt", "df", "dfp", "kahn"])
def test_model_matches_engine_arrays(approach, partition):
    graph = _graph()
    got = device_bytes_needed(graph.num_vertices, graph.num_edges, approach, batch_edges=40, partition=partition)
    assert got == engine_arrays(graph, approach, 40, partition)


@pytest.mark.parametrize("partition", ["none", "in", "in_out"])
@pytest.mark.parametrize("approach", ["static", "nd", "dt", "df", "dfp"])
def test_model_counts_float32_contributions(approach, partition):
    graph = _graph()
    got = device_bytes_needed(graph.num_vertices, graph.num_edges, approach, batch_edges=40, partition=partition,
                              variant="classes_c32")
    assert got == engine_arrays(graph, approach, 40, partition, np.float32)
    assert device_bytes_needed(graph.num_vertices, graph.num_edges, approach, batch_edges=40,
                               partition=partition) - got == 8 * graph.num_vertices


@pytest.mark.parametrize("partition", ["none", "in", "in_out"])
@pytest.mark.parametrize("approach", ["static", "nd", "dt", "df", "dfp"])
def test_model_matches_baseline_arrays(approach, partition):
    graph = _graph()
    got = device_bytes_needed(graph.num_vertices, graph.num_edges, approach, batch_edges=40, partition=partition,
                              variant="partitioned")
    assert got == baseline_arrays(graph, approach, 40, partition)


def test_default_bounds_the_lighter_variants():
    # The default's classes and contributions outweigh every design but cuSPARSE's matrix copy.
    n, m = 10**6, 10**7
    for approach in ("static", "dfp", "dt"):
        default = device_bytes_needed(n, m, approach)
        assert device_bytes_needed(n, m, approach, variant=None) == default
        for variant in ("classes_sync", "pull_thread", "pull_warp", "pull_block", "push_atomic"):
            if approach == "static" or not variant.startswith(("pull", "push")):
                assert device_bytes_needed(n, m, approach, variant=variant) <= default
    assert device_bytes_needed(n, m, "static", variant="cusparse") > device_bytes_needed(n, m, "static")
    with pytest.raises(ValueError, match="variant"):
        device_bytes_needed(n, m, "static", variant="nope")


def test_model_orders_and_scales():
    n, m = 10**6, 10**7
    static = device_bytes_needed(n, m, "static")
    assert device_bytes_needed(n, m, "nd") == static
    assert static < device_bytes_needed(n, m, "df") == device_bytes_needed(n, m, "dfp") < device_bytes_needed(n, m, "dt")
    # Edges dominate: 8 bytes per edge (out + in ids); the paper's DT design keeps the old graph too.
    assert device_bytes_needed(n, 2 * m, "static") - static == 8 * m
    assert device_bytes_needed(n, 2 * m, "dt") - device_bytes_needed(n, m, "dt") == 8 * m
    partitioned = device_bytes_needed(n, m, "dt", variant="partitioned")
    assert device_bytes_needed(n, 2 * m, "dt", variant="partitioned") - partitioned == 16 * m
    # Beyond 2^31 edges the int64 offsets still carry it; only vertex ids are bounded.
    assert device_bytes_needed(n, 3 * 2**31, "static") > 24 * 2**30


def test_model_rejects_bad_input():
    with pytest.raises(ValueError, match="approach"):
        device_bytes_needed(10, 10, "pagerank")
    with pytest.raises(ValueError, match="int32"):
        device_bytes_needed(2**31, 10, "static")
    with pytest.raises(ValueError, match=">= 0"):
        device_bytes_needed(10, -1, "static")
    with pytest.raises(ValueError, match="partition"):
        device_bytes_needed(10, 10, "static", partition="out")


def test_check_fits_boundary_and_message():
    n, m = 5_000_000, 80_000_000
    needed = device_bytes_needed(n, m, "dfp")
    assert check_fits(n, m, "dfp", free_bytes=needed + DEFAULT_RESERVE_BYTES) == needed
    with pytest.raises(MemoryError) as err:
        check_fits(n, m, "dfp", free_bytes=needed + DEFAULT_RESERVE_BYTES - 1)
    msg = str(err.value)
    assert f"graph needs {needed / GIB:.2f} GiB on the GPU" in msg
    assert f"device has {(needed + DEFAULT_RESERVE_BYTES - 1) / GIB:.2f} GiB free" in msg
    assert str(needed) in msg


def test_check_fits_big_graph_on_small_device():
    # A Twitter-sized graph (41.6M vertices, 1.47B edges + self-loops) on a 12 GiB card. By hand:
    # 8 bytes per edge (two id arrays) + 81 per vertex (two offsets 16, 1/d 8, its scratch 8,
    # R and Rnew 16, C and Cnew 16, class ids 16, dv 1) + the offsets' end (16) + class counts,
    # bounds and plan (24 + 40) + change, push work and state (16 + 24) + the persistent launch's slots,
    # work counters and four barrier counters (48 + 12 + 32) = 14.39 GiB.
    n, m = 41_652_230, 1_468_365_182 + 41_652_230
    assert device_bytes_needed(n, m, "static") == 8 * m + 81 * n + 16 + 64 + 40 + 92
    with pytest.raises(MemoryError, match=r"graph needs 14\.39 GiB on the GPU, device has 12\.00 GiB free"):
        check_fits(n, m, "static", free_bytes=12 * GIB)


def test_check_fits_counts_resident_graphs():
    n, m = 10**6, 10**7
    needed = device_bytes_needed(n, m, "dt")
    resident = 16 * (n + 1) + 8 * m + 16 * n  # the new graph, already uploaded
    free = needed - resident + DEFAULT_RESERVE_BYTES
    assert check_fits(n, m, "dt", free_bytes=free, resident_bytes=resident) == needed - resident
    with pytest.raises(MemoryError):
        check_fits(n, m, "dt", free_bytes=free)


def test_relabel_adds_its_arrays_to_the_relabelled_approaches_of_the_default():
    # Oracle: the arrays dynpr.gpu.classes.Relabel and its sort keep, built with NumPy and summed.
    graph = _graph()
    n, m = graph.num_vertices, graph.num_edges
    arrays = [graph.in_offsets, graph.sources, np.empty((2, n), np.float64),  # in CSR, 1/d, start
              np.empty(n, np.int64), np.empty(n, np.int32),  # in-degrees, new ids
              np.empty((2, n), np.int64)]  # sort keys and order
    extra = sum(a.nbytes for a in arrays)
    for approach in ("static", "nd", "dt", "df", "dfp"):
        for variant in ("classes", None):
            plain = device_bytes_needed(n, m, approach, variant=variant)
            reached = n if approach == "dt" else 0  # DT's search flags in the original ids
            assert device_bytes_needed(n, m, approach, variant=variant, relabel=True) - plain == extra + reached
    for approach, variant in (("df", "classes_sync"), ("static", "classes_sync"),
                              ("static", "cusparse"), ("static", "partitioned")):
        plain = device_bytes_needed(n, m, approach, variant=variant)
        assert device_bytes_needed(n, m, approach, variant=variant, relabel=True) == plain
    with pytest.raises(MemoryError):
        check_fits(n, m, "static", free_bytes=device_bytes_needed(n, m, "static") + DEFAULT_RESERVE_BYTES,
                   relabel=True)


@pytest.mark.parametrize("approach,variant", [("static", None), ("dfp", None), ("dt", None), ("df", "partitioned"),
                                              ("static", "classes_c32"), ("dfp", "classes_c32")])
def test_model_matches_the_pool_after_a_run(approach, variant):
    """The model against what CuPy's allocator actually held: a fresh pool serves one run on a
    graph not yet on the device, and its size afterwards (every block it ever needed, freed ones
    kept for reuse) lies within 10% of the modelled bytes."""
    cupy = pytest.importorskip("cupy")
    from dynpr.batches import Batch, apply_batch
    from dynpr.gpu import pagerank as engine
    from dynpr.pagerank.options import PageRankOptions

    rng = np.random.default_rng(11)
    n, m = 200_000, 2_000_000
    old = Graph.from_edges(rng.integers(0, n, m), rng.integers(0, n, m), n)
    batch = Batch(old.sources[:0], old.sources[:0], rng.integers(0, n, 500), rng.integers(0, n, 500))
    new = apply_batch(old, batch)
    options = PageRankOptions(variant=variant)
    previous = np.full(n, 1.0 / n)
    engine._update("static", None, Graph.from_edges(np.array([0]), np.array([1]), 2), None, None, options)  # warm-up
    pool = cupy.cuda.MemoryPool()
    cupy.cuda.set_allocator(pool.malloc)
    try:
        engine._update(approach, old, new, batch, previous, options)
        held = pool.total_bytes()
    finally:
        cupy.cuda.set_allocator(cupy.get_default_memory_pool().malloc)
    model = device_bytes_needed(n, max(old.num_edges, new.num_edges), approach, batch_edges=batch.insertions,
                                variant=variant or "classes")
    assert 0.9 * model <= held <= 1.1 * model, (held, model)


class _FakeDevice:
    """An H100's attributes as CUDA reports them, for the launch-sizing helpers."""
    attributes = {"MultiProcessorCount": 132, "MaxThreadsPerMultiProcessor": 2048,
                  "MaxRegistersPerMultiprocessor": 65536, "MaxSharedMemoryPerMultiprocessor": 233472,
                  "ReservedSharedMemoryPerBlock": 1024}


class _FakeCupy:
    class cuda:
        @staticmethod
        def Device():
            return _FakeDevice()


class _FakeKernel:
    num_regs, shared_size_bytes, preferred_shared_memory_carveout = 64, 208, -1


def test_kept_launch_sizes_from_registers_shared_memory_and_units():
    from dynpr.designs import KEPT_ROWS
    from dynpr.gpu.device_graph import prefer_l1, resident_grid

    kernel, kept_rows = _FakeKernel(), 4 * KEPT_ROWS  # 16512 bytes
    # 64 registers: 4 blocks of 256 threads per multiprocessor; 13 by shared memory
    assert resident_grid(_FakeCupy, kernel, 10_000, kept_rows) == 4 * 132
    assert resident_grid(_FakeCupy, kernel, 296, kept_rows) == 296
    # 296 blocks: 3 per multiprocessor of 208 + 16512 + 1024 bytes, 22.8% of 233472
    prefer_l1(_FakeCupy, kernel, 296, kept_rows)
    assert kernel.preferred_shared_memory_carveout == 23
    prefer_l1(_FakeCupy, kernel, 20 * 132, kept_rows)
    assert kernel.preferred_shared_memory_carveout == 100


def test_experiment_plan_refuses_in_one_line_naming_its_items():
    from dynpr.errors import DeviceMemoryError, EXIT_RESOURCE
    from dynpr.gpu.memory import check_experiment_fits, experiment_device_bytes
    from dynpr.pagerank.options import PageRankOptions

    n, m, b = 1 << 26, 2_170_949_635, 217_000_000  # rmat-26-ef32 at its 0.1 batch
    plan = experiment_device_bytes(n, m, b, MODEL_APPROACHES[:5], PageRankOptions(), relabel=True)
    assert plan["peak"] == plan["graphs"] + plan["batch"] + plan["ranks"] + max(plan["apply"], plan["run"])
    text, peak = check_experiment_fits(n, m, b, MODEL_APPROACHES[:5], PageRankOptions(),
                                       free_bytes=plan["peak"] + (1 << 30))
    assert "graphs " in text and "peak " in text and peak == plan["peak"]
    with pytest.raises(DeviceMemoryError) as refused:
        check_experiment_fits(n, m, b, MODEL_APPROACHES[:5], PageRankOptions(), free_bytes=40 << 30)
    message = str(refused.value)
    assert "\n" not in message and "needs" in message and "40.00 GiB free" in message and "apply" in message
    assert refused.value.exit_code == EXIT_RESOURCE and isinstance(refused.value, MemoryError)
    # the temporal experiment keeps the previous batch's graph too, as does DT of the paper's design;
    # a larger batch needs more
    assert experiment_device_bytes(n, m, b, MODEL_APPROACHES[:5], PageRankOptions(), temporal=True)["peak"] > plan["peak"]
    kept_old = experiment_device_bytes(n, m, b, MODEL_APPROACHES[:5], PageRankOptions(variant="partitioned"))
    assert kept_old["graphs"] == 2 * plan["graphs"]
    assert experiment_device_bytes(n, m, 2 * b, MODEL_APPROACHES[:5], PageRankOptions())["peak"] > \
        experiment_device_bytes(n, m, b, MODEL_APPROACHES[:5], PageRankOptions())["peak"]


# The experiment's device plan against the prepared graph (CSR and transpose), at the largest batch of
# config/scale.yaml: the graph is applied to in place, so the plan is one graph plus the largest of
# the apply's new CSR and scratch and the run's own buffers. What the plan reaches at this commit (the
# runs' relabelled in-CSR, 4 bytes per edge, and ~120 bytes per vertex of run buffers keep it above
# the 2.0x and 3.0x): held here so that it cannot grow back.
SCALE_PLAN_RATIOS = {"rmat-24": 2.65, "rmat-26": 2.65, "rmat-26-ef32": 2.65, "rmat-27-ef28": 2.65,
                     "rmat-28-ef3": 4.3}


@pytest.mark.parametrize("dataset", sorted(SCALE_PLAN_RATIOS))
def test_scale_plan_against_the_prepared_graph(dataset):
    from dynpr.io.catalog import get_dataset
    from dynpr.designs import relabels
    from dynpr.pipeline.footprint import dataset_counts
    from dynpr.gpu.memory import experiment_device_bytes
    from dynpr.pagerank.options import PageRankOptions

    c = dataset_counts(get_dataset(dataset), gpu=True)
    graph = 16 * (c.vertices + 1) + 8 * c.edges
    plan = experiment_device_bytes(c.vertices, c.edges, int(0.1 * (c.edges - c.vertices)) + 1, MODEL_APPROACHES[:5],
                                   PageRankOptions(), relabel=relabels(c.vertices, 50 << 20))
    assert plan["peak"] <= SCALE_PLAN_RATIOS[dataset] * graph
    assert plan["graphs"] < 1.5 * graph  # one graph (and its 1/d), never the old one beside the new
