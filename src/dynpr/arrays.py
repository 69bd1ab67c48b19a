"""The array conventions every module shares: vertex and offset dtypes, and where an array lives.

A graph or batch may live on the host (NumPy) or on the device (CuPy, :mod:`dynpr.gpu.resident`);
these helpers say which and move arrays across. They sit below :mod:`dynpr.graph` so that the
checks of :mod:`dynpr.csr_checks` use them without depending on the graph type.
"""

from __future__ import annotations

import numbers
from dataclasses import fields

import numpy as np

VERTEX_DTYPE = np.int32
OFFSET_DTYPE = np.int64
MAX_VERTICES = int(np.iinfo(VERTEX_DTYPE).max)


def array_module(a):
    """``numpy``, or ``cupy`` for a CuPy array: a :class:`Graph` may hold either (see :mod:`dynpr.gpu.resident`)."""
    if type(a).__module__.split(".")[0] == "cupy":
        import cupy

        return cupy
    return np


def on_device(a) -> bool:
    """Whether ``a`` is a CuPy array."""
    return array_module(a) is not np


def to_host(a) -> np.ndarray:
    """A NumPy array of ``a`` (copied from the device when it is a CuPy array)."""
    return a.get() if on_device(a) else np.asarray(a)


def as_array(xp, a):
    """``a`` as an array of module ``xp`` (numpy or cupy), copied across the bus when it lives elsewhere."""
    return to_host(a) if xp is np else xp.asarray(a)


def array_fields(record) -> dict:
    """A dataclass's array fields by name: every field but its integer counts and sizes (the layouts
    of :mod:`dynpr.locality`, :mod:`dynpr.blocking` and :mod:`dynpr.shards`)."""
    return {f.name: value for f in fields(record)
            if not isinstance(value := getattr(record, f.name), numbers.Integral)}


def ranks_within(lengths: np.ndarray) -> np.ndarray:
    """0, 1, ..., k-1 for each length k of ``lengths`` (host), concatenated: each entry's place in its run."""
    ends = np.cumsum(lengths)
    return np.arange(int(ends[-1]) if ends.size else 0) - np.repeat(ends - lengths, lengths)
