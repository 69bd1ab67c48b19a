"""GPU engines against their CPU twins (run on a machine with CuPy and a CUDA device).

Oracles: ``dynpr.pagerank.cpu`` (same semantics, SciPy) and ``dynpr.kahn``'s
CPU path; the paper's reference ranks (Static at tau=1e-100, 500
iterations) computed on the CPU; DT's affected set from the CPU marking.
"""

from __future__ import annotations

import functools
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("cupy")
from dynpr.backend import gpu_available  # noqa: E402

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not gpu_available(), reason="needs a CUDA device")]

from dynpr import APPROACHES  # noqa: E402
from dynpr.batches import Batch, apply_batch, random_batch  # noqa: E402
from dynpr.graph.graph import Graph  # noqa: E402
from dynpr import designs  # noqa: E402
from dynpr.gpu import classes as gpu_classes  # noqa: E402
from dynpr.gpu import device_graph as gpu_device  # noqa: E402
from dynpr.gpu import loader  # noqa: E402
from dynpr.gpu import pagerank as gpu_pagerank  # noqa: E402
from dynpr.kahn import kahn  # noqa: E402
from dynpr.pagerank import cpu as cpu_pagerank  # noqa: E402
from dynpr.pagerank import l1_error, marking, reference  # noqa: E402
from dynpr.errors import ConvergenceError  # noqa: E402
from dynpr.pagerank.options import PageRankOptions  # noqa: E402
from dynpr.generate.rmat import rmat_edges  # noqa: E402

EMBEDDED = Path(__file__).resolve().parents[1] / "datasets" / "embedded"
GRAPHS = ("CollegeMsg", "sx-mathoverflow", "soc-Epinions1", "web-NotreDame", "rmat14")
DYNAMIC = ("nd", "dt", "df", "dfp")
OPTIONS = PageRankOptions()


@functools.cache
def load(name: str) -> Graph:
    """An embedded SNAP graph (ids as in the file) or an R-MAT graph, with self-loops."""
    if name == "rmat14":
        return Graph.from_edges(*rmat_edges(14, 16, seed=7))
    import pandas as pd

    table = pd.read_csv(EMBEDDED / f"{name}.txt.gz", sep=r"\s+", comment="#", header=None,
                        usecols=[0, 1], dtype=np.int64)
    return Graph.from_edges(table[0].to_numpy(), table[1].to_numpy())


@functools.cache
def scenario(name: str, fraction: float = 1e-3):
    """(old graph, new graph, batch, converged old ranks, reference ranks of the new graph)."""
    old = load(name)
    batch = random_batch(old, fraction, 0.8, np.random.default_rng(11))
    new = apply_batch(old, batch)
    previous = cpu_pagerank._update("static", None, old, None, None, OPTIONS).ranks
    return old, new, batch, previous, reference(new, OPTIONS)


@pytest.mark.parametrize("name", GRAPHS)
def test_static_matches_cpu(name):
    graph = load(name)
    cpu = cpu_pagerank._update("static", None, graph, None, None, OPTIONS)
    gpu = gpu_pagerank._update("static", None, graph, None, None, OPTIONS)
    assert gpu.iterations == cpu.iterations
    assert l1_error(gpu.ranks, cpu.ranks) <= 1e-12
    assert gpu.backend == "gpu" and gpu.affected == graph.num_vertices
    assert gpu.time_ms > 0 and gpu.time_ms == pytest.approx(sum(gpu.phases.values()))
    assert set(gpu.phases) == {"partition_ms", "mark_ms", "compute_ms"}


def test_static_initial_and_cap():
    graph = load("CollegeMsg")
    initial = np.random.default_rng(3).random(graph.num_vertices)
    options = replace(OPTIONS, max_iterations=7)
    cpu = cpu_pagerank._update("static", None, graph, None, None, options, initial=initial)
    gpu = gpu_pagerank._update("static", None, graph, None, None, options, initial=initial)
    assert gpu.iterations == cpu.iterations == 7
    assert gpu.converged == cpu.converged
    assert l1_error(gpu.ranks, cpu.ranks) <= 1e-12


@pytest.mark.parametrize("relabel", (False, True))
@pytest.mark.parametrize("variant", (None, "classes_graphs", "classes_persistent", "partitioned"))
def test_reference_going_on_from_static_is_the_reference(monkeypatch, variant, relabel):
    # the GPU's Static is deterministic (no atomics in a vertex's sum), so its run is
    # the reference run's start bit for bit, at every launch design
    monkeypatch.setattr(gpu_pagerank, "relabels", lambda n, l2: relabel)
    graph = load("web-NotreDame")
    options = replace(OPTIONS, variant=variant)
    result = gpu_pagerank._update("static", None, graph, None, None, options)
    fresh = reference(graph, options, backend="gpu")
    assert np.array_equal(reference(graph, options, backend="gpu", static_result=result), fresh)


@pytest.mark.parametrize("approach", DYNAMIC)
@pytest.mark.parametrize("name", GRAPHS)
def test_dynamic_error_within_twice_cpu(name, approach):
    old, new, batch, previous, ref = scenario(name)
    cpu = cpu_pagerank._update(approach, old, new, batch, previous, OPTIONS)
    gpu = gpu_pagerank._update(approach, old, new, batch, previous, OPTIONS)
    cpu_error, gpu_error = l1_error(cpu.ranks, ref), l1_error(gpu.ranks, ref)
    assert gpu_error <= 2 * cpu_error + 1e-13, (gpu_error, cpu_error)
    if approach in ("nd", "dt"):
        # No thresholds decide anything here, so the runs agree to rounding.
        assert gpu.iterations == cpu.iterations
        assert l1_error(gpu.ranks, cpu.ranks) <= 1e-11
        assert gpu.affected == cpu.affected
    else:
        assert abs(gpu.iterations - cpu.iterations) <= 1
        assert abs(gpu.affected - cpu.affected) <= max(2, 0.01 * cpu.affected)


@pytest.mark.parametrize("name", ("CollegeMsg", "rmat14"))
def test_dt_keeps_unaffected_ranks(name):
    old, new, batch, previous, _ = scenario(name)
    gpu = gpu_pagerank._update("dt", old, new, batch, previous, OPTIONS)
    affected = marking.traversal_affected(old, new, batch)
    assert gpu.affected == int(affected.sum())
    np.testing.assert_array_equal(gpu.ranks[~affected], previous[~affected])


def test_empty_batch_leaves_ranks():
    old, _, _, previous, _ = scenario("CollegeMsg")
    for approach in ("dt", "df", "dfp"):
        gpu = gpu_pagerank._update(approach, old, old, Batch.empty(), previous, OPTIONS)
        assert gpu.iterations == 1 and gpu.affected == 0
        np.testing.assert_array_equal(gpu.ranks, previous)


