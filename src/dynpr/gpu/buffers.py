"""The device buffers of the GPU engine, declared once per component.

Each component of a run lists the arrays it keeps on the device: name, dtype and
length as a function of the run's :class:`RunShape` (n, m, the batch, and the design
choices that add or drop arrays). The component allocates from its list
(:func:`allocate`), and the memory model of :mod:`dynpr.gpu.memory` (and so the fits
check) sums the same lists (:func:`nbytes`), so the two cannot drift apart; a GPU test
compares the lists with what CuPy's pool hands out. Importing this module needs no CuPy.

Components: :data:`GRAPH` (:func:`dynpr.gpu.device_graph.to_device`, uploads of the
host graph), :data:`LOOP` and :data:`DT_SEARCH` (:class:`dynpr.gpu.iterations.IterationLoop`),
:data:`CLASSES` (:class:`dynpr.gpu.classes.ClassRanks`), :data:`RELABEL`
(:class:`dynpr.gpu.classes.Relabel`), :data:`TELEPORT` (:func:`dynpr.gpu.pagerank.run_classes`), :data:`PUSH` and :data:`PARTITION`
(:class:`dynpr.gpu.baselines.PushRanks` and ``Partition``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from dynpr.designs import CLASS_PLAN, ITERATION_STATE


@dataclass(frozen=True)
class RunShape:
    """What the buffers of one run depend on.

    Attributes
    ----------
    n, m : vertices and edges (self-loops included) of the graph the run iterates on.
    deletions, insertions : the batch's edges copied to the device.
    classes : in-degree classes listed by ``degree_classes`` (0: none listed).
    bounds : in-degree bounds the class kernels take (at least one slot).
    prc : precomputed contributions (two more n-vectors).
    fused : the iteration's expansion runs inside the rank launch (DF/DF-P's dx buffers).
    affected, frontier : the approach's flags (:data:`dynpr.designs.APPROACH_FLAGS`).
    dt_search : DT's BFS runs in launches of its own (not inside a solve whose units are kept).
    relabel : the graph is relabelled hub-first.
    rank_dtype : of the two rank buffers (float32 for a single-precision step).
    contribution : of the two contribution buffers (the variant's ``contribution``: float32 for
        ``classes_c32``).
    personalized : the run has a teleport vector (``PageRankOptions.personalization``).
    """

    n: int
    m: int
    deletions: int = 0
    insertions: int = 0
    classes: int = 0
    bounds: int = 1
    prc: bool = True
    fused: bool = True
    affected: bool = False
    frontier: bool = False
    dt_search: bool = False
    relabel: bool = False
    rank_dtype: str = "f8"
    contribution: str = "float64"
    personalized: bool = False


@dataclass(frozen=True)
class Buffer:
    """One device array of a component: ``length(shape)`` elements of ``dtype`` where
    ``needed(shape)``. ``zeroed``: allocated zeroed (else uninitialised). ``transient``: not
    allocated by the component but by what it calls (CuPy's sort, an upload's scratch),
    counted by the model only."""

    name: str
    dtype: str | Callable[[RunShape], str]
    length: Callable[[RunShape], int]
    needed: Callable[[RunShape], bool] = lambda shape: True
    zeroed: bool = True
    transient: bool = False


def dtype_of(buffer: Buffer, shape: RunShape) -> np.dtype:
    """The buffer's dtype in a run of ``shape``."""
    return np.dtype(buffer.dtype(shape) if callable(buffer.dtype) else buffer.dtype)


def declared(buffers, shape: RunShape) -> tuple[Buffer, ...]:
    """The buffers of ``buffers`` a run of ``shape`` keeps."""
    return tuple(b for b in buffers if b.needed(shape))


def nbytes(buffers, shape: RunShape) -> int:
    """Bytes of the buffers a run of ``shape`` keeps."""
    return sum(dtype_of(b, shape).itemsize * int(b.length(shape)) for b in declared(buffers, shape))


def allocate(cupy, buffers, shape: RunShape) -> dict:
    """The component's arrays for ``shape``, by name (transient ones excluded)."""
    return {b.name: (cupy.zeros if b.zeroed else cupy.empty)(int(b.length(shape)), dtype=dtype_of(b, shape))
            for b in declared(buffers, shape) if not b.transient}


def fill(buffer, values) -> None:
    """Copy ``values`` (a host or device array of the buffer's length) into ``buffer``, cast to its
    dtype; a host array goes straight from its pages (as :func:`dynpr.gpu.resident.upload`)."""
    if hasattr(values, "__cuda_array_interface__"):
        buffer[...] = values
    else:
        buffer.set(np.ascontiguousarray(values, dtype=buffer.dtype))


