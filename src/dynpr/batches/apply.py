"""Applying a batch: :func:`apply_batch` splices the affected CSR rows of a
:class:`~dynpr.graph.graph.Graph` (graph and transpose) in one pass, without building the int64
keys of every edge."""

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
    n = graph.num_vertices
    check_batch(batch, n)
    xp = array_module(graph.targets)
    # the new CSR and transpose, plus splice_csr's scratch (kept columns, two masks)
    if xp is np:
        check_host_fits(graph.nbytes + 6 * graph.num_edges + 64 * (batch.deletions + batch.insertions),
                        f"applying a batch to a graph of {graph.num_edges:,} edges")
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
    loop_keys = xp.flatnonzero(graph.self_loop_positions < 0) * np.int64(n + 1)
    added = unique_sorted(xp.concatenate([new, loop_keys]))
    add_src, add_dst = split_keys(added, n)

    offsets, targets = splice_csr(graph.offsets, graph.targets, del_pos, add_src, add_dst)
    # the transpose's order: by (target, source), one sort of unique keys
    by_target = xp.argsort(edge_keys(del_dst, del_src, n))
    _, in_del_pos = graph.find_in_edges(del_dst[by_target], del_src[by_target])
    by_target = xp.argsort(edge_keys(add_dst, add_src, n))
    in_offsets, sources = splice_csr(graph.in_offsets, graph.sources, in_del_pos,
                                     add_dst[by_target], add_src[by_target])
    report = BatchReport(
        deleted=len(del_pos),
        inserted=len(new),
        missing_deletions=int(xp.count_nonzero(~found)),
        present_insertions=len(ins_unique) - len(new),
        repeated_deletions=len(del_keys) - len(del_unique),
        repeated_insertions=batch.insertions - len(ins_unique),
        self_loop_deletions=int(xp.count_nonzero(loops)),
    )
    return Graph(offsets, targets, in_offsets, sources, graph.vertex_ids), report


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
    if report.skipped:
        message = (
            f"batch edges skipped: {report.missing_deletions} deletions of missing edges, "
            f"{report.self_loop_deletions} of self-loops, {report.repeated_deletions} repeated deletions, "
            f"{report.present_insertions} insertions of present edges, "
            f"{report.repeated_insertions} repeated insertions"
        )
        if strict:
            raise ValueError(message)
        warnings.warn(message, BatchWarning, stacklevel=2)
    return updated