@pytest.mark.parametrize("approach", APPROACHES)
@pytest.mark.parametrize("name", ("CollegeMsg", "rmat14"))
def test_partition_levels_identical(name, approach):
    # Every level sends each vertex to the same kernel (by degree), so the
    # arithmetic and hence the ranks are bit for bit the same.
    old, new, batch, previous, _ = scenario(name)
    results = [
        gpu_pagerank._update(approach, old, new, batch, previous, replace(OPTIONS, partition=level))
        for level in ("none", "in", "in_out")
    ]
    for other in results[1:]:
        np.testing.assert_array_equal(other.ranks, results[0].ranks)
        assert (other.iterations, other.affected) == (results[0].iterations, results[0].affected)


@pytest.mark.parametrize("switch", (0, 4, 1 << 30))
@pytest.mark.parametrize("approach", ("static", "dfp"))
def test_degree_switch_extremes(switch, approach):
    # 0: every vertex takes the block kernels; 2^30: every vertex the thread kernels.
    old, new, batch, previous, _ = scenario("soc-Epinions1")
    options = replace(OPTIONS, degree_switch=switch)
    cpu = cpu_pagerank._update(approach, old, new, batch, previous, options)
    gpu = gpu_pagerank._update(approach, old, new, batch, previous, options)
    assert abs(gpu.iterations - cpu.iterations) <= (0 if approach == "static" else 1)
    assert l1_error(gpu.ranks, cpu.ranks) <= (1e-12 if approach == "static" else 1e-9)


def test_unknown_variant_is_an_error():
    graph = load("CollegeMsg")
    with pytest.raises(ValueError, match="unknown GPU variant"):
        gpu_pagerank._update("static", None, graph, None, None, replace(OPTIONS, variant="nope"))


def test_headers_are_inlined():
    source = loader.inline_source("pagerank.cu")
    assert '#include "' not in source  # the project's headers are inlined; system ones stay includes
    assert "atomic_max_nonneg" in source  # defined in common.cuh


def _dag(n: int, depth_chain: bool) -> Graph:
    if depth_chain:  # a path 0 -> 1 -> ... -> n-1 plus shortcuts: n levels
        src = np.concatenate([np.arange(n - 1), np.arange(0, n - 3, 3)])
        dst = np.concatenate([np.arange(1, n), np.arange(3, n, 3)])
        return Graph.from_edges(src, dst, n, self_loops=False)
    src, dst = rmat_edges(12, 8, seed=5)
    keep = src < dst  # edges only from lower to higher id: acyclic
    return Graph.from_edges(src[keep], dst[keep], 1 << 12, self_loops=False)


@pytest.mark.parametrize("case", GRAPHS + ("dag", "chain", "cycle"))
def test_kahn_matches_cpu(case):
    if case == "dag":
        graph = _dag(0, False)
    elif case == "chain":
        graph = _dag(3000, True)
    elif case == "cycle":  # 0 feeds the cycle 1 -> 2 -> 3 -> 1, which feeds 4; 5 -> 6 is apart
        graph = Graph.from_edges(np.array([0, 1, 2, 3, 3, 5]), np.array([1, 2, 3, 1, 4, 6]), self_loops=False)
    else:
        graph = load(case).without_self_loops()
    cpu = kahn(graph, backend="cpu")
    gpu = kahn(graph, backend="gpu")
    assert (gpu.is_dag, gpu.processed, gpu.levels) == (cpu.is_dag, cpu.processed, cpu.levels)
    np.testing.assert_array_equal(gpu.remaining, cpu.remaining)
    assert gpu.remaining.dtype == np.int32 and gpu.backend == "gpu"
    if case == "chain":
        assert gpu.is_dag and gpu.levels == 3000
    if case == "cycle":
        assert (gpu.is_dag, gpu.processed, gpu.levels) == (False, 3, 2)
        assert gpu.remaining.tolist() == [1, 2, 3, 4]


def test_kahn_on_graph_with_self_loops_processes_nothing():
    graph = load("CollegeMsg")
    result = kahn(graph, backend="gpu")
    assert (result.processed, result.levels, result.is_dag) == (0, 0, False)
    assert len(result.remaining) == graph.num_vertices


# ---- kernel variants, device-side convergence, persistent Kahn ----

from dynpr.generate.random_dag import random_dag  # noqa: E402
from dynpr.gpu import VARIANTS  # noqa: E402
from dynpr.gpu.kahn import kahn as gpu_kahn  # noqa: E402

FULL_VARIANTS = ("classes", "classes_graphs", "classes_persistent", "classes_sync", "classes_unfused", "partitioned",
                 "partitioned_prc")
# Designs in double precision, which must match the CPU's float64 ranks to rounding (classes_c32's
# float32 contributions have their twin on the CPU: test_gpu_contributions.py).
FLOAT64_VARIANTS = tuple(v for v in VARIANTS if v not in ("pull_float32", "classes_c32"))
# float32 ranks summing to 1: an L1 distance from the float64 ranks of the CPU up to this is rounding (the
# float32 epsilon, 6e-8, amplified by the 1 / (1 - alpha) of the iteration and the sums over in-edges).
FLOAT32_L1 = 1e-5


@pytest.mark.parametrize("variant", FLOAT64_VARIANTS)
@pytest.mark.parametrize("name", ("CollegeMsg", "sx-mathoverflow", "web-NotreDame", "rmat14"))
def test_static_variant_matches_cpu(name, variant):
    graph = load(name)
    options = replace(OPTIONS, variant=variant)
    cpu = cpu_pagerank._update("static", None, graph, None, None, OPTIONS)
    gpu = gpu_pagerank._update("static", None, graph, None, None, options)
    assert gpu.iterations == cpu.iterations
    assert l1_error(gpu.ranks, cpu.ranks) <= 1e-12
    assert gpu.time_ms > 0 and gpu.affected == graph.num_vertices
    assert gpu.variant == variant and cpu.variant == ""


def test_default_variant_is_reported():
    result = gpu_pagerank._update("static", None, load("CollegeMsg"), None, None, OPTIONS)
    assert OPTIONS.variant is None and result.variant == "classes"


@pytest.mark.parametrize("name", ("CollegeMsg", "sx-mathoverflow", "web-NotreDame", "rmat14"))
def test_float32_variant_matches_cpu_to_float32_rounding(name):
    graph = load(name)
    cpu = cpu_pagerank._update("static", None, graph, None, None, OPTIONS)
    gpu = gpu_pagerank._update("static", None, graph, None, None, replace(OPTIONS, variant="pull_float32"))
    # computed in float32: every rank is a float32 value (widened on return)
    assert np.array_equal(gpu.ranks.astype(np.float32).astype(np.float64), gpu.ranks)
    assert l1_error(gpu.ranks, cpu.ranks) <= FLOAT32_L1
    assert 0 < gpu.iterations <= OPTIONS.max_iterations and gpu.variant == "pull_float32"
    # ND from the CPU's ranks stays there (within float32 rounding)
    nd = gpu_pagerank._update("nd", graph, graph, Batch.empty(), cpu.ranks,
                             replace(OPTIONS, variant="pull_float32"))
    assert l1_error(nd.ranks, cpu.ranks) <= FLOAT32_L1


