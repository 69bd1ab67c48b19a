"""Safe GPU assignment for concurrent Snakemake jobs on one host.

``snakemake --resources gpu=K`` only bounds how many GPU jobs run at once; it
does not tell a job *which* device to use, so two jobs started together would
both land on device 0. :func:`claim_device` closes that gap: each job takes an
exclusive ``flock`` on a per-device lock file and then restricts itself to the
device it won by setting ``CUDA_VISIBLE_DEVICES``.

CUDA reads ``CUDA_VISIBLE_DEVICES`` once, when the driver initialises in a
process, so :func:`claim_device` must run before anything touches CUDA
(``cupy.cuda.runtime.*``, ``cupy.asarray``, :func:`dynpr.backend.gpu_available`).
Importing CuPy alone is harmless. The run script therefore enters
``with claim_device():`` first thing.

The OS drops an ``flock`` when its file descriptor closes, which includes the
holder crashing or being killed, so a dead job never leaves a device locked.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import logging
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, Iterator

log = logging.getLogger(__name__)

#: Lock directory used when neither the ``lock_dir`` argument nor ``DYNPR_LOCK_DIR`` is given.
DEFAULT_LOCK_DIR = "results/.locks"
#: Seconds to wait for a free device when neither ``timeout`` nor ``DYNPR_DEVICE_TIMEOUT`` is given.
DEFAULT_TIMEOUT_S = 600.0


def visible_devices() -> list[str]:
    """The device ids this process may use, in the order they are tried.

    Returns
    -------
    list of str
        From ``CUDA_VISIBLE_DEVICES`` when it is set (a Slurm allocation or the
        user set it; entries may be indices or ``GPU-``/``MIG-`` UUIDs), else
        from ``DYNPR_DEVICES`` (a comma list, used to test with a fake device
        list on a machine without a GPU), else ``0 .. count-1`` where count is
        what CuPy reports. Empty when no device is visible or CuPy is missing.

    Notes
    -----
    The CuPy count is taken in a child process: asking CUDA in this process
    would initialise the driver and freeze ``CUDA_VISIBLE_DEVICES`` before
    :func:`claim_device` could narrow it.
    """
    for var in ("CUDA_VISIBLE_DEVICES", "DYNPR_DEVICES"):
        value = os.environ.get(var)
        if value is not None:
            return [d.strip() for d in value.split(",") if d.strip()]
    return [str(i) for i in range(_cuda_device_count())]


def _cuda_device_count() -> int:
    """Number of CUDA devices CuPy sees, asked in a child process; 0 without CuPy or a driver."""
    probe = "import cupy; print(cupy.cuda.runtime.getDeviceCount())"
    try:
        done = subprocess.run(
            [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return 0
    # A failed probe (no CuPy, no driver) means no usable GPU, not an error: CPU runs still claim.
    return int(done.stdout.strip()) if done.returncode == 0 and done.stdout.strip().isdigit() else 0


def _lock_name(device: str) -> str:
    """Lock file name for one device.

    The host name keeps nodes sharing a lock directory on a network file system
    apart. The Slurm job id does the same for separate Slurm jobs on one node:
    Slurm may renumber each job's GPUs from 0, so "device 0" in two jobs can be
    two different GPUs, while jobs started by one Snakemake inside a single
    allocation share the job id and so share (and contend for) the locks.
    """
    parts = [socket.gethostname()]
    job = os.environ.get("SLURM_JOB_ID")
    if job:
        parts.append(f"slurm{job}")
    parts.append(f"gpu{device}")
    return "-".join(p.replace("/", "_") for p in parts) + ".lock"


def _try_lock(path: Path) -> int | None:
    """Open ``path`` and take a non-blocking exclusive flock; the fd on success, None when held."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        os.close(fd)
        if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            return None
        raise
    return fd


