"""CSR segmenting on the GPU (dynpr.gpu.locality) against its host twin and the CPU engine."""

from __future__ import annotations

import functools

import numpy as np
import pytest

pytest.importorskip("cupy")
from dynpr.backend import gpu_available  # noqa: E402

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not gpu_available(), reason="needs a CUDA device")]

from dynpr import locality  # noqa: E402
from dynpr.gpu import locality as gpu_locality  # noqa: E402
from dynpr.gpu.device_graph import to_device  # noqa: E402
from dynpr.gpu.resident import to_resident  # noqa: E402
from dynpr.pagerank import cpu as cpu_pagerank  # noqa: E402
from dynpr.pagerank import l1_error  # noqa: E402
from dynpr.pagerank.options import PageRankOptions  # noqa: E402
from test_gpu import GRAPHS, load  # noqa: E402
from test_locality import hub_graph  # noqa: E402

CASES = {**{name: (lambda name=name: load(name)) for name in GRAPHS}, "hubs": hub_graph}


@functools.cache
def cpu_static(name: str):
    """The CPU engine's Static on a case (computed once: several tests compare with it)."""
    return cpu_pagerank._update("static", None, CASES[name](), None, None, PageRankOptions())


def width_for(graph, segments: int) -> int:
    """Source ids per segment that make ``segments`` segments of the graph."""
    return -(-graph.num_vertices // segments)


def _host(layout):
    return {name: (a.get() if hasattr(a, "get") else a) for name, a in layout.arrays().items()}


@pytest.mark.parametrize("name", CASES)
def test_device_layout_is_the_host_builders(name):
    import cupy

    graph = CASES[name]()
    g = to_device(graph)
    for width in (width_for(graph, 1), width_for(graph, 7), 64 if name == "hubs" else width_for(graph, 40)):
        device = _host(locality.build_layout(g.in_offsets, g.sources, width))
        host = locality.build_layout(graph.in_offsets, graph.sources, width).arrays()
        for field, array in host.items():
            np.testing.assert_array_equal(device[field], array, err_msg=field)
    # hub-first: the same new ids as the host's stable sort, and the layout of the renamed graph
    width = width_for(graph, 9)
    dl = gpu_locality.prepare(graph, width=width)
    new_id = locality.hub_first_ids(graph.in_offsets)
    np.testing.assert_array_equal(dl.new_id.get(), new_id)
    host = locality.build_layout(*locality.relabelled_in_csr(graph, new_id), width).arrays()
    device = _host(dl.layout)
    for field, array in host.items():
        np.testing.assert_array_equal(device[field], array, err_msg=field)
    inv = np.empty(graph.num_vertices)
    inv[new_id] = 1.0 / np.diff(graph.offsets)
    np.testing.assert_array_equal(dl.inv_degree.get(), inv)
    assert isinstance(dl.inv_degree, cupy.ndarray)


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("order", locality.ORDERS)
@pytest.mark.parametrize("segments", (1, 8, 40))
def test_segmented_static_is_the_cpu_engine(name, order, segments):
    # Tolerance: long sub-rows are summed in warp-strided pieces, short ones in stored order, so the
    # GPU ranks differ from the twin's and the CPU engine's in the last bits: L1 <= 1e-12 (ranks sum
    # to 1), as every GPU design against the CPU engine (tests/test_gpu.py); iterations the same.
    graph = CASES[name]()
    width = width_for(graph, segments)
    cpu = cpu_static(name)
    twin = locality.static_segmented(graph, width=width, order=order)
    gpu = gpu_locality.pagerank("static", graph, width=width, order=order)
    assert gpu.iterations == cpu.iterations == twin.iterations
    assert gpu.converged and gpu.variant == "segmented"
    assert isinstance(gpu.ranks, np.ndarray)
    assert l1_error(gpu.ranks, cpu.ranks) <= 1e-12
    assert l1_error(gpu.ranks, twin.ranks) <= 1e-12


def test_segmented_runs_are_reproducible_and_resident():
    graph = to_resident(load("rmat14"))
    dl = gpu_locality.prepare(graph, width=512)
    first = gpu_locality.pagerank("static", graph, layout=dl)
    second = gpu_locality.pagerank("static", graph, layout=dl)
    assert first.iterations == second.iterations
    assert bool((first.ranks == second.ranks).all())  # no atomics: the same sums every run
    assert dl.layout_ms > 0 and first.time_ms > 0 and first.phases["mark_ms"] == 0


def test_segmented_nd_goes_on_from_previous_ranks():
    graph = load("soc-Epinions1")
    previous = cpu_pagerank._update("static", None, graph, None, None, PageRankOptions(tolerance=1e-6)).ranks
    cpu = cpu_pagerank._update("nd", graph, graph, None, previous, PageRankOptions())
    gpu = gpu_locality.pagerank("nd", graph, previous, width=1024)
    assert gpu.iterations == cpu.iterations
    assert l1_error(gpu.ranks, cpu.ranks) <= 1e-12
    with pytest.raises(ValueError, match="previous_ranks"):
        gpu_locality.pagerank("nd", graph, width=1024)
    with pytest.raises(ValueError, match="static"):
        gpu_locality.pagerank("dfp", graph, previous, width=1024)


def test_segmented_stops_at_max_iterations():
    graph = load("rmat14")
    cpu = cpu_pagerank._update("static", None, graph, None, None, PageRankOptions(max_iterations=5))
    gpu = gpu_locality.pagerank("static", graph, options=PageRankOptions(max_iterations=5), width=256)
    assert (gpu.iterations, gpu.converged) == (5, False) == (cpu.iterations, cpu.converged)
    assert l1_error(gpu.ranks, cpu.ranks) <= 1e-12


def test_segment_width_follows_the_device_l2():
    import cupy

    l2 = cupy.cuda.Device().attributes["L2CacheSize"]
    graph = load("web-NotreDame")
    dl = gpu_locality.prepare(graph, l2_share=0.01)
    assert dl.layout.width == locality.segment_width(graph.num_vertices, l2, 0.01)
    assert dl.segments == locality.num_segments(graph.num_vertices, dl.layout.width)


def test_bench_locality_writes_its_rows(tmp_path):
    import runpy

    from test_gpu import EMBEDDED

    script = runpy.run_path(str(EMBEDDED.parents[1] / "benchmarks" / "bench_locality.py"))
    out = tmp_path / "locality.csv"
    # 0.0002 of the L2 (10 KB on the H100): a few segments of R-MAT scale 12
    script["main"](["--scales", "12", "--repeats", "1", "--shares", "0.0002", "--orders", "hub", "given",
                    "--datasets", "CollegeMsg", "--graph-orders", "given", "community", "--out", str(out)])
    import pandas as pd

    table = pd.read_csv(out)
    engine = ["classes"] * 3 + ["classes_c32"] * 3  # Static, ND and DF each
    blocked = ["blocking_c32", "blocking_c64", "shards_c32", "shards_c64"]
    layouts = ["gather_only", "segmented", "segmented"] + blocked
    assert list(table.variant) == engine + (engine + layouts) * 2  # the R-MAT graph as generated, then relabelled
    assert list(table.graph.unique()) == ["CollegeMsg", "rmat-12"]
    rmat = table[table.graph == "rmat-12"]
    assert list(rmat.graph_order) == ["given"] * 13 + ["community"] * 13
    assert rmat.graph_order_ms.isna().sum() == 13 and (rmat.graph_order_ms.dropna() > 0).all()
    rows = table[table.variant.str.startswith("classes")]
    assert list(rows.approach) == ["static", "nd", "df"] * 6 and (rows.time_ms > 0).all()
    timed = table[table.variant != "gather_only"]
    assert (timed.repeats == 1).all() and (timed.time_ms_min == timed.time_ms).all()
    assert (timed.time_ms_max == timed.time_ms).all()  # one run: no spread
    default = rows[rows.variant == "classes"]
    assert (default.iterations_delta == 0).all() and (default.l1_ratio == 1).all()
    assert (rows[rows.variant == "classes_c32"].l1_vs_default > 0).all()  # float32 contributions round
    segmented = table[table.variant == "segmented"]
    assert (segmented.segments > 1).all() and (segmented.iterations_delta == 0).all()
    assert (segmented.l1_ratio.between(0.99, 1.01)).all() and (table.time_ms > 0).all()
    rows = table[table.variant.str.startswith("blocking")]
    assert (rows.layout_bytes_model > 0).all() and (rows.expand_ms > 0).all() and (rows.accumulate_ms > 0).all()
    float64 = rows[rows.variant == "blocking_c64"]
    assert (float64.iterations_delta == 0).all() and float64.l1_ratio.between(0.99, 1.01).all()
    rows = table[table.variant.str.startswith("shards")]
    assert (rows.layout_bytes_model > 0).all() and (rows.shards > 1).all()
    float64 = rows[rows.variant == "shards_c64"]
    assert (float64.iterations_delta == 0).all() and float64.l1_ratio.between(0.99, 1.01).all()


@pytest.mark.parametrize("name", ("rmat14", "hubs"))
@pytest.mark.parametrize("short_edges", (0, 4))
def test_segmented_static_with_more_rows_in_pieces(name, short_edges):
    # short_edges 0: every sub-row summed by warps in pieces; 4: most of them
    graph, cpu = CASES[name](), cpu_static(name)
    dl = gpu_locality.prepare(graph, width=width_for(graph, 8), short_edges=short_edges)
    assert dl.layout.short_edges == short_edges and int(dl.layout.long_rows.size) > 0
    gpu = gpu_locality.pagerank("static", graph, layout=dl)
    assert gpu.iterations == cpu.iterations
    assert l1_error(gpu.ranks, cpu.ranks) <= 1e-12
