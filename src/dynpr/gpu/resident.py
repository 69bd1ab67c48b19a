"""Graphs kept on the GPU between batches.

A :class:`dynpr.graph.graph.Graph` may hold CuPy arrays instead of NumPy ones. The
graph operations of :mod:`dynpr.graph.graph` run where the arrays are, so
:func:`dynpr.batches.apply_batch` on a resident graph splices the CSR and its
transpose on the device (one pass over each, plus batch-sized searches) and
returns another resident graph, and the GPU engine wraps a resident graph
without copying it (:func:`dynpr.gpu.device_graph.to_device`). Nothing graph-sized
crosses the PCIe bus after :func:`to_resident`.
"""

from __future__ import annotations

import numpy as np

from dynpr.batches import Batch
from dynpr.gpu import loader
from dynpr.graph.graph import Graph, on_device, to_host
from dynpr.graph.npz_files import chunks

_FIELDS = ("offsets", "targets", "in_offsets", "sources")


def upload(array, dtype=None, *, copy: bool = False):
    """A device copy of a host array, as ``dtype`` when given (a CuPy array stays where it is,
    copied only with ``copy``: for a buffer the caller will overwrite).

    ``cupy.asarray`` stages a host array in pinned memory of its size, which CuPy's
    pinned pool then keeps for the life of the process: uploading R-MAT 26 that way
    peaked at 27.0 GiB of host RSS and took 17 s, straight from the pageable arrays
    10.1 GiB and 1.3 s (H100 host, ``bench_scale.py``).
    """
    cupy = loader.require_cupy()
    if isinstance(array, cupy.ndarray):
        return array.astype(dtype or array.dtype, copy=copy)
    array = np.ascontiguousarray(array, dtype=dtype)
    device = cupy.empty(array.shape, dtype=array.dtype)
    if array.ndim != 1:
        device.set(array)
        return device
    sent = 0
    for part in chunks(array):  # a mapped array's pages leave the resident set as they are sent
        device[sent:sent + len(part)].set(part)
        sent += len(part)
    return device


def to_resident(graph: Graph) -> Graph:
    """The graph with its CSR and transpose copied to the device (``vertex_ids`` stay on the host).

    Raises
    ------
    RuntimeError
        If CuPy or a CUDA device is missing.
    """
    return Graph(*(upload(getattr(graph, name)) for name in _FIELDS), graph.vertex_ids)


def to_host_graph(graph: Graph) -> Graph:
    """The graph with its arrays on the host (the same object when they already are)."""
    arrays = [getattr(graph, name) for name in _FIELDS]
    if not any(on_device(a) for a in arrays):
        return graph
    return Graph(*(to_host(a) for a in arrays), graph.vertex_ids)


def to_resident_batch(batch: Batch) -> Batch:
    """The batch with its arrays copied to the device, for :func:`dynpr.batches.apply_batch` on a
    resident graph and every GPU run on it (one upload per batch instead of one per use)."""
    return Batch(*(upload(a) for a in batch.arrays()))
