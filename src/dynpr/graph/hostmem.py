"""How much host memory there is, what building a graph needs of it, a check before allocating a
graph-sized amount, and the process's peak resident memory (for logs and benchmarks)."""

from __future__ import annotations

import math
import os
from pathlib import Path

GIB = float(1 << 30)

#: Host bytes per edge record and per vertex that :func:`dynpr.io.prepare.build_graph` allocates at its
#: peak (the int64 keys and their sort, the CSR and its transpose with their scratch, the stats);
#: ``tests/test_bounds.py`` measures both against this model.
BUILD_BYTES_PER_RECORD, BUILD_BYTES_PER_VERTEX = 80, 88
#: The CPU PageRank engine's SciPy matrix (int32 indices and float64 values of the transpose) per edge, and
#: its rank, contribution and flag vectors per vertex: beyond the graph, what a CPU run allocates, checked
#: before it does (:mod:`dynpr.pagerank.cpu`) and modelled for the pipeline (:mod:`dynpr.pipeline.footprint`).
CPU_ENGINE_BYTES_PER_EDGE, CPU_ENGINE_BYTES_PER_VERTEX = 28, 96


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


def build_bytes(records: int, vertices: int) -> int:
    """Peak host bytes of building a graph of ``vertices`` from ``records`` edge records (the model
    :func:`dynpr.io.prepare.build_graph` and the readers check before allocating)."""
    return BUILD_BYTES_PER_RECORD * records + BUILD_BYTES_PER_VERTEX * vertices


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


def status_gib() -> dict[str, float]:
    """The ``Vm*`` and ``Rss*`` sizes of ``/proc/self/status`` in GiB, by name (``VmRSS``, ``RssFile``,
    ``RssAnon``, ``VmHWM``, ...; empty where the file is missing)."""
    try:
        lines = Path("/proc/self/status").read_text().splitlines()
    except OSError:
        return {}
    return {line.split(":")[0]: int(line.split()[1]) * 1024 / GIB for line in lines
            if line.startswith(("Vm", "Rss")) and line.rstrip().endswith("kB")}


def peak_rss_gib() -> float:
    """The process's peak resident set since start or :func:`reset_peak_rss`, in GiB (NaN where
    ``/proc/self/status`` is missing)."""
    return status_gib().get("VmHWM", math.nan)


def rss_line() -> str:
    """``host RSS 1.20 GiB (files 0.10, own 1.10), peak 2.40 GiB``: what the process holds now, split
    into mapped files' pages and its own memory, and its peak (``host RSS not measured`` without
    ``/proc/self/status``)."""
    status = status_gib()
    if "VmRSS" not in status:
        return "host RSS not measured"
    return (f"host RSS {status['VmRSS']:.2f} GiB (files {status.get('RssFile', math.nan):.2f}, own "
            f"{status.get('RssAnon', math.nan):.2f}), peak {status.get('VmHWM', math.nan):.2f} GiB")
