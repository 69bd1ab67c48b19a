"""Applying a batch: :func:`apply_batch` splices the affected CSR rows of a
:class:`~dynpr.graph.graph.Graph` (graph and transpose) in one pass, without building the int64
keys of every edge; :func:`apply_batch_in_place` does it to a graph held in a :class:`GraphSlot`
one CSR at a time, never holding two graphs, and :func:`undo_batch_in_place` restores it."""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from dynpr.batches.batch import Batch, split_keys
from dynpr.graph.graph import Graph, array_module, as_array, contains_sorted, edge_keys, splice_csr, unique_sorted
from dynpr.graph.hostmem import check_host_fits
from dynpr.graph.validate import check_batch


class BatchWarning(UserWarning):
    """A batch deleted a missing edge, inserted a present one, repeated an edge or deleted a self-loop."""


@dataclass(frozen=True)
class BatchReport:
    """What :func:`apply_batch_with_report` did with each edge of a batch."""

    deleted: int  # edges removed
    inserted: int  # edges added
    missing_deletions: int  # deletions of edges not in the graph (skipped)
    present_insertions: int  # insertions of edges already in the graph after the deletions (skipped)
    repeated_deletions: int  # deletions repeated within the batch (applied once)
    repeated_insertions: int  # insertions repeated within the batch (applied once)
    self_loop_deletions: int  # deletions of self-loops (never applied: every vertex keeps its self-loop)

    @property
    def skipped(self) -> int:
        """Number of batch edges that changed nothing."""
        return (self.missing_deletions + self.present_insertions + self.repeated_deletions
                + self.repeated_insertions + self.self_loop_deletions)


@dataclass(frozen=True)
class _Edges:
    """A batch resolved against a graph: the edges that leave it and those that join it, each
    unique and sorted by (source, target), every removed edge present and no added one."""

    del_src: object
    del_dst: object
    add_src: object
    add_dst: object


def _resolve(graph: Graph, batch: Batch, loops_complete: bool = False) -> tuple[_Edges, object, BatchReport, int]:
    """The batch as exact edge lists of ``graph``: the lists, the out-CSR positions of the removed
    edges, the report and the number of self-loops added (vertices that had none).

    ``loops_complete``: every vertex of ``graph`` is known to have its self-loop (a graph
    :func:`apply_batch_in_place` made), so none is searched for (8 bytes per vertex and a search saved).
    """
    n = graph.num_vertices
    check_batch(batch, n)
    xp = array_module(graph.targets)
    # Every step runs where the graph is: on the device the batch is uploaded once and no
    # batch-sized sort or search returns to the host (R-MAT 25 at fraction 0.1: ~56M edges).
    del_src, del_dst, ins_src, ins_dst = (as_array(xp, a) for a in batch.arrays())
    loops = del_src == del_dst
    del_keys = edge_keys(del_src[~loops], del_dst[~loops], n)
    del_unique = unique_sorted(del_keys)
    del_src, del_dst = split_keys(del_unique, n)
    found, del_pos = graph.find_edges(del_src, del_dst)
    del_src, del_dst, del_pos = del_src[found], del_dst[found], del_pos[found]

    ins_unique = unique_sorted(edge_keys(ins_src, ins_dst, n))
    ins_src, ins_dst = split_keys(ins_unique, n)
    # present after the deletions: an edge both deleted and inserted is deleted, then inserted again
    present = graph.has_edges(ins_src, ins_dst) & ~contains_sorted(edge_keys(del_src, del_dst, n), ins_unique)
    new = ins_unique[~present]
    # every vertex keeps (or gets) its self-loop
    loop_keys = xp.empty(0, dtype=np.int64) if loops_complete else \
        xp.flatnonzero(graph.self_loop_positions < 0) * np.int64(n + 1)
    added = unique_sorted(xp.concatenate([new, loop_keys]))
    add_src, add_dst = split_keys(added, n)
    report = BatchReport(
        deleted=len(del_pos),
        inserted=len(new),
        missing_deletions=int(xp.count_nonzero(~found)),
        present_insertions=len(ins_unique) - len(new),
        repeated_deletions=len(del_keys) - len(del_unique),
        repeated_insertions=batch.insertions - len(ins_unique),
        self_loop_deletions=int(xp.count_nonzero(loops)),
    )
    return _Edges(del_src, del_dst, add_src, add_dst), del_pos, report, len(added) - len(new)


