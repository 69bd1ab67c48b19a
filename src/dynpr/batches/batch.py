"""The batch type: one update of a graph, its edge deletions and insertions.

Every batch module builds on it: :mod:`dynpr.batches.make` draws batches,
:mod:`dynpr.batches.store` writes and reads batch files, :mod:`dynpr.batches.apply`
applies a batch to a graph.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dynpr.graph.arrays import VERTEX_DTYPE, array_module, on_device, to_host
from dynpr.errors import BatchError
from dynpr.graph.validate import as_vertex_ids

FIELDS = ("del_src", "del_dst", "ins_src", "ins_dst")


@dataclass(frozen=True, eq=False)
class Batch:
    """One batch update: int32 arrays of deleted and inserted edges.

    Ids of any integer dtype are accepted and range-checked in that dtype
    before the cast to int32, so a too-large id is refused, never wrapped.
    The arrays are NumPy's, or CuPy's for a batch kept on the GPU
    (:func:`dynpr.gpu.resident.to_resident_batch`).
    """

    del_src: np.ndarray
    del_dst: np.ndarray
    ins_src: np.ndarray
    ins_dst: np.ndarray

    def __post_init__(self):
        for name in FIELDS:
            try:
                object.__setattr__(self, name, as_vertex_ids(f"batch {name}", getattr(self, name)))
            except ValueError as err:
                raise BatchError(str(err)) from None
        if len(self.del_src) != len(self.del_dst) or len(self.ins_src) != len(self.ins_dst):
            raise BatchError("batch source and target arrays differ in length")

    @classmethod
    def empty(cls) -> "Batch":
        """A batch with no deletions and no insertions."""
        e = np.empty(0, dtype=VERTEX_DTYPE)
        return cls(e, e, e, e)

    def arrays(self) -> tuple:
        """``(del_src, del_dst, ins_src, ins_dst)``."""
        return tuple(getattr(self, name) for name in FIELDS)

    def to_host(self) -> "Batch":
        """This batch with its arrays on the host (itself when they are)."""
        if not any(on_device(a) for a in self.arrays()):
            return self
        return Batch(*(to_host(a) for a in self.arrays()))

    @property
    def deletions(self) -> int:
        """Number of edge deletions."""
        return len(self.del_src)

    @property
    def insertions(self) -> int:
        """Number of edge insertions."""
        return len(self.ins_src)


def split_keys(keys: np.ndarray, num_vertices: int) -> tuple[np.ndarray, np.ndarray]:
    """Sources and targets (int32) of edge keys ``src * num_vertices + dst`` (:func:`dynpr.graph.graph.edge_keys`)."""
    src, dst = array_module(keys).divmod(keys, np.int64(num_vertices))
    return src.astype(VERTEX_DTYPE), dst.astype(VERTEX_DTYPE)
