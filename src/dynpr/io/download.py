"""Robust downloads of catalog datasets: retries, resume, checksums, integrity checks.

A download streams into ``<file>.part`` beside the destination and is renamed
into place only once it is complete and verified (size, sha256 when the
catalog or its lock file knows them, not an HTML page, a gzip/tar that
decompresses to its end). An interrupted transfer resumes with an HTTP Range
request, both within one call and across calls (the ``.part`` file is kept for
transient failures).

Whatever the server does, a download ends: at most ``max_attempts`` requests,
at most ``deadline`` seconds in all, and a stall (no byte for ``stall``
seconds, 45 by default) counts as a failed attempt. While no data arrives a
line says so every ``WAIT_REPORT`` seconds; a tqdm bar shows progress on a
terminal, and log lines every 10 % do so in log files.

``mirror`` (config key; the environment variable ``DYNPR_MIRROR`` overrides it)
is either a URL prefix to which the upstream URL's path is appended, or a local
folder searched by file name.
"""

from __future__ import annotations

import gzip
import logging
import os
import re
import shutil
import socket
import tarfile
import threading
import time
import zlib
from pathlib import Path
from urllib.parse import urlparse

import requests
import urllib3
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

from dynpr.graph.atomic_files import sha256_file
from dynpr.io.catalog import Dataset
from dynpr.errors import DownloadChecksumError, DownloadError, InterruptedDownloadError
from dynpr.io.tar_streams import open_tar_stream

log = logging.getLogger("dynpr.io.download")

MIRROR_ENV = "DYNPR_MIRROR"
CHUNK = 1 << 20
#: files at least this large get progress lines in the log
PROGRESS_BYTES = 16 << 20
#: seconds between "waiting for data" lines while a server sends nothing
WAIT_REPORT = 10.0
# where expected sizes and checksums come from, for messages
_RECORDED = "datasets/catalog.yaml or datasets/catalog.lock.yaml"
_HTML_START = re.compile(rb"^\s*(<!doctype html|<html|<head|<body|<\?xml)", re.IGNORECASE)

__all__ = ["DownloadError", "InterruptedDownloadError", "DownloadChecksumError", "download", "fetch_dataset",
           "make_session", "mirrored_source", "resolve_mirror", "verify_file"]


def resolve_mirror(config_value: str | None = None) -> str | None:
    """The mirror to use: ``$DYNPR_MIRROR`` if set and non-empty, else ``config_value``."""
    env = os.environ.get(MIRROR_ENV, "").strip()
    return env or (config_value or None)


def make_session(retries: int = 5, backoff: float = 1.0) -> requests.Session:
    """A ``requests.Session`` retrying connection errors and HTTP 5xx with exponential backoff.

    Parameters
    ----------
    retries : int
        Retries per request of refused connections and 5xx statuses. A server
        that accepts and then stays silent is not retried here: the stall limit
        of :func:`download` ends that attempt, and its attempt count bounds the rest.
    backoff : float
        urllib3 backoff factor: sleeps ``backoff * 2**k`` seconds between tries.
    """
    retry = Retry(
        total=retries, connect=retries, read=0, status=retries,
        backoff_factor=backoff, status_forcelist=(500, 502, 503, 504),
        allowed_methods=frozenset({"GET", "HEAD"}), raise_on_status=False,
        respect_retry_after_header=True,
    )
    session = requests.Session()
    adapter = HTTPAdapter(max_retries=retry)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    session.headers["User-Agent"] = "dynpr/0.1 (dataset download)"
    return session


def _is_url(text: str) -> bool:
    return text.startswith(("http://", "https://"))


def mirrored_source(url: str, mirror: str | None) -> str | Path:
    """Where to fetch ``url`` from: the URL itself, a mirror URL, or a file in a mirror folder.

    Raises
    ------
    DownloadError
        If ``mirror`` is a folder that holds no file of that name.
    """
    if not mirror:
        return url
    if _is_url(mirror):
        return mirror.rstrip("/") + urlparse(url).path
    folder = Path(mirror[len("file://"):] if mirror.startswith("file://") else mirror)
    name = Path(urlparse(url).path).name
    if not folder.is_dir():
        raise DownloadError(f"mirror {mirror!r} is neither an http(s) URL prefix nor an existing folder; "
                            f"fix `mirror` in config.yaml or ${MIRROR_ENV}")
    direct = folder / name
    if direct.is_file():
        return direct
    found = sorted(p for p in folder.rglob(name) if p.is_file())
    if not found:
        raise DownloadError(f"mirror folder {folder} has no file named {name}; copy it there or unset ${MIRROR_ENV}")
    return found[0]


