"""Propagation blocking on the GPU (dynpr.gpu.blocking) against the host builder and the CPU engine."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

pytest.importorskip("cupy")
from dynpr.backend import gpu_available  # noqa: E402

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not gpu_available(), reason="needs a CUDA device")]

from dynpr import blocking  # noqa: E402
from dynpr.gpu import blocking as gpu_blocking  # noqa: E402
from dynpr.gpu.device_graph import to_device  # noqa: E402
from dynpr.gpu.resident import to_resident  # noqa: E402
from dynpr.pagerank import cpu as cpu_pagerank  # noqa: E402
from dynpr.pagerank import l1_error  # noqa: E402
from dynpr.pagerank.options import PageRankOptions  # noqa: E402
from test_gpu import GRAPHS, load  # noqa: E402
from test_gpu_contributions import TWIN_L1  # noqa: E402
from test_locality import hub_graph  # noqa: E402

CASES = {**{name: (lambda name=name: load(name)) for name in GRAPHS}, "hubs": hub_graph}
VARIANT = {"float64": None, "float32": "classes_c32"}  # the CPU engine storing the same contributions


def cpu_run(approach, graph, dtype, previous=None, **options):
    """The CPU engine's run that stores contributions as ``dtype``."""
    opts = PageRankOptions(variant=VARIANT[dtype], **options)
    return cpu_pagerank._update(approach, graph if previous is not None else None, graph, None, previous, opts)


@pytest.mark.parametrize("name", CASES)
def test_device_layout_is_the_host_builders(name):
    graph = CASES[name]()
    g = to_device(graph)
    for bin_width, tile_edges in ((blocking.BIN_WIDTH, None), (64, 1000), (7, 333)):
        device = blocking.build_blocking(g.offsets, g.targets, bin_width, tile_edges).arrays()
        host = blocking.build_blocking(graph.offsets, graph.targets, bin_width, tile_edges).arrays()
        for field, array in host.items():
            np.testing.assert_array_equal(device[field].get(), array, err_msg=field)


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("dtype", gpu_blocking.DTYPES)
@pytest.mark.parametrize("bin_width", (None, 100))  # None: by the graph's size (bin_width_for)
def test_blocked_static_is_the_cpu_engine(name, dtype, bin_width):
    # The bins round each contribution to 2^-62 (fixed point: at most m * 2^-62 in L1 per iteration)
    # and the ranks' finish rounds their sums, so the ranks differ from the CPU engine's in the last bits (float64: L1 <= 1e-12, as every GPU design, tests/test_gpu.py) and
    # with float32 contributions, rarely, by one rounded the other way (the twin bound of
    # test_gpu_contributions); iterations the same.
    graph = CASES[name]()
    cpu = cpu_run("static", graph, dtype)
    gpu = gpu_blocking.pagerank("static", graph, dtype=dtype, bin_width=bin_width)
    assert gpu.iterations == cpu.iterations and gpu.converged
    assert gpu.variant == f"blocking_{'c32' if dtype == 'float32' else 'c64'}"
    assert isinstance(gpu.ranks, np.ndarray)
    assert l1_error(gpu.ranks, cpu.ranks) <= (1e-12 if dtype == "float64" else TWIN_L1)


def test_fixed_point_runs_are_reproducible_and_timed_by_kernel():
    graph = load("web-NotreDame")
    db = gpu_blocking.prepare(graph, dtype="float64")
    first = gpu_blocking.pagerank("static", graph, layout=db)
    second = gpu_blocking.pagerank("static", graph, layout=db)
    assert first.iterations == second.iterations
    assert bool((first.ranks == second.ranks).all())  # fixed point: the same sums every run
    phases = gpu_blocking.BlockedLoop(db, PageRankOptions()).phase_ms(2)
    assert set(phases) == {"expand_ms", "accumulate_ms"} and min(phases.values()) > 0
    wide = gpu_blocking.prepare(graph, dtype="float64", bin_width=blocking.MAX_LOCAL)
    with pytest.raises(ValueError, match="bin width 65536"):
        gpu_blocking.BlockedLoop(wide, PageRankOptions())


@pytest.mark.parametrize("tile_edges", (None, 100))
def test_one_iteration_sums_are_the_host_twins(tile_edges):
    # Several bins, one tile or 300 (warps then take two tiles' runs at a time), on the hub graph,
    # whose hubs take long runs.
    import cupy

    graph = hub_graph()
    db = gpu_blocking.prepare(graph, dtype="float64", bin_width=64, tile_edges=tile_edges)
    assert gpu_blocking.BlockedLoop(db, PageRankOptions()).group == (1 if tile_edges is None else 2)
    options = PageRankOptions(max_iterations=1)
    start = np.random.default_rng(2).random(graph.num_vertices)
    start /= start.sum()
    loop = gpu_blocking.BlockedLoop(db, options)
    run = loop.run(start)
    degree = np.diff(graph.offsets)
    host = blocking.blocked_sums(blocking.build_blocking(graph.offsets, graph.targets, 64, tile_edges),
                                 graph.offsets, start / degree)
    expected = (1 - options.alpha) / graph.num_vertices + options.alpha * host
    np.testing.assert_allclose(cupy.asnumpy(run.ranks), expected, rtol=1e-12)


def test_blocked_nd_goes_on_from_previous_ranks_and_runs_resident():
    graph = to_resident(load("soc-Epinions1"))
    host = load("soc-Epinions1")
    previous = cpu_pagerank._update("static", None, host, None, None, PageRankOptions(tolerance=1e-6)).ranks
    cpu = cpu_run("nd", host, "float64", previous)
    gpu = gpu_blocking.pagerank("nd", graph, previous, dtype="float64")
    assert gpu.iterations == cpu.iterations
    assert l1_error(gpu.ranks.get(), cpu.ranks) <= 1e-12  # ranks stay where the graph is
    with pytest.raises(ValueError, match="previous_ranks"):
        gpu_blocking.pagerank("nd", graph)
    with pytest.raises(ValueError, match="static"):
        gpu_blocking.pagerank("df", graph, previous)
    with pytest.raises(ValueError, match="dtype"):
        gpu_blocking.prepare(graph, dtype="float16")


def test_blocked_stops_at_max_iterations():
    graph = load("rmat14")
    options = replace(PageRankOptions(), max_iterations=5)
    cpu = cpu_pagerank._update("static", None, graph, None, None, options)
    gpu = gpu_blocking.pagerank("static", graph, options=options, dtype="float64")
    assert (gpu.iterations, gpu.converged) == (5, False) == (cpu.iterations, cpu.converged)
    assert l1_error(gpu.ranks, cpu.ranks) <= 1e-12
