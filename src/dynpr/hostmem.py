"""How much host memory there is, and a check before allocating a graph-sized amount of it."""

from __future__ import annotations

import os

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
