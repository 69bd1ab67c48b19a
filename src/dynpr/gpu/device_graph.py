"""What the GPU engines share: the graph on the device and launch wiring.

A graph is uploaded once per :class:`dynpr.graph.graph.Graph` object (a weak cache,
so later runs on the same object copy nothing), and before a first upload the
run is checked against free device memory (:mod:`dynpr.gpu.memory`'s model).
The rest is launch wiring: a grid for one thread per item,
the rank kernels' template flags per approach and the three timed phases read
from CUDA events. Importing this module needs no CuPy.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

from typing import NamedTuple

from dynpr.designs import APPROACH_FLAGS, BLOCK, KERNEL_STRUCTS
from dynpr.gpu import loader, memory
from dynpr.gpu.resident import upload
from dynpr.graph.graph import on_device
from dynpr.pagerank.options import PageRankOptions

# (AFFECTED, FRONTIER, PRUNE) template flags of the rank kernels per approach.
MODES = {approach: (f.affected, f.frontier, f.prune) for approach, f in APPROACH_FLAGS.items()}


class EngineRun(NamedTuple):
    """What a GPU driver returns: the ranks (a CuPy array), iterations, whether the last change met the
    tolerance (False when the run stopped at ``max_iterations``), phase times, affected count."""

    ranks: object
    iterations: int
    converged: bool
    phases: dict
    affected: int


def grid_for(count: int) -> tuple[int]:
    """Grid of BLOCK-thread blocks with one thread per item (at least one block)."""
    return (max(1, -(-count // BLOCK)),)


def resident_grid(cupy, kernel, units: int, dynamic_shared: int = 0) -> int:
    """Blocks of BLOCK threads of ``kernel`` that the device holds at once, at most ``units``.

    The grid of a launch that hands out its work units itself (about one resident wave
    does best) or of a cooperative one (whose blocks must all be resident, else the
    launch fails): multiprocessors times the blocks that fit one by threads, by
    registers (allocated per warp in units of 256) and by shared memory (static, plus
    ``dynamic_shared`` bytes per block, plus what the device reserves per block)."""
    device = cupy.cuda.Device()
    attributes = device.attributes
    per_warp = -(-kernel.num_regs * 32 // 256) * 256
    fits = [attributes["MaxThreadsPerMultiProcessor"] // BLOCK,
            attributes["MaxRegistersPerMultiprocessor"] // (per_warp * (BLOCK // 32))]
    shared = kernel.shared_size_bytes + dynamic_shared
    if shared:
        reserved = attributes.get("ReservedSharedMemoryPerBlock", 0)
        fits.append(attributes["MaxSharedMemoryPerMultiprocessor"] // (shared + reserved))
    return max(1, min(units, max(1, min(fits)) * attributes["MultiProcessorCount"]))


def prefer_l1(cupy, kernel, blocks: int, dynamic_shared: int) -> None:
    """Ask the driver to carve out of each multiprocessor's L1 only the shared memory that
    ``blocks`` blocks of ``kernel`` spread over the device take (``dynamic_shared`` bytes each
    plus static and reserved ones), leaving the rest to the L1 cache; by default the driver
    carves out what the most resident blocks would take. A hint the driver may round up."""
    attributes = cupy.cuda.Device().attributes
    per_multiprocessor = -(-blocks // attributes["MultiProcessorCount"])
    per_block = kernel.shared_size_bytes + dynamic_shared + attributes.get("ReservedSharedMemoryPerBlock", 0)
    percent = -(-100 * per_multiprocessor * per_block // attributes["MaxSharedMemoryPerMultiprocessor"])
    kernel.preferred_shared_memory_carveout = min(100, percent)


@dataclass(eq=False)
class DeviceGraph:
    """A :class:`dynpr.graph.graph.Graph` on the device, plus ``1/out-degree`` (float64)."""

    n: int
    offsets: object
    targets: object
    in_offsets: object
    sources: object
    inv_degree: object


def graph_args(g: DeviceGraph):
    """``GraphArgs`` (kernels/layouts.cuh): the device addresses of ``g``'s arrays and its n."""
    return KERNEL_STRUCTS["GraphArgs"].pack(in_offsets=g.in_offsets, sources=g.sources, inv_degree=g.inv_degree,
                                            out_offsets=g.offsets, targets=g.targets, n=g.n)


_UPLOADED: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def to_device(graph) -> DeviceGraph:
    """Copy a graph to the device once; later calls with the same object reuse it."""
    cached = _UPLOADED.get(graph)
    if cached is None:
        cupy = loader.require_cupy()
        offsets = upload(graph.offsets)
        cached = DeviceGraph(
            graph.num_vertices,
            offsets,
            upload(graph.targets),
            upload(graph.in_offsets),
            upload(graph.sources),
            1.0 / cupy.diff(offsets),
        )
        _UPLOADED[graph] = cached
    return cached


def _device_bytes(g: DeviceGraph) -> int:
    return sum(a.nbytes for a in (g.offsets, g.targets, g.in_offsets, g.sources, g.inv_degree))


def _resident_bytes(graph) -> int:
    """A graph's share of the memory model already on the device: an uploaded graph's, its
    (freed) upload scratch included, or the arrays of a resident graph (:mod:`dynpr.gpu.resident`)."""
    if graph in _UPLOADED:
        return _device_bytes(_UPLOADED[graph]) + 8 * graph.num_vertices
    arrays = (graph.offsets, graph.targets, graph.in_offsets, graph.sources)
    return sum(a.nbytes for a in arrays) if on_device(graph.offsets) else 0


def check_fits(approach: str, graphs, batch, options: PageRankOptions, variant: str, relabel: bool = False) -> None:
    """Fail with one line before uploading when the run will not fit on the device
    (:func:`dynpr.gpu.memory.check_fits`); nothing to check once every graph is
    uploaded, and graphs already uploaded count as resident. ``graphs`` is the
    new graph, then (DT in the paper's design) the old one; ``relabel``: the
    default will relabel it."""
    if all(gr in _UPLOADED for gr in graphs):
        return
    graph = graphs[0]
    batch_edges = 0 if approach in ("static", "nd") or batch is None else batch.deletions + batch.insertions
    resident = sum(_resident_bytes(gr) for gr in graphs)
    memory.check_fits(graph.num_vertices, max(gr.num_edges for gr in graphs), approach, batch_edges=batch_edges,
                      partition=options.partition, max_iterations=options.max_iterations, variant=variant,
                      relabel=relabel, personalized=options.personalization is not None, resident_bytes=resident)


def phase_times(cupy, events) -> dict[str, float]:
    """Milliseconds between four recorded events: partition, marking, iterations."""
    return {
        "partition_ms": cupy.cuda.get_elapsed_time(events[0], events[1]),
        "mark_ms": cupy.cuda.get_elapsed_time(events[1], events[2]),
        "compute_ms": cupy.cuda.get_elapsed_time(events[2], events[3]),
    }


def count_affected(cupy, approach: str, dv, ever, n: int) -> int:
    """``PageRankResult.affected``: DT's reachable set, the vertices DF/DF-P ever
    marked, or n for Static and ND."""
    if approach == "dt":
        return int(cupy.count_nonzero(dv))
    if MODES[approach][1]:
        return int(cupy.count_nonzero(ever))
    return n