def _boundary_graph() -> Graph:
    """Vertices 1000..1002 with in-degree 31, 32 and 33 (around the hybrid's switch to a warp), a ring whose
    edges stay inside blocks of 256 but for every 256th, and long edges across blocks (the tiled kernel's
    global path)."""
    n = 4096
    ring = np.arange(n)
    extra = (28, 29, 30)  # each vertex already has a ring edge, a long edge and its self-loop
    src = [ring, ring, *(np.arange(d) * 7 + 1 for d in extra)]
    dst = [(ring + 1) % n, (ring * 37 + 300) % n, *(np.full(d, 1000 + k) for k, d in enumerate(extra))]
    graph = Graph.from_edges(np.concatenate(src), np.concatenate(dst), n)
    assert list(np.diff(graph.in_offsets)[1000:1003]) == [31, 32, 33]
    return graph


@pytest.mark.parametrize("variant", ("hybrid_thread_warp", "pull_tiled", "pull_float32"))
def test_report_designs_at_their_boundaries(variant):
    graph = _boundary_graph()
    cpu = cpu_pagerank._update("static", None, graph, None, None, OPTIONS)
    gpu = gpu_pagerank._update("static", None, graph, None, None, replace(OPTIONS, variant=variant))
    assert l1_error(gpu.ranks, cpu.ranks) <= (FLOAT32_L1 if variant == "pull_float32" else 1e-12)
    if variant != "pull_float32":
        assert gpu.iterations == cpu.iterations


@pytest.mark.parametrize("variant", VARIANTS)
def test_variant_cap_and_initial(variant):
    # The cap stops mid-way (device-side counter) and the result is the last Rnew.
    graph = load("rmat14")
    initial = np.random.default_rng(5).random(graph.num_vertices)
    options = replace(OPTIONS, max_iterations=7)
    # the CPU reads the variant's contributions' dtype alone: the twin of classes_c32, float64 otherwise
    cpu = cpu_pagerank._update("static", None, graph, None, None, replace(options, variant=variant), initial=initial)
    gpu = gpu_pagerank._update("static", None, graph, None, None, replace(options, variant=variant), initial=initial)
    assert gpu.iterations == cpu.iterations == 7
    assert gpu.converged == cpu.converged
    # These ranks sum to ~n/2, not 1: rounding (push_atomic's atomic order) scales with the sum.
    bound = FLOAT32_L1 * cpu.ranks.sum() if variant == "pull_float32" else 1e-15 * graph.num_vertices
    assert l1_error(gpu.ranks, cpu.ranks) <= bound


@pytest.mark.parametrize("iterations", (1, 2, 15, 16, 17, 31, 32, 33))
@pytest.mark.parametrize("variant", ("classes_graphs", "classes_persistent"))
def test_graph_replay_and_persistent_solve_stop_at_the_cap(iterations, variant):
    # Caps on both sides of the replay size (16 per replay); the persistent solve's ring of
    # three slots wraps at 3, 4, 6, ...
    graph = load("CollegeMsg")
    options = replace(OPTIONS, max_iterations=iterations, variant=variant)
    cpu = cpu_pagerank._update("static", None, graph, None, None, options)
    gpu = gpu_pagerank._update("static", None, graph, None, None, options)
    assert gpu.iterations == iterations
    assert gpu.converged == cpu.converged
    assert l1_error(gpu.ranks, cpu.ranks) <= 1e-12


@pytest.mark.parametrize("variant", FULL_VARIANTS)
@pytest.mark.parametrize("approach", DYNAMIC)
@pytest.mark.parametrize("name", ("CollegeMsg", "sx-mathoverflow", "rmat14"))
def test_dynamic_variants_within_twice_cpu(name, approach, variant):
    old, new, batch, previous, ref = scenario(name)
    cpu = cpu_pagerank._update(approach, old, new, batch, previous, OPTIONS)
    gpu = gpu_pagerank._update(approach, old, new, batch, previous, replace(OPTIONS, variant=variant))
    assert l1_error(gpu.ranks, ref) <= 2 * l1_error(cpu.ranks, ref) + 1e-13
    assert abs(gpu.iterations - cpu.iterations) <= (0 if approach in ("nd", "dt") else 1)
    if approach in ("nd", "dt"):
        assert gpu.affected == cpu.affected


@pytest.mark.parametrize("variant", sorted(v for v in VARIANTS if designs.VARIANTS[v].static_only))
def test_static_only_variants_refuse_dynamic(variant):
    old, new, batch, previous, _ = scenario("CollegeMsg")
    with pytest.raises(ValueError, match="static and nd only"):
        gpu_pagerank._update("dfp", old, new, batch, previous, replace(OPTIONS, variant=variant))


@pytest.mark.parametrize("driver", ("persistent", "levels", "two_phase", "host_removal"))
@pytest.mark.parametrize("case", ("wide", "deep", "cyclic", "rmat14"))
def test_kahn_drivers_match_cpu(case, driver):
    if case == "wide":
        graph = random_dag(20_000, 200_000, seed=1)
    elif case == "deep":
        graph = random_dag(30_000, 120_000, depth=5_000, seed=2)
    elif case == "cyclic":  # a DAG plus one back edge closing a cycle in the middle
        dag = random_dag(5_000, 40_000, depth=50, seed=3)
        src, dst = dag.edges()
        graph = Graph.from_edges(np.append(src, 4_000), np.append(dst, 100), 5_000, self_loops=False)
    else:
        graph = load("rmat14").without_self_loops()
    cpu = kahn(graph, backend="cpu")
    gpu = gpu_kahn(graph, driver=driver)
    assert (gpu.is_dag, gpu.processed, gpu.levels) == (cpu.is_dag, cpu.processed, cpu.levels)
    np.testing.assert_array_equal(gpu.remaining, cpu.remaining)
    if case == "deep":
        assert gpu.levels == 5_000
    if case == "cyclic":
        assert not gpu.is_dag and len(gpu.remaining) > 0


def _dense_case(case: str) -> np.ndarray:
    """A dense adjacency matrix: the report's graphs (2,000 vertices past one 16 x 16 tile row of
    frontier vertices, 1,500 at a density that leaves a partial DAG), or a DAG with a back edge."""
    from dynpr.generate.random_dag import report_matrix

    if case == "dag-back-edge":
        dag = random_dag(3_000, 30_000, depth=40, seed=5)
        matrix = np.zeros((3_000, 3_000), dtype=np.uint8)
        src, dst = dag.edges()
        matrix[src, dst] = 1
        matrix[2_500, 200] = 1  # closes a cycle through the layers between
        return matrix
    kind, density = {"report-acyclic": ("acyclic", 0.5), "report-cyclic": ("cyclic", 0.5),
                     "report-sparse-cyclic": ("cyclic", 0.0004), "report-sparse-acyclic": ("acyclic", 0.002)}[case]
    return report_matrix(2_000 if density == 0.5 else 1_500, kind, density=density, seed=9)


