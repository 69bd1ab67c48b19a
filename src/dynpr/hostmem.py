"""How much host memory there is, a check before allocating a graph-sized amount of it, and the
process's peak resident memory (for benchmarks that report memory next to time)."""

from __future__ import annotations

import math
import os
from pathlib import Path

GIB = float(1 << 30)


def available_bytes() -> int:
    """Host memory available to a new allocation: ``MemAvailable`` of ``/proc/meminfo``.

    Where that file is missing (not Linux), the physical memory size from ``sysconf``.
    """
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def check_host_fits(needed: int, what: str = "graph") -> None:
    """Stop with one line before allocating ``needed`` bytes that the host does not have.

    Parameters
    ----------
    needed : int
        Modelled peak bytes of the step.
    what : str
        What needs them, first word of the message.

    Raises
    ------
    MemoryError
        ``<what> needs X GiB of host memory, Y GiB available``.
    """
    have = available_bytes()
    if needed > have:
        raise MemoryError(f"{what} needs {needed / GIB:.2f} GiB of host memory, {have / GIB:.2f} GiB available")


def reset_peak_rss() -> None:
    """Restart the process's peak resident set (``VmHWM``) from its current size (Linux >= 4.0;
    a no-op elsewhere), so that :func:`peak_rss_gib` measures one stage."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        pass


def peak_rss_gib() -> float:
    """The process's peak resident set since start or :func:`reset_peak_rss`, in GiB (NaN where
    ``/proc/self/status`` is missing)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024 / GIB
    except OSError:
        pass
    return math.nan