def _n(shape: RunShape) -> int:
    return shape.n


#: The graph on the device: both CSRs, 1/out-degree, and the out-degrees 1/d is computed from.
GRAPH = (
    Buffer("offsets", "i8", lambda s: s.n + 1),
    Buffer("targets", "i4", lambda s: s.m),
    Buffer("in_offsets", "i8", lambda s: s.n + 1),
    Buffer("sources", "i4", lambda s: s.m),
    Buffer("inv_degree", "f8", _n),
    Buffer("out_degree", "i8", _n, transient=True),
)

#: The iteration loop: rank and contribution buffers, affected and expansion flags, the
#: iteration's change and push work, the whole-solve launch's rings of three (change and push
#: work) slots and work counters, its four barrier counters (three for the ring, one for its
#: prologue), the IterationState block, and the batch's edges.
LOOP = (
    Buffer("rank0", lambda s: s.rank_dtype, _n, zeroed=False),
    Buffer("rank1", lambda s: s.rank_dtype, _n, zeroed=False),
    Buffer("contribution0", lambda s: s.contribution, _n, needed=lambda s: s.prc),
    Buffer("contribution1", lambda s: s.contribution, _n, needed=lambda s: s.prc),
    Buffer("dv", "u1", _n),
    Buffer("ever", "u1", _n, needed=lambda s: s.frontier),
    Buffer("dx0", "u1", _n, needed=lambda s: s.frontier and s.fused),
    Buffer("dx1", "u1", _n, needed=lambda s: s.frontier and s.fused),
    Buffer("dn", "u1", _n, needed=lambda s: s.frontier and not s.fused),
    Buffer("delta", "f8", lambda s: 2),
    Buffer("slots", "f8", lambda s: 6),
    Buffer("work", "i4", lambda s: 3),
    Buffer("arrivals", "u8", lambda s: 4),
    Buffer("state", "i4", lambda s: ITERATION_STATE.words),
    Buffer("del_src", "i4", lambda s: s.deletions, needed=lambda s: s.affected, zeroed=False),
    Buffer("del_dst", "i4", lambda s: s.deletions, needed=lambda s: s.affected, zeroed=False),
    Buffer("ins_src", "i4", lambda s: s.insertions, needed=lambda s: s.affected, zeroed=False),
)

#: DT's BFS in launches of its own (kernels/dt_bfs.cu): visited flags, two levels' entries,
#: its control words, and on a relabelled graph the flags it reaches in the original ids.
DT_SEARCH = (
    Buffer("visited", "i4", _n),
    Buffer("levels", "u4", lambda s: 2 * s.n, zeroed=False),
    Buffer("control", "i4", lambda s: 4),
    Buffer("reached", "u1", _n, needed=lambda s: s.relabel),
)

#: The class lists of degree_classes (a row of n ids per class), their plan, and the bounds.
CLASSES = (
    Buffer("ids", "i4", lambda s: s.classes * s.n, needed=lambda s: s.classes > 0, zeroed=False),
    Buffer("plan", "i4", lambda s: CLASS_PLAN.words, needed=lambda s: s.classes > 0),
    Buffer("bounds", "i8", lambda s: s.bounds, zeroed=False),
)

#: The hub-first relabelling: the relabelled in-CSR, 1/d and starting ranks, the in-degrees
#: scanned into its offsets, the new ids, a personalized run's relabelled teleport terms, and the
#: sort's keys and order (CuPy's argsort).
RELABEL = (
    Buffer("in_offsets", "i8", lambda s: s.n + 1),
    Buffer("sources", "i4", lambda s: s.m, zeroed=False),
    Buffer("inv_degree", "f8", _n, zeroed=False),
    Buffer("start", "f8", _n, zeroed=False),
    Buffer("degree", "i8", _n, zeroed=False),
    Buffer("new_id", "i4", _n, zeroed=False),
    Buffer("teleport", "f8", _n, needed=lambda s: s.personalized, zeroed=False),
    Buffer("sort_keys", "i8", _n, transient=True),
    Buffer("sort_order", "i8", _n, transient=True),
)

#: A personalized run's teleport terms (1 - alpha) p_v, one per vertex.
TELEPORT = (Buffer("teleport", "f8", _n, zeroed=False),)

#: The push baseline's float64 accumulator.
PUSH = (Buffer("accumulator", "f8", _n),)

#: A degree partition of the baselines (Alg. 4): flags, their scan and the ids.
PARTITION = (
    Buffer("flag", "i4", _n, zeroed=False),
    Buffer("scan", "i4", _n, zeroed=False),
    Buffer("ids", "i4", _n, zeroed=False),
)