@pytest.mark.parametrize("shared_memory", (False, True))
@pytest.mark.parametrize("case", ("report-acyclic", "report-cyclic", "report-sparse-cyclic", "report-sparse-acyclic",
                                  "dag-back-edge"))
def test_kahn_dense_matches_its_twin_and_csr(case, shared_memory):
    from dynpr.gpu.kahn import kahn_dense as gpu_kahn_dense
    from dynpr.kahn import kahn_dense
    from dynpr.generate.random_dag import matrix_graph

    matrix = _dense_case(case)
    cpu = kahn_dense(matrix)
    gpu = gpu_kahn_dense(matrix, shared_memory=shared_memory)
    assert (gpu.is_dag, gpu.processed, gpu.levels) == (cpu.is_dag, cpu.processed, cpu.levels)
    np.testing.assert_array_equal(gpu.remaining, cpu.remaining)
    csr = gpu_kahn(matrix_graph(matrix), driver="levels")
    assert (csr.processed, csr.levels) == (gpu.processed, gpu.levels)
    assert gpu.backend == "gpu" and gpu.time_ms > 0
    if case == "report-cyclic":
        assert gpu.levels == 0 and not gpu.is_dag
    if case == "report-acyclic":
        assert gpu.is_dag and gpu.levels > 1_000
    if case in ("report-sparse-cyclic", "dag-back-edge"):
        assert 0 < gpu.processed < len(matrix)  # a partial run: the removal and the cycle both seen


def test_kahn_table_rows_for_every_driver(tmp_path):
    from types import SimpleNamespace

    from dynpr.evaluation import bench

    load("CollegeMsg").save(tmp_path / "CollegeMsg.npz")
    params = SimpleNamespace(kahn_vertices=2_000, kahn_edges=10_000, kahn_depth=30, kahn_report_sizes=[1_000],
                             kahn_report_density=0.5, seed=1, graphs=["CollegeMsg"])
    table = bench.kahn_table(bench.kahn_cases(params, {"CollegeMsg": str(tmp_path / "CollegeMsg.npz")}), "d", "c",
                             repeats=2, log=lambda line: None)
    assert tuple(table.columns) == bench.KAHN_COLUMNS
    drivers = table.groupby("graph", sort=False)["driver"].apply(tuple).to_dict()
    csr = ("cpu", "levels", "persistent", "two_phase", "host_removal")
    dense = csr + ("dense", "dense_shared")
    assert drivers == {"dag-random": csr, "dag-depth30": csr, "cyclic-1k": dense, "acyclic-1k": dense,
                       "CollegeMsg": csr}
    assert (table["time_ms"] > 0).all() and (table["benchmark"] == "kahn").all()
    assert table.loc[table["graph"] == "dag-depth30", "levels"].eq(30).all()
    assert table["repeats"].between(1, 2).all() and (table.loc[table["driver"] != "cpu", "repeats"] == 2).all()
    # the figure's spread: the fastest and slowest repeat around their median
    assert (table["time_min_ms"] <= table["time_ms"]).all() and (table["time_ms"] <= table["time_max_ms"]).all()
    cpu = table[table["driver"] == "cpu"]
    assert (cpu["time_min_ms"] == cpu["time_max_ms"]).all()  # timed once


def test_too_big_graph_fails_before_upload(monkeypatch):
    # A fresh graph object (not uploaded yet) against a device that reports 1 MiB free.
    cupy = pytest.importorskip("cupy")
    graph = Graph.from_edges(*rmat_edges(10, 8, seed=9))
    with monkeypatch.context() as patch:
        patch.setattr(cupy.cuda.runtime, "memGetInfo", lambda: (1 << 20, 80 << 30))
        patch.setattr(cupy, "get_default_memory_pool", lambda: type("Pool", (), {"free_bytes": lambda self: 0})())
        with pytest.raises(MemoryError, match=r"^graph needs 0\.\d\d GiB on the GPU, device has 0\.00 GiB free"):
            gpu_pagerank._update("static", None, graph, None, None, OPTIONS)
        assert graph not in gpu_device._UPLOADED
    first = gpu_pagerank._update("static", None, graph, None, None, OPTIONS)
    with monkeypatch.context() as patch:  # uploaded now: no check, the run goes ahead
        patch.setattr(cupy.cuda.runtime, "memGetInfo", lambda: (1 << 20, 80 << 30))
        again = gpu_pagerank._update("static", None, graph, None, None, OPTIONS)
    np.testing.assert_array_equal(again.ranks, first.ranks)


def test_kahn_too_big_fails_before_allocating(monkeypatch):
    cupy = pytest.importorskip("cupy")
    graph = _dag(1000, depth_chain=False)
    gpu_kahn(graph)  # compiled and warmed up outside the patch
    with monkeypatch.context() as patch:
        patch.setattr(cupy.cuda.runtime, "memGetInfo", lambda: (1 << 20, 80 << 30))
        patch.setattr(cupy, "get_default_memory_pool", lambda: type("Pool", (), {"free_bytes": lambda self: 0})())
        with pytest.raises(MemoryError, match=r"^graph needs 0\.\d\d GiB on the GPU, device has 0\.00 GiB free"):
            gpu_kahn(graph)


@pytest.mark.parametrize("partition", ("none", "in_out"))
@pytest.mark.parametrize("approach", ("df", "dfp"))
@pytest.mark.parametrize("name", ("CollegeMsg", "sx-mathoverflow", "web-NotreDame"))
def test_fused_frontier_matches_unfused(name, approach, partition):
    # The default folds the expansion into the rank launch (rank_fused over class lists, or
    # over chunks at level none); classes_unfused runs the same classes as separate
    # clear/rank/finish/expand kernels: the same iterations, affected set and ranks.
    old, new, batch, previous, _ = scenario(name, 1e-4)
    options = replace(OPTIONS, partition=partition)
    fused = gpu_pagerank._update(approach, old, new, batch, previous, options)
    unfused = gpu_pagerank._update(approach, old, new, batch, previous, replace(options, variant="classes_unfused"))
    assert (fused.iterations, fused.affected) == (unfused.iterations, unfused.affected)
    np.testing.assert_array_equal(fused.ranks, unfused.ranks)


