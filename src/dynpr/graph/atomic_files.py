"""Atomic file output: write to a temporary name, rename when complete; sweep what a killed run left.

Temporary files carry the writing process's id (``.<name>.<pid>.tmp``). A run
stopped by SIGTERM removes its own
(:func:`exit_on_sigterm` turns the signal into ``SystemExit``, so every
``finally`` runs); one killed by SIGKILL cannot, and the next run that writes
beside it removes every such file whose process is gone (:func:`sweep_stale`).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import signal
import threading
from pathlib import Path
from typing import Iterator

from dynpr.errors import InputError, ResourceError

def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    except OverflowError:  # no process has such an id, so no run of ours wrote it: keep the file
        return True
    return True


def sweep_stale(folder: str | Path, prefix: str) -> list[Path]:
    """Remove temporary files named exactly ``<prefix>.<pid>.tmp`` whose process no longer runs.

    Only the name :func:`atomic_path` writes is matched: a user's file that merely
    starts alike (``.r.csv.20261128.bak``) is not a temporary and is left alone.

    Parameters
    ----------
    folder : str or Path
        Where to look (not recursive).
    prefix : str
        The name up to the process id, e.g. ``.results.csv``.

    Returns
    -------
    list of Path
        What was removed.
    """
    removed = []
    folder = Path(folder)
    if not folder.is_dir():
        return removed
    for path in folder.glob(f"{glob_escape(prefix)}.*"):
        match = re.fullmatch(r"\.(\d+)\.tmp", path.name[len(prefix):])
        if match is None or int(match.group(1)) == os.getpid() or _alive(int(match.group(1))):
            continue
        if path.is_dir() and not path.is_symlink():
            continue  # not one of ours: only files are written under a temporary name
        with contextlib.suppress(OSError):
            path.unlink()
            removed.append(path)
    return removed


def glob_escape(text: str) -> str:
    """``text`` with glob metacharacters escaped."""
    return re.sub(r"([*?\[])", r"[\1]", text)


#: The temporary names :func:`atomic_path` has handed out and not yet renamed or removed.
_LIVE_TEMPORARIES: set[Path] = set()


@contextlib.contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it to ``path`` on success.

    On any exception (SIGTERM included, see :func:`exit_on_sigterm`) the
    temporary file is removed and ``path`` is left as it was, so a failed run
    never leaves a half-written result behind; temporary files of killed runs
    beside ``path`` are swept first.

    Raises
    ------
    InputError
        If ``path`` is a folder.
    ResourceError
        If the folder cannot be created or written (read-only, full, a file in
        the way), naming ``path`` rather than the temporary name.
    """
    path = Path(path)
    if path.is_dir():
        raise InputError(f"{path}: is a folder; give a file name to write")
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    _LIVE_TEMPORARIES.add(tmp)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise ResourceError(f"{path}: cannot create its folder ({err.strerror or err})") from None
    try:
        sweep_stale(path.parent, f".{path.name}")
        yield tmp
        os.replace(tmp, path)
    except OSError as err:
        if err.filename is not None and str(err.filename) not in (str(tmp), str(path), str(path.parent)):
            raise  # not about the output: let the caller's handler name it
        detail = str(err.strerror or err).replace(str(tmp), str(path))  # name the output, not its temporary name
        raise ResourceError(f"{path}: cannot write ({detail})") from None
    finally:
        _LIVE_TEMPORARIES.discard(tmp)
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


def remove_live_temporaries() -> None:
    """Remove the temporary files of :func:`atomic_path` still open in this process: for an exit
    that runs no ``finally`` (``os._exit`` on a bus error, :func:`dynpr.graph.npz_files.exit_on_bus_error`)."""
    for tmp in list(_LIVE_TEMPORARIES):
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve() or (a.exists() and b.exists() and os.path.samefile(a, b))
    except OSError:
        return False


def check_output(path: str | Path, flag: str, inputs=()) -> None:
    """Refuse, before any work, an output that cannot be written or that is one of the ``inputs``.

    Parameters
    ----------
    path : str or Path
        The output file.
    flag : str
        The option that names it, for messages (``--out``).
    inputs : iterable of str or Path
        Files the run reads; writing over one would replace it with the result.

    Raises
    ------
    InputError
        If ``path`` is a folder or one of ``inputs``, or a file stands where one of its folders would be.
    ResourceError
        If its folder cannot be written.
    """
    path = Path(path)
    if path.is_dir():
        raise InputError(f"{flag} {path}: is a folder; give a file name")
    for source in inputs:
        if source is not None and _same_file(path, Path(source)):
            raise InputError(f"{flag} {path}: is an input of this run ({source}); writing it would replace the "
                             "input: give another file name")
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():  # a mistyped path, as a folder given for a file is
        raise InputError(f"{flag} {path}: {folder} is a file, not a folder; give a path in a folder")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ResourceError(f"{flag} {path}: cannot write (folder {folder} is not writable)")


def write_text_atomic(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically."""
    with atomic_path(path) as tmp:
        tmp.write_text(text)


def sha256_file(path: str | Path) -> str:
    """Hex SHA-256 of a file."""
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def exit_on_sigterm() -> None:
    """Make SIGTERM raise ``SystemExit(143)`` so ``finally`` blocks remove temporary files.

    Only possible in the main thread; elsewhere it does nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        return

    def _exit(signum, _frame):
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, _exit)


def write_csv_atomic(table, path: str | Path) -> None:
    """Write a pandas table as CSV through a temporary name (complete or absent): the
    benchmark tables and the claims table."""
    with atomic_path(path) as tmp:
        table.to_csv(tmp, index=False)