def _transpose_side(graph: Graph, edges: _Edges):
    """What splicing the transpose needs: the in-CSR positions of the removed edges and the added
    edges as (target, source) rows and columns, in the transpose's order (one sort of unique keys)."""
    xp = array_module(graph.targets)
    n = graph.num_vertices
    by_target = xp.argsort(edge_keys(edges.del_dst, edges.del_src, n))
    _, in_del_pos = graph.find_in_edges(edges.del_dst[by_target], edges.del_src[by_target])
    by_target = xp.argsort(edge_keys(edges.add_dst, edges.add_src, n))
    return in_del_pos, edges.add_dst[by_target], edges.add_src[by_target]


def _check_host_memory(graph: Graph, batch_edges: int, in_place: bool) -> None:
    """Refuse a host apply that will not fit: the new CSR and transpose beside the old graph, or in
    place one new CSR at a time, plus splice_csr's scratch (kept columns, two masks) and the batch's."""
    if array_module(graph.targets) is np:
        m = graph.num_edges
        new = max(graph.offsets.nbytes + graph.targets.nbytes, graph.in_offsets.nbytes + graph.sources.nbytes) \
            if in_place else graph.nbytes
        check_host_fits(new + 6 * m + 64 * batch_edges, f"applying a batch to a graph of {m:,} edges")


def apply_batch_with_report(graph: Graph, batch: Batch) -> tuple[Graph, BatchReport]:
    """Apply a batch to a graph and report what was skipped.

    Deletions come first, then insertions (E' = (E minus deletions) union
    insertions), so an edge both deleted and inserted stays. Every vertex
    keeps (or gets) its self-loop.

    Parameters
    ----------
    graph : Graph
        The graph before the update; not modified.
    batch : Batch
        Edges to delete and insert; ids must be below ``graph.num_vertices``.

    Returns
    -------
    graph : Graph
        The updated graph (CSR and transpose).
    report : BatchReport
        Counts of applied and skipped edges.
    """
    _check_host_memory(graph, batch.deletions + batch.insertions, in_place=False)
    edges, del_pos, report, _ = _resolve(graph, batch)
    in_del_pos, in_rows, in_cols = _transpose_side(graph, edges)
    offsets, targets = splice_csr(graph.offsets, graph.targets, del_pos, edges.add_src, edges.add_dst)
    in_offsets, sources = splice_csr(graph.in_offsets, graph.sources, in_del_pos, in_rows, in_cols)
    return Graph(offsets, targets, in_offsets, sources, graph.vertex_ids), report


class GraphSlot:
    """The one reference to a graph that batches are applied to in place (:func:`apply_batch_in_place`).

    Applying a batch gives each old CSR's memory back as soon as its new one is built, so
    the old and the new graph never exist side by side: at most the graph and one CSR. The
    slot must hold the only reference to its graph (and to the graph's arrays) for that
    memory to go; take it out with :attr:`graph` only to use it, not to keep it.
    """

    def __init__(self, graph: Graph, loops_complete: bool = False):
        self._graph = graph
        # every vertex has its self-loop: known after an apply, or from the caller (a prepared graph)
        self.loops_complete = loops_complete

    @property
    def graph(self) -> Graph:
        """The graph now in the slot."""
        return self._graph

    def take(self) -> Graph:
        """Remove the graph from the slot and return it."""
        graph, self._graph = self._graph, None
        if graph is None:
            raise ValueError("the graph slot is empty (a batch applied to it failed)")
        return graph

    def put(self, graph: Graph, loops_complete: bool = False) -> None:
        """Hold ``graph`` (``loops_complete``: every vertex of it has its self-loop)."""
        self._graph, self.loops_complete = graph, loops_complete


@dataclass(frozen=True)
class Undo:
    """How to turn a graph changed by :func:`apply_batch_in_place` back into the one before
    (:func:`undo_batch_in_place`): the batch reversed, when every edge of it changed the graph
    and no self-loop was added (views of the batch's arrays: no memory of its own), else the
    exact edges removed and added."""

    reversed_batch: Batch | None
    edges: _Edges | None