def _expected_kind(name: str) -> str | None:
    if name.endswith((".tar.gz", ".tgz")):
        return "tar.gz"
    if name.endswith(".gz"):
        return "gzip"
    return None


def verify_file(path: Path, *, name: str, source: str, sha256: str | None = None,
                size: int | None = None) -> None:
    """Check a complete download: size, sha256, not HTML, gzip/tar readable to the end.

    Parameters
    ----------
    path : Path
        The downloaded (``.part``) file.
    name : str
        Final file name; decides the expected format (``.gz``, ``.tar.gz``).
    source : str
        URL or mirror path, for messages.
    sha256, size : optional
        Expected values from the catalog.

    Raises
    ------
    DownloadError
        Naming the check that failed.
    """
    actual = path.stat().st_size
    with open(path, "rb") as fh:
        head = fh.read(512)
    kind = _expected_kind(name)
    if kind and _HTML_START.match(head):
        raise DownloadError(f"{source}: got an HTML page instead of {kind} (an error or login page); "
                            "check the URL in datasets/catalog.yaml or the mirror")
    if size is not None and actual != size:
        raise DownloadChecksumError(f"{source}: size {actual} bytes differs from the recorded {size} ({_RECORDED}); "
                                    "the upstream file changed or the transfer is corrupt")
    if sha256 is not None:
        digest = sha256_file(path)
        if digest != sha256:
            raise DownloadChecksumError(f"{source}: sha256 {digest} differs from the recorded {sha256} "
                                        f"({_RECORDED}); the upstream file changed or the transfer is corrupt")
    if kind is None:
        return
    if head[:2] != b"\x1f\x8b":
        raise DownloadError(f"{source}: not a gzip file (starts with {head[:8]!r}); expected {kind}")
    try:
        if kind == "tar.gz":
            # stream mode reads every header and skips every member: a full pass
            # that detects truncation and corrupt blocks without extracting
            with open_tar_stream(path) as tar:
                for _member in tar:
                    pass
        else:
            with gzip.open(path, "rb") as fh:
                while fh.read(CHUNK):
                    pass
    except (EOFError, OSError, zlib.error, tarfile.TarError) as err:
        raise DownloadError(f"{source}: truncated or corrupt {kind} ({err}); download it again") from None


def _copy_local(source: Path, part: Path) -> None:
    with open(source, "rb") as fin, open(part, "wb") as fout:
        shutil.copyfileobj(fin, fout, CHUNK)


def _progress(name: str, done: int, total: int | None, started: float, state: dict, *, final: bool = False) -> None:
    """Log a progress line every 10% (or every 256 MiB when the size is unknown), and at the end."""
    if total is not None and total < PROGRESS_BYTES:
        return
    step = total // 10 if total else 256 << 20
    if not final and done - state.get("last", 0) < step:
        return
    state["last"] = done
    rate = done / max(time.monotonic() - started, 1e-9) / 1e6
    pct = f"{100 * done / total:5.1f}% of {total / 1e6:.1f} MB" if total else f"{done / 1e6:.1f} MB"
    log.info("%s: %s (%.1f MB/s)", name, pct, rate)


