"""The array conventions every module shares: vertex and offset dtypes, and where an array lives.

A graph or batch may live on the host (NumPy) or on the device (CuPy, :mod:`dynpr.gpu.resident`);
these helpers say which and move arrays across. They sit below :mod:`dynpr.graph.graph` so that the
checks of :mod:`dynpr.graph.csr_checks` use them without depending on the graph type.
"""

from __future__ import annotations

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