@pytest.mark.parametrize("fraction", (1e-4, 1e-2))
@pytest.mark.parametrize("partition", ("none", "in_out"))
@pytest.mark.parametrize("approach", ("df", "dfp"))
@pytest.mark.parametrize("name", ("CollegeMsg", "web-NotreDame", "rmat14"))
def test_push_and_pull_modes_give_the_unfused_run(name, approach, partition, fraction):
    # Pull mode learns of expansions from the sign of the contributions instead of marks pushed
    # to out-neighbours, and no mode copies ranks where the buffers agree: whether the run pulls
    # from the start (share 0: the batch sources sign their contributions), turns early (0.01),
    # at PULL_SHARE, at the default's choice (None) or never (inf), the iterations, affected set
    # and ranks are classes_unfused's, bit for bit.
    old, new, batch, previous, _ = scenario(name, fraction)
    options = replace(OPTIONS, partition=partition)
    unfused = gpu_pagerank._update(approach, old, new, batch, previous, replace(options, variant="classes_unfused"))
    for share in (None, 0.0, 0.01, designs.PULL_SHARE, float("inf")):
        fused = gpu_pagerank._update(approach, old, new, batch, previous, options, pull_share=share)
        assert (fused.iterations, fused.affected) == (unfused.iterations, unfused.affected), share
        np.testing.assert_array_equal(fused.ranks, unfused.ranks)


@pytest.mark.parametrize(("name", "share"), (("CollegeMsg", designs.KEPT_PULL_SHARE),
                                             ("web-NotreDame", designs.PULL_SHARE)))
def test_dynamic_runs_pull_from_the_start_where_blocks_keep_their_units(name, share, monkeypatch):
    # CollegeMsg's class units fit the blocks (kept: KEPT_PULL_SHARE), web-NotreDame's do not.
    old, new, batch, previous, _ = scenario(name, 1e-3)
    gpu_pagerank._warm_up()  # their runs first
    seen = []
    loop = gpu_pagerank.IterationLoop

    def recording(*args, pull_share, **kwargs):
        seen.append(pull_share)
        return loop(*args, pull_share=pull_share, **kwargs)

    monkeypatch.setattr(gpu_pagerank, "IterationLoop", recording)
    gpu_pagerank._update("dfp", old, new, batch, previous, OPTIONS)
    assert seen == [share]


def test_a_solve_whose_blocks_keep_their_units_classifies_and_announces_in_its_own_launch():
    # CollegeMsg's units fit the blocks: the solve's launch classifies the vertices, writes the
    # starting contributions, announces DF-P's batch sources and runs DT's reachability search
    # itself, so those phases launch nothing and time 0; a launch per iteration
    # (classes_graphs) keeps both phases.
    old, new, batch, previous, _ = scenario("CollegeMsg", 1e-3)
    phases = {(approach, variant): gpu_pagerank._update(approach, old, new, batch, previous,
                                                       replace(OPTIONS, variant=variant)).phases
              for approach in ("dfp", "dt") for variant in ("classes", "classes_graphs")}
    for approach in ("dfp", "dt"):
        assert phases[approach, "classes"]["partition_ms"] == phases[approach, "classes"]["mark_ms"] == 0
        assert min(phases[approach, "classes_graphs"].values()) > 0
        assert phases[approach, "classes"]["compute_ms"] > 0


@pytest.mark.parametrize("partition", ("none", "in_out"))
@pytest.mark.parametrize("approach", APPROACHES)
@pytest.mark.parametrize("name", ("CollegeMsg", "web-NotreDame", "rmat14"))
def test_persistent_solve_is_the_launch_per_iteration_run(name, approach, partition):
    # One cooperative launch per solve sweeps the same classes with the same lanes as a
    # launch per iteration, and takes the same decisions (stop, pull) from the same sums.
    old, new, batch, previous, _ = scenario(name, 1e-3)
    graphs, persistent = (
        gpu_pagerank._update(approach, old, new, batch, previous, replace(OPTIONS, partition=partition, variant=v))
        for v in ("classes_graphs", "classes_persistent"))
    assert (persistent.iterations, persistent.affected, persistent.converged) == (
        graphs.iterations, graphs.affected, graphs.converged)
    np.testing.assert_array_equal(persistent.ranks, graphs.ranks)
    assert persistent.variant == "classes_persistent"


def _watch_class_ranks(monkeypatch, attribute: str) -> list:
    """The list to which every ClassRanks built from now on appends its `attribute`."""
    seen = []
    original = gpu_classes.ClassRanks.__init__

    def spy(self, *args, **kwargs):
        original(self, *args, **kwargs)
        seen.append(getattr(self, attribute))

    monkeypatch.setattr(gpu_classes.ClassRanks, "__init__", spy)
    return seen


@pytest.mark.parametrize("approach", APPROACHES)
def test_kept_units_too_large_for_shared_memory_read_the_graph(approach, monkeypatch):
    # Blocks of the persistent launch keep their unit's in-edge rows in shared memory where
    # they fit; a hub with more in-edges than KEPT_ROWS reads them from the graph instead.
    # Either way the run is the launch-per-iteration one, bit for bit.
    rng = np.random.default_rng(5)
    n, hubs = 12000, 3
    src = np.concatenate([rng.integers(0, n, 30000), np.tile(np.arange(designs.KEPT_ROWS + 500), hubs)])
    dst = np.concatenate([rng.integers(0, n, 30000), np.repeat(np.arange(hubs), designs.KEPT_ROWS + 500)])
    old = Graph.from_edges(src, dst, n)
    assert old.in_degree[:hubs].min() > designs.KEPT_ROWS
    batch = random_batch(old, 1e-3, 0.8, np.random.default_rng(6))
    new = apply_batch(old, batch)
    previous = gpu_pagerank._update("static", None, old, None, None, OPTIONS).ranks  # also warms up
    kept = _watch_class_ranks(monkeypatch, "kept_rows")
    graphs, persistent = (gpu_pagerank._update(approach, old, new, batch, previous, replace(OPTIONS, variant=v))
                          for v in ("classes_graphs", "classes_persistent"))
    assert kept == [0, designs.KEPT_ROWS]  # only the persistent launch keeps units
    assert (persistent.iterations, persistent.affected, persistent.converged) == (
        graphs.iterations, graphs.affected, graphs.converged)
    np.testing.assert_array_equal(persistent.ranks, graphs.ranks)


@pytest.mark.parametrize("approach", APPROACHES)
def test_default_swept_whole_solve_kernels_do_not_spill(approach):
    # The swept rank_persistent over class lists (the default's) gets launch bounds whose
    # registers suffice: six blocks per multiprocessor (40 registers) for Static, ND and DT,
    # four (64) for DF and DF-P. The unlisted kernels of the partition "none" variant are
    # not held to this (Static and ND spill 8 bytes, DF and DF-P 16 on the H100).
    kernel = loader.persistent_kernels()[loader.fused_kernel_name(True, gpu_device.MODES[approach], True)]
    assert kernel.attributes["local_size_bytes"] == 0