class _Waiting:
    """While a transfer is open, report every ``WAIT_REPORT`` seconds without a byte (a thread)."""

    def __init__(self, name: str, stall: float, bar):
        self.name, self.stall, self.bar = name, stall, bar
        self.last = time.monotonic()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name=f"dynpr-wait-{name}", daemon=True)

    def touch(self) -> None:
        self.last = time.monotonic()

    def _watch(self) -> None:
        while not self._stop.wait(WAIT_REPORT):
            idle = time.monotonic() - self.last
            if idle >= WAIT_REPORT:
                line = f"waiting for data: nothing for {idle:.0f} s (gives up at {self.stall:.0f} s)"
                log.warning("%s: %s", self.name, line)  # off a terminal too: a silent wait looks hung
                self.bar.set_postfix_str(line, refresh=True)

    def __enter__(self) -> "_Waiting":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def _http_fetch(url: str, part: Path, *, session: requests.Session, connect_timeout: float, stall: float,
                resumes: int, max_attempts: int, deadline: float, backoff: float) -> None:
    """Stream ``url`` into ``part``, resuming with Range after interruptions, within the attempt and time bounds."""
    from tqdm import tqdm

    name = part.name.removesuffix(".part")
    host = urlparse(url).hostname
    try:  # at once: the session's retries would take half a minute to say the same
        socket.getaddrinfo(host, None)
    except socket.gaierror as err:
        raise DownloadError(f"{url}: cannot resolve the host {host} ({err.strerror or err}); check the network "
                            f"or set ${MIRROR_ENV} to a mirror") from None
    started = time.monotonic()
    give_up_at = started + deadline
    state: dict = {}
    failures = attempts = 0
    with tqdm(desc=name, unit="B", unit_scale=True, unit_divisor=1024, disable=None, leave=False) as bar, \
            _Waiting(name, stall, bar) as waiting:
        while True:
            attempts += 1
            remaining = give_up_at - time.monotonic()
            offset = part.stat().st_size if part.exists() else 0
            headers = {"Range": f"bytes={offset}-"} if offset else {}
            waiting.touch()
            try:
                resp = session.get(url, stream=True, timeout=(connect_timeout, max(1.0, min(stall, remaining))),
                                   headers=headers)
            except requests.exceptions.RequestException as err:
                # with bytes already on disk keep them: the next run resumes
                error = InterruptedDownloadError if offset else DownloadError
                raise error(f"{url}: cannot connect or no answer ({type(err).__name__}: {err}); check the network "
                            f"or set ${MIRROR_ENV} to a mirror") from None
            with resp:
                if resp.status_code == 416 and offset:
                    # nothing left to send: the part is complete (verification decides)
                    return
                if resp.status_code >= 400:
                    raise DownloadError(f"{url}: HTTP {resp.status_code} {resp.reason}; "
                                        + ("the file does not exist there: check the URL in datasets/catalog.yaml or the mirror"
                                           if resp.status_code in (403, 404, 410) else "server error after retries; try again later"))
                content_range = resp.headers.get("Content-Range", "")
                append = offset > 0 and resp.status_code == 206 and content_range.startswith(f"bytes {offset}-")
                if offset and not append:
                    log.info("%s: server did not honour the Range request; restarting from byte 0", name)
                    if resp.status_code != 200:  # a 206 for some other range: ask again for everything
                        part.unlink()
                        _check_bounds(url, attempts, max_attempts, give_up_at, deadline,
                                      f"answered Range with {content_range!r}")
                        continue
                    offset = 0
                length = resp.headers.get("Content-Length")
                total = offset + int(length) if length is not None and length.isdigit() else None
                bar.reset(total=total)
                bar.update(offset)
                received = offset
                try:
                    with open(part, "ab" if append else "wb") as fh:
                        # raw bytes: a server sending .gz with Content-Encoding: gzip must
                        # not have it decompressed on the fly
                        for chunk in resp.raw.stream(CHUNK, decode_content=False):
                            fh.write(chunk)
                            received += len(chunk)
                            waiting.touch()
                            bar.update(len(chunk))
                            _progress(name, received, total, started, state)
                            if time.monotonic() > give_up_at:
                                raise InterruptedDownloadError(
                                    f"{url}: not complete after the {deadline:.0f} s deadline ({received} bytes); "
                                    "try again later (the partial file is kept and the next run resumes it)")
                except (urllib3.exceptions.HTTPError, requests.exceptions.RequestException) as err:
                    interrupted = type(err).__name__
                except OSError as err:
                    raise DownloadError(f"{part}: cannot write ({err}); check disk space") from None
                else:
                    if total is None or received >= total:
                        _progress(name, received, total, started, state, final=True)
                        return
                    interrupted = f"connection closed at {received} of {total} bytes"
            failures = failures + 1 if received == offset else 1
            if failures > resumes:
                raise InterruptedDownloadError(f"{url}: transfer interrupted {failures} times without progress ({interrupted}); "
                                               "try again later (the partial file is kept and the next run resumes it)")
            _check_bounds(url, attempts, max_attempts, give_up_at, deadline, interrupted)
            delay = min(backoff * 2 ** (failures - 1), max(0.0, give_up_at - time.monotonic()))
            log.info("%s: interrupted at %d bytes (%s); resuming with Range in %.1f s", name, received, interrupted, delay)
            time.sleep(delay)


