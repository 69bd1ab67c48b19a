"""Batches that exercise every case of applying one: shared by the copying and in-place apply tests."""

import numpy as np

from dynpr.batches import Batch


def messy_batch(graph, rng) -> Batch:
    """Real edges and random pairs, self-loops, repeats, and edges both deleted and inserted."""
    n = graph.num_vertices
    src, dst = graph.edges()
    pick = rng.integers(0, graph.num_edges, 10)
    del_src = np.concatenate([src[pick], rng.integers(0, n, 10)])
    del_dst = np.concatenate([dst[pick], rng.integers(0, n, 10)])
    ins_src = np.concatenate([rng.integers(0, n, 15), src[pick[:3]], del_src[:4]])
    ins_dst = np.concatenate([rng.integers(0, n, 15), dst[pick[:3]], del_dst[:4]])
    return Batch(del_src, del_dst, ins_src, ins_dst)