@pytest.mark.parametrize("name", ("CollegeMsg", "soc-Epinions1"))
def test_blocks_keep_units_only_where_the_units_fit_the_grid(name, monkeypatch):
    # Blocks keep their work units for the solve where the units are no more than the kept
    # kernel's blocks (CollegeMsg: 32 units); otherwise they sweep them (soc-Epinions1: 741,
    # against 528 blocks on the H100). The run is the launch-per-iteration one either way.
    cupy = pytest.importorskip("cupy")
    graph = load(name)
    previous = gpu_pagerank._update("static", None, graph, None, None, OPTIONS).ranks  # also warms up
    kept = _watch_class_ranks(monkeypatch, "kept_rows")
    grids = _watch_class_ranks(monkeypatch, "grid")
    persistent, graphs = (gpu_pagerank._update("static", None, graph, None, previous, replace(OPTIONS, variant=v))
                          for v in ("classes_persistent", "classes_graphs"))
    g = gpu_device.to_device(graph)
    bounds = gpu_classes.default_bounds(g)
    keep = loader.pagerank_kernels() | loader.persistent_kernels()
    grid = gpu_classes._fused_grid(cupy, keep[loader.fused_kernel_name(True, gpu_device.MODES["static"], True,
                                                                       keep=True)],
                                   g, True, bounds, 4 * designs.KEPT_ROWS)
    units = gpu_classes.class_units(cupy, g.in_offsets, bounds)
    assert kept == [designs.KEPT_ROWS if units <= grid else 0, 0]
    if name == "CollegeMsg":
        assert kept[0] == designs.KEPT_ROWS and grids[0] == units  # a block per unit
    assert persistent.iterations == graphs.iterations
    np.testing.assert_array_equal(persistent.ranks, graphs.ranks)


def test_default_picks_its_launch_by_size(monkeypatch):
    # Below PERSISTENT_EDGES the default runs the persistent kernel, at or above it one launch
    # per iteration; both give the same run.
    graph = load("CollegeMsg")
    gpu_pagerank._warm_up()  # its own runs stay out of `seen`
    seen = _watch_class_ranks(monkeypatch, "persistent")
    small = gpu_pagerank._update("static", None, graph, None, None, OPTIONS)
    limit = graph.num_edges
    monkeypatch.setattr(designs, "VARIANTS", {**designs.VARIANTS, "classes": replace(
        designs.VARIANTS["classes"], persistent_below=limit)})
    large = gpu_pagerank._update("static", None, graph, None, None, OPTIONS)
    assert seen == [graph.num_edges < designs.PERSISTENT_EDGES, False]
    np.testing.assert_array_equal(small.ranks, large.ranks)


def _broom(n_chain: int, fan: int) -> Graph:
    """A chain 0 -> 1 -> ... -> n_chain - 1 whose end fans out to `fan` vertices, each
    starting a chain of its own of length 3: BFS levels of 1 entry, then `fan`, then `fan`."""
    chain = np.arange(n_chain - 1)
    leaves = n_chain + np.arange(fan)
    src = np.concatenate([chain, np.full(fan, n_chain - 1), leaves, leaves + fan, leaves + 2 * fan])
    dst = np.concatenate([chain + 1, leaves, leaves + fan, leaves + 2 * fan, leaves + 3 * fan])
    return Graph.from_edges(src, dst, n_chain + 4 * fan)


@pytest.mark.parametrize("variant", ("classes", "classes_graphs"))
@pytest.mark.parametrize("fan", (3, 5000))
def test_dt_reachability_on_deep_and_wide_levels(fan, variant):
    # With a launch per iteration (classes_graphs) the search has a launch of its own: long runs
    # of one-entry levels go to block 0 alone, wide levels to the grid. The default's one launch
    # per solve searches bottom-up over the rows its blocks keep, a barrier per level. Either
    # searches the new graph alone: deleting 1 -> 2 cuts its chain, which the old graph reaches
    # from 1 (so 2 is a seed), and the insertion 0 -> n_chain - 2 reaches the fan in two levels.
    old = _broom(3000, fan)
    batch = Batch(np.array([1], np.int32), np.array([2], np.int32), np.array([0], np.int32),
                  np.array([2998], np.int32))
    new = apply_batch(old, batch)
    previous = cpu_pagerank._update("static", None, old, None, None, OPTIONS).ranks
    gpu = gpu_pagerank._update("dt", old, new, batch, previous, replace(OPTIONS, variant=variant))
    cpu = cpu_pagerank._update("dt", old, new, batch, previous, OPTIONS)
    affected = marking.traversal_affected(old, new, batch)
    assert gpu.affected == int(affected.sum()) == cpu.affected
    np.testing.assert_array_equal(gpu.ranks[~affected], previous[~affected])
    assert gpu.iterations == cpu.iterations
    assert l1_error(gpu.ranks, cpu.ranks) <= 1e-12


@pytest.mark.parametrize("approach", ("df", "dfp"))
def test_long_out_lists_are_expanded_by_the_warp(approach):
    # Vertex 0 has two in-edges (a thread-class vertex) and 200 out-edges, so the fused
    # kernel hands its expansion to the whole warp; the new edge 250 -> 0 changes its rank.
    n = 300
    ring = np.arange(n)
    src = np.concatenate([np.zeros(200, dtype=np.int64), ring])
    dst = np.concatenate([np.arange(1, 201), (ring + 1) % n])
    old = Graph.from_edges(src, dst, n)
    batch = Batch(np.empty(0, np.int32), np.empty(0, np.int32), np.array([250], np.int32), np.array([0], np.int32))
    new = apply_batch(old, batch)
    previous = cpu_pagerank._update("static", None, old, None, None, OPTIONS).ranks
    fused = gpu_pagerank._update(approach, old, new, batch, previous, OPTIONS)
    unfused = gpu_pagerank._update(approach, old, new, batch, previous, replace(OPTIONS, variant="classes_unfused"))
    cpu = cpu_pagerank._update(approach, old, new, batch, previous, OPTIONS)
    assert fused.affected > 200  # the expansion reached 0's out-neighbours
    assert (fused.iterations, fused.affected) == (unfused.iterations, unfused.affected)
    np.testing.assert_array_equal(fused.ranks, unfused.ranks)
    assert abs(fused.iterations - cpu.iterations) <= 1 and abs(fused.affected - cpu.affected) <= 2
    assert l1_error(fused.ranks, cpu.ranks) <= 1e-12


