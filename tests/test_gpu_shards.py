"""G-Shards on the GPU (dynpr.gpu.shards) against the host builder, its twin and the CPU engine."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

pytest.importorskip("cupy")
from dynpr.backend import gpu_available  # noqa: E402

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not gpu_available(), reason="needs a CUDA device")]

from dynpr import blocking, shards  # noqa: E402
from dynpr.gpu import shards as gpu_shards  # noqa: E402
from dynpr.gpu.device_graph import to_device  # noqa: E402
from dynpr.gpu.resident import to_resident  # noqa: E402
from dynpr.pagerank import cpu as cpu_pagerank  # noqa: E402
from dynpr.pagerank import l1_error  # noqa: E402
from dynpr.pagerank.options import PageRankOptions  # noqa: E402
from test_gpu import load  # noqa: E402
from test_gpu_blocking import CASES, cpu_run  # noqa: E402
from test_gpu_contributions import TWIN_L1  # noqa: E402
from test_locality import hub_graph  # noqa: E402


@pytest.mark.parametrize("name", CASES)
def test_device_layout_is_the_host_builders(name):
    graph = CASES[name]()
    g = to_device(graph)
    for width in (blocking.BIN_WIDTH, 1000, 64 if graph.num_vertices < 5000 else 500):  # P * P windows
        device = shards.build_shards(g.offsets, g.targets, width).arrays()
        host = shards.build_shards(graph.offsets, graph.targets, width).arrays()
        for field, array in host.items():
            np.testing.assert_array_equal(device[field].get(), array, err_msg=field)


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("dtype", gpu_shards.DTYPES)
@pytest.mark.parametrize("width", (None, 100))  # None: by the graph's size (bin_width_for)
def test_sharded_static_is_the_cpu_engine(name, dtype, width):
    # As propagation blocking's: fixed-point sums, so float64 within L1 1e-12 of the CPU engine and
    # float32 within the twin bound of test_gpu_contributions; iterations the same.
    graph = CASES[name]()
    cpu = cpu_run("static", graph, dtype)
    gpu = gpu_shards.pagerank("static", graph, dtype=dtype, width=width)
    assert gpu.iterations == cpu.iterations and gpu.converged
    assert gpu.variant == f"shards_{'c32' if dtype == 'float32' else 'c64'}"
    assert isinstance(gpu.ranks, np.ndarray)
    assert l1_error(gpu.ranks, cpu.ranks) <= (1e-12 if dtype == "float64" else TWIN_L1)


def test_runs_are_reproducible_and_wide_shards_refused():
    graph = load("web-NotreDame")
    ds = gpu_shards.prepare(graph, dtype="float64")
    first = gpu_shards.pagerank("static", graph, layout=ds)
    second = gpu_shards.pagerank("static", graph, layout=ds)
    assert first.iterations == second.iterations
    assert bool((first.ranks == second.ranks).all())  # fixed point: the same sums every run
    wide = gpu_shards.prepare(graph, dtype="float64", width=blocking.MAX_LOCAL)
    with pytest.raises(ValueError, match="shard width 65536"):
        gpu_shards.ShardedLoop(wide, PageRankOptions())


@pytest.mark.parametrize("width,group", ((64, 1), (4, 5), (1, 23)))
def test_one_iteration_sums_are_the_host_twins(width, group):
    # The hub graph (3,000 vertices) in shards of 64 (a warp takes one window at a time), 4 (750
    # shards: five windows at a time) or 1 (23); its hubs take long windows and long runs of one
    # destination.
    import cupy

    graph = hub_graph()
    ds = gpu_shards.prepare(graph, dtype="float64", width=width)
    options = PageRankOptions(max_iterations=1)
    loop = gpu_shards.ShardedLoop(ds, options)
    assert loop.group == group
    start = np.random.default_rng(2).random(graph.num_vertices)
    start /= start.sum()
    run = loop.run(start)
    degree = np.diff(graph.offsets)
    host = shards.sharded_sums(shards.build_shards(graph.offsets, graph.targets, width), start / degree)
    expected = (1 - options.alpha) / graph.num_vertices + options.alpha * host
    np.testing.assert_allclose(cupy.asnumpy(run.ranks), expected, rtol=1e-12)


def test_sharded_nd_goes_on_from_previous_ranks_and_runs_resident():
    graph = to_resident(load("soc-Epinions1"))
    host = load("soc-Epinions1")
    previous = cpu_pagerank._update("static", None, host, None, None, PageRankOptions(tolerance=1e-6)).ranks
    cpu = cpu_run("nd", host, "float64", previous)
    gpu = gpu_shards.pagerank("nd", graph, previous, dtype="float64")
    assert gpu.iterations == cpu.iterations
    assert l1_error(gpu.ranks.get(), cpu.ranks) <= 1e-12  # ranks stay where the graph is
    with pytest.raises(ValueError, match="previous_ranks"):
        gpu_shards.pagerank("nd", graph)
    with pytest.raises(ValueError, match="static"):
        gpu_shards.pagerank("df", graph, previous)
    with pytest.raises(ValueError, match="dtype"):
        gpu_shards.prepare(graph, dtype="float16")


def test_sharded_stops_at_max_iterations():
    graph = load("rmat14")
    options = replace(PageRankOptions(), max_iterations=5)
    cpu = cpu_pagerank._update("static", None, graph, None, None, options)
    gpu = gpu_shards.pagerank("static", graph, options=options, dtype="float64")
    assert (gpu.iterations, gpu.converged) == (5, False) == (cpu.iterations, cpu.converged)
    assert l1_error(gpu.ranks, cpu.ranks) <= 1e-12