@contextlib.contextmanager
def claim_device(
    *,
    lock_dir: str | Path | None = None,
    timeout: float | None = None,
    poll_interval: float = 0.5,
    report: Callable[[str], None] | None = None,
) -> Iterator[str | None]:
    """Claim one visible GPU exclusively for the duration of the ``with`` block.

    Devices are tried in the order of :func:`visible_devices`; the first whose
    lock file can be locked (``flock``, exclusive, non-blocking) is taken. When
    all are held, the call polls every ``poll_interval`` seconds until one frees
    up or ``timeout`` passes. Inside the block ``CUDA_VISIBLE_DEVICES`` is the
    claimed id, so CUDA in this process (and its children) sees exactly that
    device as device 0; the previous value is restored on exit.

    Call it before anything initialises CUDA in the process (see the module
    docstring): CUDA ignores later changes to ``CUDA_VISIBLE_DEVICES``.

    Parameters
    ----------
    lock_dir : str or Path, optional
        Directory of the lock files; default ``DYNPR_LOCK_DIR`` or
        ``results/.locks`` (relative to the working directory, which for
        Snakemake jobs is the workflow directory, so all jobs share it).
    timeout : float, optional
        Seconds to wait for a free device; default ``DYNPR_DEVICE_TIMEOUT`` or 600.
    poll_interval : float
        Seconds between attempts while every device is held.
    report : callable, optional
        Also receives each message (claimed, waiting, released, with the wall
        clock time), e.g. the run script's log function, so the job log shows
        which GPU the job held and when.

    Yields
    ------
    str or None
        The claimed device id as listed in :func:`visible_devices`, or None when
        no device is visible at all (a CPU-only machine): then nothing is locked
        and the environment is left alone, so CPU runs can use the same code.

    Raises
    ------
    TimeoutError
        When no device frees up within ``timeout``; the message names the lock
        directory and the devices.
    """

    def say(message: str) -> None:
        log.info(message)
        if report is not None:
            report(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {message}")

    devices = visible_devices()
    if not devices:
        say("no GPU visible (CUDA_VISIBLE_DEVICES, DYNPR_DEVICES, CuPy): no device claimed")
        yield None
        return

    lock_dir = Path(lock_dir or os.environ.get("DYNPR_LOCK_DIR") or DEFAULT_LOCK_DIR)
    if timeout is None:
        timeout = float(os.environ.get("DYNPR_DEVICE_TIMEOUT", DEFAULT_TIMEOUT_S))
    lock_dir.mkdir(parents=True, exist_ok=True)

    deadline = time.monotonic() + timeout
    waited = False
    while True:
        for device in devices:
            fd = _try_lock(lock_dir / _lock_name(device))
            if fd is not None:
                break
        else:
            if time.monotonic() >= deadline:
                raise TimeoutError(
                    f"no GPU free among devices {','.join(devices)} after {timeout:g} s: every lock in "
                    f"{lock_dir.resolve()} is held by another job (see the pids inside the lock files); "
                    f"run at most --resources gpu={len(devices)} GPU jobs at once on this host, "
                    "or raise DYNPR_DEVICE_TIMEOUT"
                )
            if not waited:
                say(f"all {len(devices)} GPUs busy (locks in {lock_dir}); waiting up to {timeout:g} s")
                waited = True
            time.sleep(poll_interval)
            continue
        break

    previous = os.environ.get("CUDA_VISIBLE_DEVICES")
    try:
        # Record the holder for whoever inspects the lock directory; the lock itself is the flock, not this text.
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()} host {socket.gethostname()} since {time.time():.0f}\n".encode(), 0)
        os.environ["CUDA_VISIBLE_DEVICES"] = device
        say(f"claimed GPU {device} (pid {os.getpid()}, lock {lock_dir / _lock_name(device)})")
        yield device
    finally:
        if previous is None:
            os.environ.pop("CUDA_VISIBLE_DEVICES", None)
        else:
            os.environ["CUDA_VISIBLE_DEVICES"] = previous
        # Closing the descriptor releases the flock; the file stays for the next job to reuse.
        os.close(fd)
        say(f"released GPU {device} (pid {os.getpid()})")
