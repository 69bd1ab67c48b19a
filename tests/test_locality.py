"""CSR segmenting on the host (dynpr.locality): the layout builder against a direct construction, the
Static twin against the CPU engine, and the device memory model against built layouts."""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pytest

from dynpr import locality
from dynpr.graph import Graph
from dynpr.pagerank import cpu as cpu_pagerank
from dynpr.pagerank import l1_error
from dynpr.pagerank.options import PageRankOptions
from dynpr.rmat import rmat_edges

EMBEDDED = Path(__file__).resolve().parents[1] / "datasets" / "embedded"


@functools.cache
def hub_graph() -> Graph:
    """Random edges plus two hubs whose in-edges come from every segment, so that sub-rows
    longer than one piece (PIECE_EDGES) and than SHORT_EDGES exist; self-loops added."""
    rng = np.random.default_rng(3)
    n = 3000
    src, dst = rng.integers(0, n, 20000), rng.integers(0, n, 20000)
    hubs_src = np.concatenate((np.arange(n), np.arange(0, n, 3)))
    hubs_dst = np.concatenate((np.full(n, 17), np.full(len(range(0, n, 3)), 2500)))
    return Graph.from_edges(np.concatenate((src, hubs_src)), np.concatenate((dst, hubs_dst)), n)


@functools.cache
def rmat12() -> Graph:
    return Graph.from_edges(*rmat_edges(12, 16, seed=5))


@functools.cache
def college() -> Graph:
    import pandas as pd

    table = pd.read_csv(EMBEDDED / "CollegeMsg.txt.gz", sep=r"\s+", comment="#", header=None, usecols=[0, 1],
                        dtype=np.int64)
    return Graph.from_edges(table[0].to_numpy(), table[1].to_numpy())


