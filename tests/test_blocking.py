"""Propagation blocking on the host (dynpr.blocking): the builder against a direct construction, the
twin of an iteration's sums against the in-CSR's, and the device memory model against built layouts."""

from __future__ import annotations

import numpy as np
import pytest

from dynpr import blocking
from dynpr.graph import Graph
from test_locality import college, hub_graph, rmat12

GRAPHS = {"rmat12": rmat12, "college": college, "hubs": hub_graph}
SHAPES = [(blocking.BIN_WIDTH, None), (64, 1000), (7, 333), (1, 65536)]  # (bin width, tile edges)


def direct_layout(graph: Graph, bin_width: int, tile_edges: int) -> dict:
    """The layout by a different route: every out-edge as (tile, bin, edge), sorted lexicographically."""
    m = graph.num_edges
    edge = np.arange(m)
    tile, bin_ = edge // tile_edges, graph.targets // bin_width
    order = np.lexsort((edge, bin_, tile))
    position = np.empty(m, dtype=np.uint16)
    position[order] = edge - tile[order] * tile_edges
    tiles, bins = -(-m // tile_edges), -(-graph.num_vertices // bin_width)
    counts = np.zeros((tiles, bins), dtype=np.int64)
    np.add.at(counts, (tile, bin_), 1)
    starts = np.cumsum(counts, axis=1) - counts
    source = np.repeat(np.arange(graph.num_vertices), np.diff(graph.offsets))
    tile_source = source[np.minimum(np.arange(tiles + 1) * tile_edges, m - 1)]
    return {"tile_source": tile_source, "position": position, "local_target": graph.targets[order] % bin_width,
            "run_start": starts.T.ravel(), "run_length": counts.T.ravel()}


@pytest.mark.parametrize("name", GRAPHS)
@pytest.mark.parametrize("bin_width,tile_edges", SHAPES)
def test_layout_is_the_direct_construction(name, bin_width, tile_edges, monkeypatch):
    graph = GRAPHS[name]()
    monkeypatch.setattr(blocking, "BUILD_CHUNK_EDGES", 5000)  # several chunks of tiles on these graphs
    layout = blocking.build_blocking(graph.offsets, graph.targets, bin_width, tile_edges)
    tile_edges = tile_edges or blocking.tile_edges_for(np.float32)
    assert (layout.tiles, layout.bins) == (-(-graph.num_edges // tile_edges), -(-graph.num_vertices // bin_width))
    expected = direct_layout(graph, bin_width, tile_edges)
    for field, array in layout.arrays().items():
        np.testing.assert_array_equal(array, expected[field], err_msg=field)
    assert layout.position.dtype == layout.local_target.dtype == layout.run_start.dtype == np.uint16


@pytest.mark.parametrize("name", GRAPHS)
@pytest.mark.parametrize("bin_width,tile_edges", SHAPES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_two_passes_sum_what_the_in_csr_sums(name, bin_width, tile_edges, dtype):
    graph = GRAPHS[name]()
    layout = blocking.build_blocking(graph.offsets, graph.targets, bin_width, tile_edges)
    contributions = np.random.default_rng(4).random(graph.num_vertices).astype(dtype)
    sums = blocking.blocked_sums(layout, graph.offsets, contributions)
    widened = contributions.astype(np.float64)
    in_csr = np.add.reduceat(widened[graph.sources], graph.in_offsets[:-1])  # every vertex has its self-loop
    np.testing.assert_allclose(sums, in_csr, rtol=1e-12)


def test_bad_shapes_and_dangling_vertices_are_refused():
    graph = rmat12()
    for bin_width, tile_edges in ((0, 10), (10, 0), ((1 << 16) + 1, 10), (10, (1 << 16) + 1)):
        with pytest.raises(ValueError, match="bin_width, tile_edges"):
            blocking.build_blocking(graph.offsets, graph.targets, bin_width, tile_edges)
    dangling = Graph.from_edges([0, 1], [1, 2], 4, self_loops=False)
    with pytest.raises(ValueError, match="out-edge on every vertex"):
        blocking.build_blocking(dangling.offsets, dangling.targets, 2, 2)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("bin_width,tile_edges", [(64, 1000), (blocking.BIN_WIDTH, None)])
def test_device_bytes_are_the_layout_the_stored_contributions_and_the_run(dtype, bin_width, tile_edges):
    graph = hub_graph()
    n, m = graph.num_vertices, graph.num_edges
    tile_edges = tile_edges or blocking.tile_edges_for(dtype)
    layout = blocking.build_blocking(graph.offsets, graph.targets, bin_width, tile_edges)
    size = np.dtype(dtype).itemsize
    built = sum(a.nbytes for a in layout.arrays().values())
    run = 8 * n + 16 * n + 2 * size * n + 48  # 1/d, two ranks, two contributions, the loop state
    assert blocking.blocking_device_bytes(n, m, bin_width, tile_edges, dtype) == built + size * m + run


def test_bins_are_halved_until_four_per_multiprocessor():
    assert blocking.bin_width_for(1 << 26, 132) == blocking.BIN_WIDTH  # rmat-26: 4096 bins
    assert blocking.bin_width_for(1 << 22, 132) == 4096  # rmat-22: 1024 bins, not 256
    assert blocking.bin_width_for(1000, 132) == 1024  # no narrower
    for n in (1, 5000, 3 << 20, 1 << 24):
        width = blocking.bin_width_for(n, 132)
        assert width in (1024, 2048, 4096, 8192, blocking.BIN_WIDTH)
        assert width == 1024 or -(-n // width) >= 4 * 132


def test_tiles_fill_the_staging_shared_memory():
    assert blocking.tile_edges_for(np.float32) == blocking.STAGING_BYTES // 4 <= blocking.MAX_LOCAL
    assert blocking.tile_edges_for(np.float64) == blocking.STAGING_BYTES // 8