@pytest.mark.parametrize("name", ("soc-Epinions1", "rmat14"))
def test_class_plan_is_computed_on_the_device(name):
    # The fused launch's layout (class sizes, first unit per class, heaviest first, and the
    # total) comes from the classifying launch itself; oracle: NumPy on the in-degrees.
    cupy = pytest.importorskip("cupy")
    graph = load(name)
    g = gpu_device.to_device(graph)
    step = gpu_classes.ClassRanks(loader.pagerank_kernels(), cupy, g, gpu_device.MODES["static"], OPTIONS,
                                  designs.CLASS_LANES, designs.CLASS_BOUNDS, True, True)
    step.prepare()
    plan = step.plan.get()
    layout = designs.CLASS_PLAN
    degree = np.diff(graph.in_offsets)
    edges = [bound + 1 for bound in designs.CLASS_BOUNDS]  # class k: in-degree in (bounds[k-1], bounds[k]]
    counts = np.histogram(degree, [0, *edges, np.inf])[0]
    units = [-(-c * lanes // 256) if lanes < 256 else c for c, lanes in zip(counts, designs.CLASS_LANES)]
    first = np.cumsum([0] + units[::-1])[::-1]  # classes 3, 2, 1, 0 in that order
    np.testing.assert_array_equal(plan[layout.span("count")], counts)
    np.testing.assert_array_equal(plan[layout.span("first")], first[1:])
    assert plan[layout.index("total")] == first[0] == gpu_classes.class_units(cupy, g.in_offsets,
                                                                                designs.CLASS_BOUNDS)
    # every block ticketed
    assert counts.sum() == graph.num_vertices and plan[layout.index("ticket")] == -(-graph.num_vertices // 256)
    ids = step.ids.get()
    for k in range(4):
        members = np.sort(ids[k, :counts[k]])
        np.testing.assert_array_equal(members, np.flatnonzero(np.digitize(degree, edges) == k))


def test_class_bounds_widen_past_half_the_l2():
    l2 = 50 << 20
    assert gpu_classes.class_bounds(l2 // 16, l2) == designs.CLASS_BOUNDS  # 8n = L2 / 2
    assert gpu_classes.class_bounds(l2 // 16 + 1, l2) == designs.WIDE_CLASS_BOUNDS
    assert gpu_classes.class_bounds(1 << 22, l2) == designs.WIDE_CLASS_BOUNDS  # R-MAT scale 22


@pytest.mark.parametrize("approach", ("static", "dfp"))
@pytest.mark.parametrize("name", ("web-NotreDame", "rmat14"))
def test_wide_class_bounds_match_cpu(monkeypatch, name, approach):
    # Small graphs keep the default bounds, so force the wide ones (large graphs' path): same
    # iterations and ranks as the CPU twin, and level none (classes chosen inside the launch)
    # gives the listed level's ranks bit for bit.
    monkeypatch.setattr(gpu_classes, "class_bounds", lambda n, l2: designs.WIDE_CLASS_BOUNDS)
    old, new, batch, previous, ref = scenario(name)
    cpu = cpu_pagerank._update(approach, old, new, batch, previous, OPTIONS)
    listed = gpu_pagerank._update(approach, old, new, batch, previous, OPTIONS)
    chunks = gpu_pagerank._update(approach, old, new, batch, previous, replace(OPTIONS, partition="none"))
    if approach == "static":
        assert listed.iterations == cpu.iterations
        assert l1_error(listed.ranks, cpu.ranks) <= 1e-12
    else:
        assert l1_error(listed.ranks, ref) <= 2 * l1_error(cpu.ranks, ref) + 1e-13
        assert abs(listed.iterations - cpu.iterations) <= 1
    np.testing.assert_array_equal(chunks.ranks, listed.ranks)


def test_relabel_selector_follows_the_class_bounds():
    l2 = 50 << 20
    assert not gpu_classes.relabels(l2 // 16, l2)
    assert gpu_classes.relabels(l2 // 16 + 1, l2)
    assert gpu_classes.relabels(1 << 22, l2)  # R-MAT scale 22


@pytest.mark.parametrize("limit,chunk", ((256, 2048), (4, 16)))
@pytest.mark.parametrize("name", ("web-NotreDame", "rmat14"))
def test_relabelled_graph_is_the_permuted_graph(monkeypatch, name, limit, chunk):
    # Oracle: NumPy renaming of the host CSR. Row i of the relabelled in-CSR must be row order[i]
    # with sources renamed and in their original order; order lists ids by descending degree.
    # limit 4 and chunk 16 send most rows to the long-row kernel, many of them in several chunks.
    cupy = loader.require_cupy()
    monkeypatch.setattr(gpu_classes, "RELABEL_ROW_LIMIT", limit)
    monkeypatch.setattr(gpu_classes, "RELABEL_CHUNK", chunk)
    graph = load(name)
    n = graph.num_vertices
    start = np.random.default_rng(5).random(n)
    relabel = gpu_classes.Relabel(loader.pagerank_kernels(), cupy, gpu_device.to_device(graph), start)
    ranks = cupy.full(n, np.nan)
    relabel.prepare(ranks)
    rank = relabel.new_id.get()
    order = np.empty(n, dtype=np.int64)
    order[rank] = np.arange(n)
    assert np.array_equal(np.sort(rank), np.arange(n))
    in_degree = np.diff(graph.in_offsets)
    assert np.all(np.diff(in_degree[order]) <= 0)
    np.testing.assert_array_equal(relabel.graph.in_offsets.get(), np.concatenate([[0], np.cumsum(in_degree[order])]))
    rows = np.repeat(order, in_degree[order])
    within = np.arange(graph.num_edges) - np.repeat(np.concatenate([[0], np.cumsum(in_degree[order])[:-1]]),
                                                    in_degree[order])
    np.testing.assert_array_equal(relabel.graph.sources.get(), rank[graph.sources[graph.in_offsets[rows] + within]])
    np.testing.assert_array_equal(relabel.graph.inv_degree.get(), 1.0 / graph.out_degree[order])
    np.testing.assert_array_equal(ranks.get(), start[order])
    np.testing.assert_array_equal(relabel.restore(ranks).get(), start)


@pytest.mark.parametrize("approach", designs.RELABEL_APPROACHES)
@pytest.mark.parametrize("name", GRAPHS)
def test_relabelled_run_matches_cpu(monkeypatch, name, approach):
    # Small graphs are not relabelled, so force it (large graphs' path): the CPU twin's
    # iterations, ranks within 1e-12 in L1, and the wide classes too. DT's search runs in the
    # relabelled ids where the blocks keep their units (bottom-up in the solve), else in the
    # original ids (a launch of its own) renamed after; either finds the CPU twin's affected set.
    monkeypatch.setattr(gpu_pagerank, "relabels", lambda n, l2: True)
    old, new, batch, previous, ref = scenario(name)
    cpu = cpu_pagerank._update(approach, old, new, batch, previous, OPTIONS)
    relabelled = gpu_pagerank._update(approach, old, new, batch, previous, OPTIONS)
    if approach in ("df", "dfp"):
        # Relabelled rows keep their sources' order and DF/DF-P pull from the start, their sources
        # announced by sign: the unrelabelled run's iterations and affected set, and its ranks up to
        # the order of additions (a row's int4 loads start elsewhere in the relabelled sources).
        monkeypatch.setattr(gpu_pagerank, "relabels", lambda n, l2: False)
        plain = gpu_pagerank._update(approach, old, new, batch, previous, OPTIONS)
        monkeypatch.setattr(gpu_pagerank, "relabels", lambda n, l2: True)
        assert (relabelled.iterations, relabelled.affected) == (plain.iterations, plain.affected)
        assert l1_error(relabelled.ranks, plain.ranks) <= 1e-14
        assert abs(relabelled.iterations - cpu.iterations) <= 1
        assert l1_error(relabelled.ranks, ref) <= 2 * l1_error(cpu.ranks, ref) + 1e-13
        return
    assert (relabelled.iterations, relabelled.affected) == (cpu.iterations, cpu.affected)
    assert l1_error(relabelled.ranks, cpu.ranks) <= 1e-12
    monkeypatch.setattr(gpu_classes, "class_bounds", lambda n, l2: designs.WIDE_CLASS_BOUNDS)
    wide = gpu_pagerank._update(approach, old, new, batch, previous, replace(OPTIONS, partition="none"))
    assert (wide.iterations, wide.affected) == (cpu.iterations, cpu.affected)
    assert l1_error(wide.ranks, cpu.ranks) <= 1e-12


@pytest.mark.parametrize("variant", VARIANTS)
def test_convergence_is_reported_and_can_raise(variant):
    # Converged runs say so; a run stopped at the cap says it did not, or raises when asked to.
    graph = load("CollegeMsg")
    options = replace(OPTIONS, variant=variant)
    done = gpu_pagerank._update("static", None, graph, None, None, options)
    assert done.converged and done.iterations < options.max_iterations
    capped = gpu_pagerank._update("static", None, graph, None, None, replace(options, max_iterations=3))
    assert not capped.converged and capped.iterations == 3
    with pytest.raises(ConvergenceError, match="max_iterations=3") as caught:
        gpu_pagerank._update("static", None, graph, None, None,
                            replace(options, max_iterations=3, raise_on_max_iterations=True))
    # push_atomic's atomics add in a different order every run
    assert l1_error(caught.value.result.ranks, capped.ranks) <= 1e-15


def test_kernel_structs_match_the_device_layout():
    # The Python mirrors of layouts.cuh's parameter structs (dynpr.designs.KERNEL_STRUCTS) have
    # the device compiler's size and field offsets, and a struct passed by value arrives whole:
    # a kernel copies every struct's bytes back, each field tagged by a distinct value.
    cupy = pytest.importorskip("cupy")
    structs = designs.KERNEL_STRUCTS
    lines = []
    for i, (name, struct) in enumerate(structs.items()):
        lines.append(f"layout[{i}][0] = sizeof({name});")
        lines += [f"layout[{i}][{j + 1}] = reinterpret_cast<unsigned long long>(&static_cast<{name}*>(nullptr)->{f});"
                  for j, (f, _, _) in enumerate(struct.fields)]
    width = 1 + max(len(s.fields) for s in structs.values())
    params = ", ".join(f"{name} s{i}" for i, name in enumerate(structs))
    copies = "\n".join(f"for (int b = 0; b < sizeof(s{i}); ++b) bytes[{i} * 64 + b] = "
                       f"reinterpret_cast<const unsigned char*>(&s{i})[b];" for i in range(len(structs)))
    source = (loader.inline_source("layouts.cuh") + "\nusing namespace dynpr;\n"
              f'extern "C" __global__ void probe(unsigned long long (*layout)[{width}], unsigned char* bytes, '
              f"{params}) {{\n" + "\n".join(lines) + "\n" + copies + "\n}\n")
    kernel = cupy.RawKernel(source, "probe", options=loader.COMPILE_OPTIONS)
    layout = cupy.zeros((len(structs), width), dtype=cupy.uint64)
    copied = cupy.zeros(64 * len(structs), dtype=cupy.uint8)
    packed = []
    for struct in structs.values():
        dtype = struct.dtype()
        values = np.zeros(1, dtype=dtype)
        raw = values.view(np.uint8)
        raw[:] = np.arange(1, raw.size + 1, dtype=np.uint8)  # every byte distinct
        packed.append(values)
    kernel((1,), (1,), (layout, copied, *packed))
    layout, copied = layout.get(), copied.get()
    for i, (name, struct) in enumerate(structs.items()):
        dtype = struct.dtype()
        assert layout[i, 0] == dtype.itemsize, name
        assert [layout[i, j + 1] for j in range(len(struct.fields))] == [
            dtype.fields[f][1] for f, _, _ in struct.fields], name
        np.testing.assert_array_equal(copied[64 * i:64 * i + dtype.itemsize], packed[i].view(np.uint8), name)


@pytest.mark.parametrize("approach", APPROACHES)
def test_buffer_lists_are_what_the_pool_hands_out(approach):
    # dynpr.gpu.buffers declares each component's device arrays; the memory model sums the lists.
    # What CuPy's pool holds after building the relabelling, the classes and the iteration loop is
    # exactly the declared arrays, each rounded up to the pool's 512-byte unit.
    cupy = pytest.importorskip("cupy")
    from dynpr.gpu import buffers
    from dynpr.gpu.iterations import IterationLoop

    old, new, batch, previous, _ = scenario("CollegeMsg")
    g = gpu_device.to_device(new)
    kernels = loader.pagerank_kernels()
    pool = cupy.cuda.MemoryPool()
    cupy.cuda.set_allocator(pool.malloc)

    def held(build):
        before = pool.used_bytes()
        built = build()
        cupy.cuda.Device().synchronize()
        return built, pool.used_bytes() - before

    def expected(component, shape):
        return sum(-(-buffers.dtype_of(b, shape).itemsize * int(b.length(shape)) // 512) * 512
                   for b in buffers.declared(component, shape) if not b.transient)

    try:
        relabel, relabel_bytes = held(lambda: gpu_classes.Relabel(kernels, cupy, g, previous))
        step, class_bytes = held(lambda: gpu_classes.ClassRanks(
            kernels, cupy, relabel.graph, gpu_device.MODES[approach], OPTIONS, designs.CLASS_LANES,
            designs.CLASS_BOUNDS, True, True))
        loop, loop_bytes = held(lambda: IterationLoop(kernels, cupy, approach, relabel.graph, batch, previous,
                                                      OPTIONS, step, relabel=relabel))
    finally:
        cupy.cuda.set_allocator(cupy.get_default_memory_pool().malloc)
    n, m = g.n, int(g.sources.size)
    assert relabel_bytes == expected(buffers.RELABEL, buffers.RunShape(n, m, relabel=True))
    assert class_bytes == expected(buffers.CLASSES, buffers.RunShape(n, m, classes=4, bounds=3))
    assert loop_bytes == expected(buffers.LOOP, loop.shape) + (expected(buffers.DT_SEARCH, loop.shape)
                                                              if loop.shape.dt_search else 0)
    assert loop.shape.dt_search == (approach == "dt")