def direct_layout(in_offsets, sources, width):
    """The layout by a different route: every edge as (segment, destination, position in the
    in-CSR), sorted lexicographically; sub-rows are the distinct (segment, destination) pairs."""
    n = len(in_offsets) - 1
    dst = np.repeat(np.arange(n), np.diff(in_offsets))
    seg = sources // width
    order = np.lexsort((np.arange(sources.size), dst, seg))
    pairs = np.stack((seg[order], dst[order]), axis=1)
    first = np.ones(len(pairs), dtype=bool)
    first[1:] = (pairs[1:] != pairs[:-1]).any(axis=1)
    starts = np.flatnonzero(first)
    segments = -(-n // width)
    segment_rows = np.searchsorted(pairs[starts, 0], np.arange(segments + 1), side="left")
    return sources[order], pairs[starts, 1], np.append(starts, len(order)), segment_rows


GRAPHS = {"hubs": hub_graph, "rmat12": rmat12, "CollegeMsg": college}


@pytest.mark.parametrize("name", GRAPHS)
@pytest.mark.parametrize("width", (32, 96, 1000, 1 << 20))
@pytest.mark.parametrize("short_edges", (locality.SHORT_EDGES, 4))
def test_layout_is_the_direct_construction(name, width, short_edges):
    graph = GRAPHS[name]()
    layout = locality.build_layout(graph.in_offsets, graph.sources, width, short_edges)
    sources, rows, offsets, segment_rows = direct_layout(graph.in_offsets, graph.sources, width)
    np.testing.assert_array_equal(layout.sources, sources)
    np.testing.assert_array_equal(layout.rows, rows)
    np.testing.assert_array_equal(layout.row_offsets, offsets)
    np.testing.assert_array_equal(layout.segment_rows, segment_rows)
    assert layout.segments == -(-graph.num_vertices // width)
    lengths = np.diff(offsets)
    long = np.flatnonzero(lengths > short_edges)
    np.testing.assert_array_equal(layout.long_rows, long)
    np.testing.assert_array_equal(layout.segment_long, np.searchsorted(long, segment_rows))
    pieces = -(-lengths[long] // locality.PIECE_EDGES)
    np.testing.assert_array_equal(np.diff(layout.piece_first), pieces)
    np.testing.assert_array_equal(layout.piece_row, np.repeat(np.arange(long.size), pieces))


def test_hub_graph_has_long_rows_of_several_pieces():
    layout = locality.build_layout(hub_graph().in_offsets, hub_graph().sources, 1024)
    assert (np.diff(layout.piece_first) > 1).any()
    assert layout.long_rows.size > 0


def test_relabelled_in_csr_is_the_renamed_graph():
    graph = rmat12()
    new_id = locality.hub_first_ids(graph.in_offsets)
    offsets, sources = locality.relabelled_in_csr(graph, new_id)
    degree = np.diff(offsets)
    assert (degree[:-1] >= degree[1:]).all()  # hub-first
    src, dst = graph.edges()
    expected = Graph.from_edges(new_id[src], new_id[dst], graph.num_vertices)
    for v in (0, 1, 7, graph.num_vertices - 1):  # the same in-neighbours, in the original order
        mine = sources[offsets[v]:offsets[v + 1]]
        renamed = expected.sources[expected.in_offsets[v]:expected.in_offsets[v + 1]]
        np.testing.assert_array_equal(np.sort(mine), renamed)
        old = np.flatnonzero(new_id == v)[0]
        np.testing.assert_array_equal(mine, new_id[graph.sources[graph.in_offsets[old]:graph.in_offsets[old + 1]]])


@pytest.mark.parametrize("name", GRAPHS)
@pytest.mark.parametrize("order", locality.ORDERS)
def test_twin_is_the_cpu_engine(name, order):
    # Tolerance: the same terms summed in another order (by segment, then within a sub-row), so the
    # ranks differ in their last bits only: L1 <= 1e-12 over ranks that sum to 1, as between the
    # GPU and CPU engines (tests/test_gpu.py); the iterations are the same.
    graph = GRAPHS[name]()
    cpu = cpu_pagerank._update("static", None, graph, None, None, PageRankOptions())
    twin = locality.static_segmented(graph, width=64, order=order)
    assert twin.iterations == cpu.iterations
    assert twin.converged
    assert l1_error(twin.ranks, cpu.ranks) <= 1e-12


def test_twin_runs_nd_from_previous_ranks():
    graph = rmat12()
    options = PageRankOptions(tolerance=1e-6)
    previous = cpu_pagerank._update("static", None, graph, None, None, options).ranks
    cpu = cpu_pagerank._update("nd", graph, graph, None, previous, PageRankOptions())
    twin = locality.static_segmented(graph, width=256, start=previous)
    assert twin.iterations == cpu.iterations < 60
    assert l1_error(twin.ranks, cpu.ranks) <= 1e-12


def test_twin_refuses_dangling_vertices_and_unknown_orders():
    graph = Graph.from_edges(np.array([0, 1]), np.array([1, 2]), 3, self_loops=False)
    with pytest.raises(ValueError, match="out-edge"):
        locality.static_segmented(graph, width=32)
    with pytest.raises(ValueError, match="order"):
        locality.static_segmented(rmat12(), width=32, order="rcm")


def test_segment_width():
    # 25 MiB of contributions: 3,276,800 vertices, a multiple of 32
    assert locality.segment_width(1 << 26) == 3_276_800
    assert locality.segment_width(1 << 26, share=0.25) == 1_638_400
    assert locality.segment_width(1000) == 1024  # no more than the graph needs
    assert locality.segment_width(1 << 26, l2_bytes=100) == locality.WIDTH_ALIGN
    with pytest.raises(ValueError):
        locality.segment_width(0)
    assert locality.num_segments(1 << 22, locality.segment_width(1 << 22)) == 2


@pytest.mark.parametrize("name", GRAPHS)
@pytest.mark.parametrize("width", (32, 1000))
@pytest.mark.parametrize("short_edges", (locality.SHORT_EDGES, 0))
def test_device_bytes_bound_the_built_layout(name, width, short_edges):
    graph = GRAPHS[name]()
    n, m = graph.num_vertices, graph.num_edges
    layout = locality.build_layout(graph.in_offsets, graph.sources, width, short_edges)
    run = 52 * n + 48  # new ids, 1/d, two ranks and contributions, the accumulator, the loop state
    partial = 8 * int(layout.piece_row.size)
    exact = locality.layout_device_bytes(n, m, layout.segments, int(layout.rows.size), short_edges) - run
    assert layout.nbytes + partial <= exact
    # what it over-counts: long rows and pieces at their bounds, not as built
    slack = (12 * (layout.rows.size - layout.long_rows.size) + 12 * (m // (short_edges + 1) - layout.piece_row.size))
    assert exact - (layout.nbytes + partial) == slack
    assert locality.layout_device_bytes(n, m, layout.segments, short_edges=short_edges) >= exact + run
    with pytest.raises(ValueError):
        locality.layout_device_bytes(n, m, 0)


def test_layout_statistics_script(tmp_path):
    import runpy

    script = runpy.run_path(str(Path(__file__).resolve().parents[1] / "benchmarks" / "bench_locality_layout.py"))
    out = tmp_path / "layout.csv"
    script["main"](["--scales", "9", "--segments", "1", "4", "--out", str(out)])
    import pandas as pd

    table = pd.read_csv(out)
    assert list(zip(table.order, table.segments)) == [("hub", 1), ("hub", 4), ("given", 1), ("given", 4)]
    one = table[table.segments == 1]
    assert (one.sub_rows_per_vertex == 1).all() and (one.first_segment_edge_share == 1).all()
    four = table[table.segments == 4]
    assert (four.edges_per_sub_row < one.edges_per_sub_row.to_numpy()).all()
    # hub-first ids put more of the edges' sources in the first segment than random ids
    assert four.first_segment_edge_share.iloc[0] > four.first_segment_edge_share.iloc[1]


def test_gather_sectors_script(tmp_path):
    import runpy

    import pandas as pd

    script = runpy.run_path(str(Path(__file__).resolve().parents[1] / "benchmarks" / "bench_gather_sectors.py"))
    count = script["sectors_per_warp"]
    consecutive = np.arange(64, dtype=np.int32)  # 32 float64 values fill 8 sectors
    assert count(consecutive, 8) == 8 and count(consecutive, 4) == 4
    assert count(consecutive * 4, 8) == 32  # one value per sector: no sharing
    assert count(np.zeros(40, dtype=np.int32), 8) == 1  # the trailing 8 entries are left out
    # a path with scrambled ids: RCM numbers it so that every edge joins consecutive ids
    n = 64
    path = np.random.default_rng(0).permutation(n).astype(np.int32)  # edges path[i] -> path[i + 1]
    source_of = np.full(n, -1)
    source_of[path[1:]] = path[:-1]
    in_offsets = np.concatenate([[0], np.cumsum(source_of >= 0)]).astype(np.int64)
    new_id = script["rcm_ids"](in_offsets, source_of[source_of >= 0].astype(np.int32))
    assert sorted(new_id) == list(range(n))
    assert (np.abs(np.diff(new_id[path])) == 1).all()
    out = tmp_path / "sectors.csv"
    script["main"](["--scales", "10", "--out", str(out)])
    table = pd.read_csv(out)
    assert list(table.order) == ["given", "hub", "rcm", "community"]
    assert table.communities.iloc[3] >= 1 and 0 < table.largest_community_share.iloc[3] <= 1
    assert ((table.sectors_per_32_float32 <= table.sectors_per_32_float64) & (table.sectors_per_32_float64 <= 32)).all()


def cliques(sizes, bridges=1) -> Graph:
    """Cliques of ``sizes`` on scrambled ids, consecutive cliques joined by ``bridges`` edges each."""
    members = np.split(np.random.default_rng(5).permutation(sum(sizes)), np.cumsum(sizes)[:-1])
    pairs = [(u, v) for group in members for u in group for v in group if u != v]
    pairs += [(a[i], b[i]) for a, b in zip(members, members[1:]) for i in range(bridges)]
    source, target = np.array(pairs).T
    return Graph.from_edges(source, target, sum(sizes)), members


def test_label_propagation_finds_cliques_and_numbers_them_together():
    graph, members = cliques([6, 5, 4])
    labels = locality.community_labels(graph.in_offsets, graph.sources)
    for group in members:
        assert len(set(labels[group])) == 1  # one community per clique
    assert len(set(labels.tolist())) == 3
    new_id = locality.community_ids(graph.in_offsets, labels)
    # largest community first, each on consecutive ids, hubs first within one
    for group, first in zip(members, (0, 6, 11)):
        assert sorted(new_id[group]) == list(range(first, first + group.size))
    degree = np.diff(graph.in_offsets)
    order = np.argsort(new_id)
    for group in members:
        in_order = order[np.isin(order, group)]
        assert (np.diff(degree[in_order]) <= 0).all()


def test_community_order_is_a_permutation_and_deterministic():
    graph = rmat12()
    labels = locality.community_labels(graph.in_offsets, graph.sources, seed=3)
    np.testing.assert_array_equal(labels, locality.community_labels(graph.in_offsets, graph.sources, seed=3))
    new_id = locality.community_ids(graph.in_offsets, labels)
    assert np.array_equal(np.sort(new_id), np.arange(graph.num_vertices))


def test_relabelled_graph_is_the_graph_built_from_renamed_edges():
    graph = college()
    new_id = np.random.default_rng(9).permutation(graph.num_vertices).astype(np.int32)
    relabelled = locality.relabelled_graph(graph, new_id)
    source, target = graph.edges()
    expected = Graph.from_edges(new_id[source], new_id[target], graph.num_vertices, self_loops=False)
    for field in ("offsets", "targets", "in_offsets", "sources"):
        np.testing.assert_array_equal(getattr(relabelled, field), getattr(expected, field), err_msg=field)


def test_layout_calls_are_checked_and_their_runs_reported_as_the_engine_reports(monkeypatch):
    # The layouts' pagerank entries (segmenting, propagation blocking, G-Shards) share these two steps; the
    # device name is the only part that needs a GPU.
    from dynpr.errors import ConvergenceError
    from dynpr.gpu import locality as gpu_locality
    from dynpr.gpu.device_graph import EngineRun

    gpu_locality.check_layout_call("static", None, "a layout")
    gpu_locality.check_layout_call("nd", np.ones(3), "a layout")
    with pytest.raises(ValueError, match="a layout computes"):
        gpu_locality.check_layout_call("dfp", np.ones(3), "a layout")
    with pytest.raises(ValueError, match="previous_ranks"):
        gpu_locality.check_layout_call("nd", None, "a layout")

    monkeypatch.setattr(gpu_locality, "device_name", lambda backend: "a GPU")
    graph = rmat12()
    ranks = np.full(graph.num_vertices, 1.0 / graph.num_vertices)
    run = EngineRun(ranks, 7, True, {"partition_ms": 1.5, "mark_ms": 0.0, "compute_ms": 2.0}, graph.num_vertices)
    result = gpu_locality.layout_result(run, graph, "nd", "segmented", PageRankOptions())
    assert isinstance(result.ranks, np.ndarray) and np.array_equal(result.ranks, ranks)
    assert (result.iterations, result.time_ms, result.approach, result.variant, result.device) == (
        7, 3.5, "nd", "segmented", "a GPU")
    assert result.backend == "gpu" and result.affected == graph.num_vertices and result.converged
    stopped = run._replace(converged=False)
    with pytest.raises(ConvergenceError, match="max_iterations"):
        gpu_locality.layout_result(stopped, graph, "static", "blocking_c32",
                                   PageRankOptions(raise_on_max_iterations=True))


def test_a_layout_that_will_not_fit_is_refused_before_its_build(monkeypatch):
    # The three layouts' prepare() share this check; the free memory is the only part that needs a GPU.
    from dynpr.gpu import locality as gpu_locality
    from dynpr.gpu.memory import DEFAULT_RESERVE_BYTES
    from dynpr.hostmem import GIB

    monkeypatch.setattr(gpu_locality, "free_device_bytes", lambda: DEFAULT_RESERVE_BYTES + GIB)
    gpu_locality.check_layout_fits(GIB, "G-Shards", 10, 20)  # exactly what is free beyond the reserve
    message = r"G-Shards needs 2\.00 GiB on the GPU, .* \(10 vertices, 20 edges, 3 segments\)"
    with pytest.raises(MemoryError, match=message):
        gpu_locality.check_layout_fits(2 * GIB, "G-Shards", 10, 20, ", 3 segments")
