"""Helpers for workflow scripts: a progress log and one-line failures for each Snakemake job.

Kept apart from the experiment code (and free of NumPy and the PageRank stack) so
that every script under ``workflow/scripts/`` can import it cheaply.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import Callable, Iterator

from dynpr.errors import InputError

Log = Callable[[str], None]


def no_log(message: str) -> None:
    """Default progress sink: drop the message."""


def no_lap(phase: str) -> None:
    """Default phase clock (:meth:`JobLog.lap`): book nothing."""


def process_start() -> float:
    """When this process started, as a :func:`time.time` value: its start tick in ``/proc/self/stat``
    against the uptime (Linux), so that interpreter start and imports count; elsewhere now."""
    try:
        ticks = int(Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()[19])
        uptime = float(Path("/proc/uptime").read_text().split()[0])
        return time.time() - (uptime - ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return time.time()


class JobLog:
    """A job's log file and where its wall time goes.

    Calling it appends a line (flushed, so progress shows while the job runs). :meth:`lap`
    books the time since the previous lap (or since the process started) to a phase;
    :meth:`breakdown` is the one-line sum that ends the log of a job that succeeds.
    """

    def __init__(self, path: str | Path | None):
        self._handle = open(path, "a", buffering=1) if path else None
        self._start = self._last = process_start()
        self._seconds: dict[str, float] = {}

    def __call__(self, message: str) -> None:
        if self._handle:
            print(message, file=self._handle, flush=True)

    def lap(self, phase: str) -> None:
        """Book the seconds since the previous lap to ``phase`` (added up when it recurs)."""
        now = time.time()
        self._seconds[phase] = self._seconds.get(phase, 0.0) + now - self._last
        self._last = now

    def breakdown(self) -> str:
        """``wall time T s: phase t, ..., other t`` in booking order; with ``(GPU kernel builds t)``
        when the job built or loaded CUDA modules (:func:`dynpr.gpu.loader.build_seconds`, inside
        whichever phase built them)."""
        now = time.time()
        parts = [f"{phase} {seconds:.2f}" for phase, seconds in self._seconds.items()]
        parts.append(f"other {now - self._last:.2f}")
        # only a job that may use the GPU imported the loader; importing it here would cost every other job
        loader = sys.modules.get("dynpr.gpu.loader")
        built = loader.build_seconds() if loader else 0.0
        builds = f" (GPU kernel builds {built:.2f} s of it)" if built else ""
        return f"wall time {now - self._start:.2f} s: {', '.join(parts)}{builds}"

    def close(self) -> None:
        if self._handle:
            self._handle.close()


def read_input(path: str | Path, reader: Callable):
    """``reader(path)``, with any failure reworded to name the file and the fix.

    Raises
    ------
    ValueError
        ``<path>: cannot be read (<reason>); delete it and rerun snakemake to rebuild it``.
    """
    try:
        return reader(path)
    except Exception as exc:  # a truncated or foreign file fails in many ways; all mean the same fix
        raise ValueError(f"{path}: cannot be read ({type(exc).__name__}: {exc}); "
                         "delete it and rerun snakemake to rebuild it") from exc


#: seconds between checks that the Snakemake process that started a job still runs
WATCH_PARENT_S = 2.0


def _ancestor(name: str) -> int | None:
    """The nearest ancestor process whose command line mentions ``name`` (None without ``/proc``)."""
    pid = os.getppid()
    while pid > 1:
        try:
            if name.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                return pid
            pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            return None
    return None


def stop_with(pid: int | None) -> None:
    """Send this process SIGTERM once ``pid`` is gone (a thread): a job whose Snakemake was killed
    (``kill -9``) stops too, removing its temporary files, instead of running on unseen."""
    if pid is None or threading.current_thread() is not threading.main_thread():
        return

    def watch() -> None:
        while Path(f"/proc/{pid}").exists():
            threading.Event().wait(WATCH_PARENT_S)
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, name="dynpr-watch-snakemake", daemon=True).start()


@contextlib.contextmanager
def script_errors(rule: str, target: str, log_path: str | Path | None) -> Iterator[JobLog]:
    """Run a workflow script's body; turn any failure into one clear line and exit 1.

    Yields the job's :class:`JobLog`: calling it appends a line to the log file (and flushes it), so
    progress shows while the job runs; its ``lap`` books phases. A job that succeeds ends its log with
    its peak resident set (``VmHWM``) and then where its wall time went (:meth:`JobLog.breakdown`,
    counted from the process's start). On an exception the full traceback goes
    to the log and ``dynpr: <rule> for <target>: <message>`` goes to the log and
    to stderr, which is what Snakemake shows the user; Ctrl-C ends it with one line and exit 130.

    Parameters
    ----------
    rule : str
        The Snakemake rule name.
    target : str
        What the job is for (usually the dataset).
    log_path : str or Path or None
        The job's log file (``snakemake.log[0]``).
    """
    from dynpr.graph.atomic_files import exit_on_sigterm
    from dynpr.graph.hostmem import peak_rss_gib
    from dynpr.graph.npz_files import exit_on_bus_error

    exit_on_sigterm()  # a job Snakemake stops with SIGTERM still removes its temporary files
    exit_on_bus_error()  # a graph or batch file truncated under the job: one line naming it
    stop_with(_ancestor("snakemake"))
    log = JobLog(log_path)
    try:
        yield log
        # exact, where Snakemake's max_rss samples every 30 s after a job's first 15 s
        log(f"{rule} for {target}: peak host RSS {peak_rss_gib():.2f} GiB (high-water mark)")
        log(f"{rule} for {target}: {log.breakdown()}")
    except Exception as exc:  # every failure becomes one line for the user
        line = f"dynpr: {rule} for {target}: {describe(exc)}"
        log(traceback.format_exc().rstrip())
        log(line)
        print(line, file=sys.stderr, flush=True)
        raise SystemExit(1) from None
    except KeyboardInterrupt:  # Ctrl-C reaches the jobs too: one line, not a traceback each
        log(f"dynpr: {rule} for {target}: interrupted")
        print(f"dynpr: {rule} for {target}: interrupted", file=sys.stderr, flush=True)
        raise SystemExit(130) from None
    finally:
        log.close()


def describe(exc: BaseException) -> str:
    """``<type>: <message>`` of a job's failure on one line; CuPy running out of device memory (after the
    job's own plan let it start) is said as such, with what to change."""
    message = " ".join(str(exc).split()) or ("not enough memory" if isinstance(exc, MemoryError) else "(no message)")
    if type(exc).__name__ == "OutOfMemoryError" and type(exc).__module__.startswith("cupy"):
        return (f"the GPU ran out of memory ({message}): leave out the largest batch fractions or use a GPU "
                "with more memory (the job's log has the plan and the traceback)")
    return f"{type(exc).__name__}: {message}"


def fraction_label(fraction: float) -> str:
    """The batch fraction as it appears in paths, wildcards and logs (``1e-05``, ``0.001``)."""
    return f"{float(fraction):g}"


def check_fraction_labels(config: dict, source: str = "config") -> None:
    """Refuse two batch fractions of one experiment that share a file label (:func:`fraction_label`
    keeps 6 significant digits): their batches and runs would be one file.

    Raises
    ------
    InputError
        ``<source>: random.batch_fractions: 0.001 and 0.0010000001 share the file label 0.001 ...``.
    """
    for kind in ("temporal", "random"):
        seen: dict[str, float] = {}
        for fraction in (config.get(kind) or {}).get("batch_fractions") or []:
            label = fraction_label(fraction)
            if label in seen:
                clash = (f"{fraction!r} is given twice" if seen[label] == fraction else
                         f"{seen[label]!r} and {fraction!r} share the file label {label} (batch and run files name "
                         "a fraction by its first 6 significant digits); give fractions that differ within them")
                raise InputError(f"{source}: {kind}.batch_fractions: {clash}")
            seen[label] = fraction


def gpu_machine_missing(reason: str) -> str:
    """One line when ``reason`` (the run's GPU work: the config's, or rule bench) meets a machine without a
    usable CUDA device, else "".

    The probe runs in a child process, so the Snakemake process itself never holds a CUDA
    context on a device its GPU jobs claim (docs/scaling.md).
    """
    import subprocess

    probe = ("import sys; from dynpr.backend import gpu_available; "
             "sys.exit(0 if gpu_available() else 3)")
    if subprocess.run([sys.executable, "-c", probe], capture_output=True).returncode == 0:
        return ""
    return (f"dynpr: this run asks for GPU work ({reason}) but CuPy sees no CUDA device here; run it on a GPU "
            "machine with the 'gpu' extra installed, or leave it out (backend: auto/cpu, compare_backends: false, "
            "no bench target)")
