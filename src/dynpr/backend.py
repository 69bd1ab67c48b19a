"""Choosing the compute backend: ``cpu`` (NumPy/SciPy) or ``gpu`` (CuPy)."""

from __future__ import annotations

import functools
import platform
from pathlib import Path

from dynpr.errors import InputError, NoGpuError

BACKENDS = ("auto", "cpu", "gpu")


@functools.cache
def gpu_available() -> bool:
    """True when CuPy imports and sees at least one CUDA device (the check of
    :func:`dynpr.gpu.loader.require_cupy`, as a yes or no)."""
    from dynpr.gpu.loader import require_cupy

    try:
        require_cupy()
    except RuntimeError:
        return False
    return True


def resolve_backend(name: str) -> str:
    """Map ``auto|cpu|gpu`` to ``cpu`` or ``gpu``; ``gpu`` without a device is an error."""
    if name not in BACKENDS:
        raise InputError(f"backend must be one of {BACKENDS}, got {name!r}")
    if name == "auto":
        return "gpu" if gpu_available() else "cpu"
    if name == "gpu" and not gpu_available():
        raise NoGpuError(
            "backend 'gpu' was asked for but CuPy or a CUDA device is missing; "
            "install the 'gpu' extra (pip install 'dynpr[gpu]') on a machine with an NVIDIA GPU, or ask for "
            "backend 'cpu' (or 'auto', which runs on the CPU when no GPU is usable)"
        )
    return name


def device_name(backend: str) -> str:
    """A human-readable name of the device a backend runs on."""
    if backend == "gpu":
        import cupy

        props = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)
        return props["name"].decode()
    return _cpu_model()


@functools.cache
def _cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo (Linux), else the platform's name."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "cpu"
