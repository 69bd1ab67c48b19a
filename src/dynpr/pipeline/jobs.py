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
import traceback
from pathlib import Path
from typing import Callable, Iterator

from dynpr.errors import InputError

Log = Callable[[str], None]


def no_log(message: str) -> None:
    """Default progress sink: drop the message."""


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
def script_errors(rule: str, target: str, log_path: str | Path | None) -> Iterator[Log]:
    """Run a workflow script's body; turn any failure into one clear line and exit 1.

    Yields a function that appends a line to the log file (and flushes it), so
    progress shows while the job runs; a job that succeeds ends its log with its
    peak resident set (``VmHWM``). On an exception the full traceback goes
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

    exit_on_sigterm()  # a job Snakemake stops with SIGTERM still removes its temporary files
    stop_with(_ancestor("snakemake"))
    handle = open(log_path, "a", buffering=1) if log_path else None

    def log(message: str) -> None:
        if handle:
            print(message, file=handle, flush=True)

    try:
        yield log
        # exact, where Snakemake's max_rss samples every 30 s after a job's first 15 s
        log(f"{rule} for {target}: peak host RSS {peak_rss_gib():.2f} GiB (high-water mark)")
    except Exception as exc:  # every failure becomes one line for the user
        line = f"dynpr: {rule} for {target}: {describe(exc)}"
        if handle:
            handle.write(traceback.format_exc())
        log(line)
        print(line, file=sys.stderr, flush=True)
        raise SystemExit(1) from None
    except KeyboardInterrupt:  # Ctrl-C reaches the jobs too: one line, not a traceback each
        log(f"dynpr: {rule} for {target}: interrupted")
        print(f"dynpr: {rule} for {target}: interrupted", file=sys.stderr, flush=True)
        raise SystemExit(130) from None
    finally:
        if handle:
            handle.close()


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
    """One line when ``reason`` (the config's GPU work) meets a machine without a usable CUDA device, else "".

    The probe runs in a child process, so the Snakemake process itself never holds a CUDA
    context on a device its GPU jobs claim (docs/scaling.md).
    """
    import subprocess

    probe = ("import sys; from dynpr.backend import gpu_available; "
             "sys.exit(0 if gpu_available() else 3)")
    if subprocess.run([sys.executable, "-c", probe], capture_output=True).returncode == 0:
        return ""
    return (f"dynpr: the config asks for GPU work ({reason}) but CuPy sees no CUDA device here; run it on a GPU "
            "machine with the 'gpu' extra installed, or use backend: auto/cpu and compare_backends: false")
