"""Batch updates: edge deletions and insertions, how they are made, stored and applied.

The paper (section 5.1.4) makes temporal slices and random 80/20 batches
(:mod:`dynpr.batches.make`); batch files hold a sequence of them with the parameters
that made them (:mod:`dynpr.batches.store`); :func:`apply_batch` splices them into a
graph (:mod:`dynpr.batches.apply`). Every public name is importable from here.
"""

from dynpr.batches.apply import (BatchReport, BatchWarning, GraphSlot, Undo, apply_batch, apply_batch_in_place,
                                 apply_batch_with_report, undo_batch_in_place)
from dynpr.batches.batch import Batch
from dynpr.batches.make import (TemporalStats, batch_rng, random_batch, random_batch_sizes, temporal_base,
                                temporal_batches)
from dynpr.batches.store import batch_file_edges, read_batch_params, read_batches, write_batches

__all__ = [
    "Batch", "BatchReport", "BatchWarning", "GraphSlot", "TemporalStats", "Undo", "apply_batch",
    "apply_batch_in_place", "apply_batch_with_report", "undo_batch_in_place",
    "batch_file_edges", "batch_rng", "random_batch", "random_batch_sizes", "read_batch_params", "read_batches",
    "temporal_base", "temporal_batches", "write_batches",
]