def apply_batch_in_place(slot: GraphSlot, batch: Batch, *, strict: bool = False) -> tuple[BatchReport, Undo]:
    """Apply a batch to the graph in ``slot``, one CSR at a time, and put the new graph there.

    The same graph as :func:`apply_batch_with_report` gives, bit for bit; but the old out-CSR
    is given back before the transpose is spliced, and the old transpose when it is done, so
    the peak is the graph, one new CSR and splice_csr's scratch, never two graphs. This
    needs the slot to hold the only reference to the graph (on the device, the engine's
    cache of a graph's 1/d goes with the graph object).

    Parameters
    ----------
    slot : GraphSlot
        Holds the graph before the update; holds the updated one after.
    batch : Batch
        As for :func:`apply_batch_with_report`.
    strict : bool
        As for :func:`apply_batch` (raising leaves the graph in the slot unchanged).

    Returns
    -------
    report : BatchReport
    undo : Undo
        What :func:`undo_batch_in_place` needs to restore the graph before the batch.

    Warns
    -----
    BatchWarning
        As :func:`apply_batch`.
    """
    graph = slot.take()
    _check_host_memory(graph, batch.deletions + batch.insertions, in_place=True)
    edges, del_pos, report, loops_added = _resolve(graph, batch, slot.loops_complete)
    try:
        _report_skipped(report, strict)
    except ValueError:
        slot.put(graph, slot.loops_complete)
        raise
    transpose_side = _transpose_side(graph, edges)
    arrays = _csr_arrays(graph)
    del graph  # the arrays are only in the list now: each goes as soon as it is spliced
    _splice_releasing(slot, arrays, edges, del_pos, transpose_side)
    clean = not report.skipped and not loops_added
    undo = Undo(Batch(batch.ins_src, batch.ins_dst, batch.del_src, batch.del_dst), None) if clean else \
        Undo(None, _Edges(edges.add_src, edges.add_dst, edges.del_src, edges.del_dst))
    return report, undo


def undo_batch_in_place(slot: GraphSlot, undo: Undo) -> None:
    """Restore, in place and one CSR at a time, the graph that :func:`apply_batch_in_place` changed:
    the same arrays as before the batch, bit for bit (rows are kept sorted)."""
    if undo.reversed_batch is not None:
        try:
            apply_batch_in_place(slot, undo.reversed_batch, strict=True)
        except ValueError as err:
            raise ValueError(f"the graph is not the one the batch was applied to: undoing it, {err}") from None
        return
    graph = slot.take()
    found, del_pos = graph.find_edges(undo.edges.del_src, undo.edges.del_dst)
    if not bool(found.all()):
        raise ValueError("the graph is not the one the batch was applied to: an added edge is missing")
    transpose_side = _transpose_side(graph, undo.edges)
    arrays = _csr_arrays(graph)
    del graph
    # the graph before may have lacked self-loops that the batch added
    _splice_releasing(slot, arrays, undo.edges, del_pos, transpose_side, loops_complete=False)


def _csr_arrays(graph: Graph) -> list:
    """``[offsets, targets, in_offsets, sources, vertex_ids]`` of ``graph``, for :func:`_splice_releasing`."""
    return [graph.offsets, graph.targets, graph.in_offsets, graph.sources, graph.vertex_ids]


def _splice_releasing(slot: GraphSlot, arrays: list, edges: _Edges, del_pos, transpose_side,
                      loops_complete: bool = True) -> None:
    """Splice ``edges`` into the CSR of ``arrays`` (:func:`_csr_arrays`, emptied as it goes: the
    old CSR goes before the transpose is spliced, the old transpose after), and put the new graph
    in ``slot``."""
    in_del_pos, in_rows, in_cols = transpose_side
    offsets, targets = splice_csr(arrays.pop(0), arrays.pop(0), del_pos, edges.add_src, edges.add_dst)
    in_offsets, sources = splice_csr(arrays.pop(0), arrays.pop(0), in_del_pos, in_rows, in_cols)
    slot.put(Graph(offsets, targets, in_offsets, sources, arrays.pop(0)), loops_complete)


def apply_batch(graph: Graph, batch: Batch, *, strict: bool = False) -> Graph:
    """Apply a batch to a graph; every vertex keeps its self-loop.

    Parameters
    ----------
    graph : Graph
        The graph before the update; not modified.
    batch : Batch
        Edges to delete and insert (deletions first, see :func:`apply_batch_with_report`).
    strict : bool
        Raise instead of warning when a batch edge changes nothing.

    Returns
    -------
    Graph
        The updated graph.

    Raises
    ------
    ValueError
        In strict mode, if the batch deletes a missing edge or a self-loop,
        inserts a present edge, or repeats an edge; always, if an id is out of range.

    Warns
    -----
    BatchWarning
        Outside strict mode, with the counts, when such edges were skipped.
    """
    updated, report = apply_batch_with_report(graph, batch)
    _report_skipped(report, strict)
    return updated


def _report_skipped(report: BatchReport, strict: bool) -> None:
    """Warn (or in strict mode raise) when batch edges changed nothing."""
    if report.skipped:
        message = (
            f"batch edges skipped: {report.missing_deletions} deletions of missing edges, "
            f"{report.self_loop_deletions} of self-loops, {report.repeated_deletions} repeated deletions, "
            f"{report.present_insertions} insertions of present edges, "
            f"{report.repeated_insertions} repeated insertions"
        )
        if strict:
            raise ValueError(message)
        warnings.warn(message, BatchWarning, stacklevel=3)  # the caller of apply_batch(_in_place)
