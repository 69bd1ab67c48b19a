"""The tiny case that the default engine (:mod:`dynpr.gpu.pagerank`) and the baselines
(:mod:`dynpr.gpu.baselines`) each run once, so that compilation and module loading stay out
of every timed call."""

from __future__ import annotations

import functools

import numpy as np

from dynpr.batches import Batch
from dynpr.gpu.device_graph import to_device
from dynpr.graph.graph import Graph


@functools.cache
def tiny_case():
    """(graph, old graph, batch, starting ranks) of six vertices with a hub, on the device, for warm-ups."""
    src = np.array([0, 1, 2, 3, 4, 5, 1, 2, 3], dtype=np.int32)
    dst = np.array([1, 2, 3, 4, 5, 0, 0, 0, 0], dtype=np.int32)
    old = Graph.from_edges(src, dst)
    new = Graph.from_edges(src[1:], dst[1:], old.num_vertices)
    batch = Batch(src[:1], dst[:1], np.empty(0, np.int32), np.empty(0, np.int32))
    start = np.full(old.num_vertices, 1.0 / old.num_vertices)
    return to_device(new), to_device(old), batch, start