def _check_bounds(url: str, attempts: int, max_attempts: int, give_up_at: float, deadline: float,
                  interrupted: str) -> None:
    """Give up after ``max_attempts`` requests or past the deadline, whatever progress they made."""
    if attempts >= max_attempts or time.monotonic() >= give_up_at:
        bound = f"{attempts} attempts" if attempts >= max_attempts else f"the {deadline:.0f} s deadline"
        raise InterruptedDownloadError(f"{url}: still incomplete after {bound} (last: {interrupted}); "
                                       "the server keeps breaking off: try again later or set "
                                       f"${MIRROR_ENV} (the partial file is kept and the next run resumes it)")


def download(url: str, dest: str | Path, *, sha256: str | None = None, size: int | None = None,
             mirror: str | None = None, session: requests.Session | None = None,
             connect_timeout: float = 15.0, stall: float = 45.0, resumes: int = 5, max_attempts: int = 12,
             deadline: float = 4 * 3600.0, backoff: float = 1.0) -> Path:
    """Download ``url`` to ``dest`` safely.

    Parameters
    ----------
    url : str
        Upstream URL.
    dest : str or Path
        Final path; written only once the file is complete and verified.
    sha256, size : optional
        Expected checksum and byte count.
    mirror : str, optional
        URL prefix or local folder (already resolved; see :func:`resolve_mirror`).
    session : requests.Session, optional
        Default :func:`make_session` (retries 5xx and connection errors).
    connect_timeout : float
        Seconds to wait for a connection.
    stall : float
        Seconds without a byte (before or during the body) that end an attempt.
    resumes : int
        Consecutive interruptions without progress tolerated before giving up.
    max_attempts : int
        Requests in all, progress or not: a server that always breaks off
        half-way cannot keep the download going forever.
    deadline : float
        Seconds the whole download may take.
    backoff : float
        Base delay in seconds between resume attempts (doubles each time).

    Returns
    -------
    Path
        ``dest``.

    Raises
    ------
    DownloadError
        For HTTP errors, unreachable hosts, HTML pages, checksum or size
        mismatches and truncated or corrupt archives. Nothing is left at ``dest``;
        a ``.part`` file is kept only after a transient interruption, to resume.
    """
    dest = Path(dest)
    created = [folder for folder in (dest.parent, *dest.parent.parents) if not folder.exists()]
    dest.parent.mkdir(parents=True, exist_ok=True)
    part = dest.with_name(dest.name + ".part")
    source = mirrored_source(url, mirror)
    log.info("%s: fetching from %s", dest.name, source)
    try:
        if isinstance(source, Path):
            _copy_local(source, part)
        else:
            _http_fetch(source, part, session=session or make_session(backoff=backoff),
                        connect_timeout=connect_timeout, stall=stall, resumes=resumes,
                        max_attempts=max_attempts, deadline=deadline, backoff=backoff)
        verify_file(part, name=dest.name, source=str(source), sha256=sha256, size=size)
    except InterruptedDownloadError:
        raise  # keep the .part: the next run resumes it
    except DownloadError:
        part.unlink(missing_ok=True)
        for folder in created:  # a failed download leaves nothing behind, not even an empty datasets/raw/
            try:
                folder.rmdir()
            except OSError:
                break
        raise
    os.replace(part, dest)
    log.info("%s: complete (%d bytes)", dest, dest.stat().st_size)
    return dest


def fetch_dataset(dataset: Dataset, *, mirror: str | None = None, **kwargs) -> Path:
    """Return the local source file of a catalog dataset, downloading it if needed.

    An embedded dataset resolves to ``datasets/embedded/<file>`` without any
    network access. Others go to ``datasets/raw/<file>``.

    Parameters
    ----------
    dataset : Dataset
        A catalog entry that is not ``generated``.
    mirror : str, optional
        Config value; ``$DYNPR_MIRROR`` overrides it.
    **kwargs
        Passed to :func:`download`.
    """
    if dataset.kind == "generated":
        raise ValueError(f"{dataset.name} is generated (R-MAT); there is nothing to download")
    if dataset.embedded is not None:
        return dataset.embedded
    if dataset.raw_path.is_file():
        return dataset.raw_path
    return download(dataset.url, dataset.raw_path, sha256=dataset.sha256, size=dataset.size,
                    mirror=resolve_mirror(mirror), **kwargs)
