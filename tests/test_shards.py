"""G-Shards on the host (dynpr.shards): the builder against a direct construction, the twin of an
iteration's sums against the in-CSR's, and the device memory model against built layouts."""

from __future__ import annotations

import numpy as np
import pytest

from dynpr import blocking, shards
from dynpr.graph import Graph
from test_locality import college, hub_graph, rmat12

GRAPHS = {"rmat12": rmat12, "college": college, "hubs": hub_graph}
WIDTHS = (blocking.BIN_WIDTH, 64, 7, 1)


def direct_layout(graph: Graph, width: int) -> dict:
    """The layout by a different route: the entries as in-edges sorted by (destination shard, source,
    out-CSR position), the concatenated windows by (source shard, destination shard, source, position),
    and the windows counted edge by edge."""
    n, m = graph.num_vertices, graph.num_edges
    p = -(-n // width)
    edge = np.arange(m)
    source = np.repeat(np.arange(n), np.diff(graph.offsets))
    target = graph.targets
    entries = np.lexsort((edge, source, target // width))
    windows = np.lexsort((edge, source, target // width, source // width))
    length = np.zeros((p, p), dtype=np.int64)
    np.add.at(length, (source // width, target // width), 1)
    shard_start = np.concatenate([[0], np.cumsum(length.sum(axis=0))])
    first = shard_start[:-1][None, :] + np.cumsum(length, axis=0) - length
    cw = graph.offsets[np.arange(p) * width][:, None] + np.cumsum(length, axis=1) - length
    return {"shard_start": shard_start, "local_target": target[entries] % width,
            "window_source": source[windows] % width, "window_first": first.ravel(), "window_cw": cw.ravel(),
            "window_length": length.ravel()}


@pytest.mark.parametrize("name", GRAPHS)
@pytest.mark.parametrize("width", WIDTHS)
def test_layout_is_the_direct_construction(name, width, monkeypatch):
    graph = GRAPHS[name]()
    monkeypatch.setattr(shards, "BUILD_CHUNK_EDGES", 5000)  # several chunks on these graphs
    layout = shards.build_shards(graph.offsets, graph.targets, width)
    assert layout.shards == -(-graph.num_vertices // width)
    expected = direct_layout(graph, width)
    for field, array in layout.arrays().items():
        np.testing.assert_array_equal(array, expected[field], err_msg=field)
    assert layout.local_target.dtype == layout.window_source.dtype == np.uint16
    assert layout.window_length.dtype == np.int32


def test_a_window_pairs_its_sources_and_targets_as_the_edges_are():
    # Window (j, i) read on both sides, q-th entry with q-th entry: the sources of its concatenated
    # windows' span and the destinations of its shard span are the edges from shard j to shard i,
    # in out-CSR order.
    graph, width = hub_graph(), 16
    layout = shards.build_shards(graph.offsets, graph.targets, width)
    p = layout.shards
    source = np.repeat(np.arange(graph.num_vertices), np.diff(graph.offsets))
    nonempty = np.flatnonzero(layout.window_length)
    for w in nonempty[[0, 1, nonempty.size // 2, -1]]:
        j, i = divmod(int(w), p)
        cw = np.arange(layout.window_cw[w], layout.window_cw[w] + layout.window_length[w])
        entry = np.arange(layout.window_first[w], layout.window_first[w] + layout.window_length[w])
        edges = np.flatnonzero((source // width == j) & (graph.targets // width == i))
        assert edges.size == layout.window_length[w]
        np.testing.assert_array_equal(j * width + layout.window_source[cw], source[edges])
        np.testing.assert_array_equal(i * width + layout.local_target[entry], graph.targets[edges])


@pytest.mark.parametrize("name", GRAPHS)
@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_windows_then_shards_sum_what_the_in_csr_sums(name, width, dtype):
    graph = GRAPHS[name]()
    layout = shards.build_shards(graph.offsets, graph.targets, width)
    contributions = np.random.default_rng(4).random(graph.num_vertices).astype(dtype)
    sums = shards.sharded_sums(layout, contributions)
    widened = contributions.astype(np.float64)
    in_csr = np.add.reduceat(widened[graph.sources], graph.in_offsets[:-1])  # every vertex has its self-loop
    np.testing.assert_allclose(sums, in_csr, rtol=1e-12)


def test_bad_widths_are_refused():
    graph = rmat12()
    for width in (0, (1 << 16) + 1):
        with pytest.raises(ValueError, match="width"):
            shards.build_shards(graph.offsets, graph.targets, width)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("width", [64, blocking.BIN_WIDTH])
def test_device_bytes_are_the_layout_the_stored_contributions_and_the_run(dtype, width):
    graph = hub_graph()
    n, m = graph.num_vertices, graph.num_edges
    layout = shards.build_shards(graph.offsets, graph.targets, width)
    size = np.dtype(dtype).itemsize
    built = sum(a.nbytes for a in layout.arrays().values())
    run = 8 * n + 16 * n + 2 * size * n + 48  # 1/d, two ranks, two contributions, the loop state
    assert shards.sharded_device_bytes(n, m, width, dtype) == built + 2 * size * m + run
