"""Float32 stored contributions (variant ``classes_c32``) on the GPU against their CPU twin."""

from __future__ import annotations

from dataclasses import replace

import pytest

pytest.importorskip("cupy")
from dynpr.backend import gpu_available  # noqa: E402

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not gpu_available(), reason="needs a CUDA device")]

from dynpr import APPROACHES, designs  # noqa: E402
from dynpr.gpu import pagerank as gpu_pagerank  # noqa: E402
from dynpr.pagerank import cpu as cpu_pagerank  # noqa: E402
from dynpr.pagerank import l1_error  # noqa: E402
from test_gpu import GRAPHS, OPTIONS, load, scenario  # noqa: E402

C32 = replace(OPTIONS, variant="classes_c32")
# GPU against the CPU twin: both round the same contributions, so they differ by the order of
# additions and, rarely, a contribution rounded the other way after it; far below the rounding's
# own shift from float64 (2e-8 to 8e-8 in L1 on these graphs, docs/locality.md).
TWIN_L1 = 1e-10


@pytest.mark.parametrize("launch", ("persistent", "graphs", "relabelled"))
@pytest.mark.parametrize("approach", APPROACHES)
@pytest.mark.parametrize("name", GRAPHS)
def test_float32_contributions_match_the_cpu_twin(monkeypatch, name, approach, launch):
    # Every approach through the whole-solve launch (these graphs' size), a launch per iteration
    # replayed from CUDA graphs, and the hub-first relabelling, whose DF/DF-P announce their
    # batch sources in the sign bit of a float32 contribution.
    if launch == "graphs":
        monkeypatch.setitem(designs.VARIANTS, "classes_c32",
                            replace(designs.VARIANTS["classes_c32"], persistent_below=0))
    elif launch == "relabelled":
        monkeypatch.setattr(gpu_pagerank, "relabels", lambda n, l2: True)
    if approach == "static":
        graph = load(name)
        cpu = cpu_pagerank._update("static", None, graph, None, None, C32)
        gpu = gpu_pagerank._update("static", None, graph, None, None, C32)
        exact = cpu_pagerank._update("static", None, graph, None, None, OPTIONS)
        assert l1_error(gpu.ranks, exact.ranks) > 10 * TWIN_L1  # it did store float32
    else:
        old, new, batch, previous, ref = scenario(name)
        cpu = cpu_pagerank._update(approach, old, new, batch, previous, C32)
        gpu = gpu_pagerank._update(approach, old, new, batch, previous, C32)
    assert gpu.variant == "classes_c32"
    if approach in ("df", "dfp"):
        # as for float64 (test_gpu): the fused DF/DF-P expand as the CPU does up to an iteration
        assert abs(gpu.iterations - cpu.iterations) <= 1
        assert l1_error(gpu.ranks, ref) <= 2 * l1_error(cpu.ranks, ref) + 1e-13
    else:
        assert gpu.iterations == cpu.iterations
        assert gpu.affected == cpu.affected
        assert l1_error(gpu.ranks, cpu.ranks) <= TWIN_L1
