"""Batch updates: edge deletions and insertions applied to a graph."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dynpr.fileio import atomic_path
from dynpr.graph import VERTEX_DTYPE

_FIELDS = ("del_src", "del_dst", "ins_src", "ins_dst")


@dataclass(frozen=True, eq=False)
class Batch:
    """One batch update: int32 arrays of deleted and inserted edges."""

    del_src: np.ndarray
    del_dst: np.ndarray
    ins_src: np.ndarray
    ins_dst: np.ndarray

    def __post_init__(self):
        for name in _FIELDS:
            object.__setattr__(self, name, np.ascontiguousarray(getattr(self, name), dtype=VERTEX_DTYPE))
        if len(self.del_src) != len(self.del_dst) or len(self.ins_src) != len(self.ins_dst):
            raise ValueError("batch source and target arrays differ in length")

    @classmethod
    def empty(cls) -> "Batch":
        e = np.empty(0, dtype=VERTEX_DTYPE)
        return cls(e, e, e, e)

    @property
    def deletions(self) -> int:
        return len(self.del_src)

    @property
    def insertions(self) -> int:
        return len(self.ins_src)

    def save(self, path: str | Path, **params) -> None:
        """Write the batch and the parameters that made it to ``.npz``, atomically."""
        with atomic_path(path) as tmp:
            with open(tmp, "wb") as fh:
                np.savez(fh, **{n: getattr(self, n) for n in _FIELDS},
                         **{f"param_{k}": np.asarray(v) for k, v in params.items()})

    @classmethod
    def load(cls, path: str | Path) -> "Batch":
        with np.load(path) as data:
            missing = [n for n in _FIELDS if n not in data]
            if missing:
                raise ValueError(f"{path}: not a batch file (missing {', '.join(missing)})")
            return cls(*(data[n] for n in _FIELDS))
