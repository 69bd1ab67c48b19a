"""Parsers for the graph file formats in the catalog, vectorized end to end.

SNAP text files go through pandas' C parser; Matrix Market through
``scipy.io.mmread`` (fast_matrix_market, multi-threaded). No code here loops in
Python over lines on the happy path: only after a parse failure does
:func:`_find_bad_line` scan the file to name the first malformed line.
"""

from __future__ import annotations

import functools
import gzip
import logging
import os
import re
import tarfile
import tempfile
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.io

from dynpr.atomic_files import sweep_stale
from dynpr.errors import InputError, ParseError
from dynpr.graph import MAX_VERTICES, VERTEX_DTYPE
from dynpr.hostmem import check_host_fits

log = logging.getLogger("dynpr.readers")

FORMATS = ("snap-temporal", "snap-edgelist", "matrix-market", "suitesparse-mm")

_ID = r"\d{1,18}"  # non-negative and safely inside int64
_COMMENT_OR_BLANK = re.compile(rb"^\s*(#.*)?$")
# non-ASCII or control characters (a non-breaking space looks like a separator but is not one)
_ODD_CHAR = re.compile(r"[^\x20-\x7e\t\r\n]")


@dataclass(frozen=True)
class EdgeData:
    """Edges as read from a file, before deduplication.

    ``src``/``dst`` are 0-based ids (int64 from SNAP files, int32 from Matrix Market); ``time`` is int64 for temporal
    files (edges stable-sorted by it) and None otherwise; ``num_vertices`` is the
    matrix dimension for Matrix Market input and None for SNAP files (whose ids
    :func:`dynpr.prepare.build_graph` renumbers densely).
    """

    src: np.ndarray
    dst: np.ndarray
    time: np.ndarray | None = None
    num_vertices: int | None = None


def _open_text(path: Path):
    """Open a possibly gzip-compressed file for binary line reading."""
    with open(path, "rb") as fh:
        magic = fh.read(2)
    return gzip.open(path, "rb") if magic == b"\x1f\x8b" else open(path, "rb")


def _find_bad_line(path: Path, ncols: int) -> tuple[int, str] | None:
    """Return ``(line number, reason)`` of the first line that is not ``ncols`` ids.

    Only called after pandas failed, so a Python loop over lines is acceptable here.
    """
    data_line = re.compile(rb"^\s*" + rb"\s+".join([_ID.encode()] * ncols) + rb"\s*$")
    with _open_text(path) as fh:
        for number, line in enumerate(fh, start=1):
            if _COMMENT_OR_BLANK.match(line) or data_line.match(line):
                continue
            text = line.decode("utf-8", "replace").rstrip("\r\n")
            odd = _ODD_CHAR.search(text)
            if odd and (odd.group() == "\ufffd" or ord(odd.group()) < 32):
                return number, "binary data, not a text edge list"
            if odd:  # e.g. a non-breaking space: name it rather than miscount the fields
                return number, (f"unexpected character {odd.group()!r} (U+{ord(odd.group()):04X}) at column "
                                f"{odd.start() + 1}; fields are ids separated by spaces or tabs: {text[:80]!r}")
            fields = text.split()
            if len(fields) != ncols:
                return number, f"expected {ncols} fields, got {len(fields)}: {text[:80]!r}"
            return number, f"expected {ncols} non-negative integer ids, got {text[:80]!r}"
    return None


def read_snap(path: str | Path, *, temporal: bool = False) -> EdgeData:
    """Read a SNAP edge list (``u v`` lines) or temporal edge list (``u v t`` lines).

    Parameters
    ----------
    path : str or Path
        ``.txt`` or ``.txt.gz``; ``#`` comments, blank lines, tabs/spaces and CRLF are accepted.
    temporal : bool
        Expect a third column of times and stable-sort the edges by it (equal
        times keep their file order).

    Returns
    -------
    EdgeData
        int64 ids as in the file; ``time`` set only when ``temporal``.

    Raises
    ------
    ParseError
        Naming the file and the first malformed line.
    """
    path = Path(path)
    ncols = 3 if temporal else 2
    try:
        frame = pd.read_csv(
            path, sep=r"\s+", header=None, comment="#", dtype=np.int64, engine="c",
            compression="infer", skip_blank_lines=True,
        )
        ok = frame.shape[1] == ncols or frame.empty
        values = frame.to_numpy(dtype=np.int64) if ok else None
        ok = ok and not (values < 0).any()
        failure = None
    except (EOFError, gzip.BadGzipFile, zlib.error, OSError) as err:
        raise ParseError(f"{path}: corrupt or truncated gzip ({err}); delete it and download again") from None
    except pd.errors.EmptyDataError:
        raise ParseError(f"{path}: no edges found (empty file or only comments)") from None
    except (ValueError, OverflowError, pd.errors.ParserError) as err:
        ok, failure = False, err
    if not ok:
        bad = _find_bad_line(path, ncols)
        if bad is not None:
            raise ParseError(f"{path}: line {bad[0]}: {bad[1]}")
        raise ParseError(f"{path}: cannot parse as {ncols}-column SNAP file: {failure}")
    if values.shape[0] == 0:
        raise ParseError(f"{path}: no edges found (empty file or only comments)")
    if temporal:
        values = values[np.argsort(values[:, 2], kind="stable")]
    return EdgeData(*(np.ascontiguousarray(column) for column in values.T))


#: Entries parsed per chunk of a Matrix Market file: bounds the parser's scratch, one progress line each.
MM_CHUNK_ENTRIES = 1 << 24


def _find_bad_mm_line(path: Path, first: int, ncols: int, rows: int) -> tuple[int, str]:
    """``(line number, reason)`` of the first malformed entry at or after line ``first``.

    Only called after the chunked parse failed, so a Python loop over lines is acceptable here.
    """
    with _open_text(path) as fh:
        for number, line in enumerate(fh, start=1):
            if number < first or line.lstrip().startswith(b"%") or not line.strip():
                continue
            text = line.decode("utf-8", "replace").rstrip("\r\n")
            fields = text.split()
            if len(fields) != ncols:
                return number, f"expected {ncols} fields, got {len(fields)}: {text[:80]!r}"
            if not all(re.fullmatch(_ID, f) for f in fields[:2]):
                return number, f"expected two positive integer ids, got {text[:80]!r}"
            if not all(1 <= int(f) <= rows for f in fields[:2]):
                return number, f"id out of range 1..{rows}: {text[:80]!r}"
    return first, "malformed entry"


def read_matrix_market(path: str | Path, *, display_name: str | None = None) -> EdgeData:
    """Read a Matrix Market coordinate file as a directed graph (row -> column), in chunks.

    Pattern, integer and real matrices are accepted (values are ignored);
    symmetric (and skew/hermitian) matrices give both directions of each
    off-diagonal entry. Ids become 0-based; ``num_vertices`` is the dimension.
    The header is checked before anything is allocated; entries are then
    parsed :data:`MM_CHUNK_ENTRIES` at a time straight into int32 arrays (8
    bytes per entry, 16 when symmetric), with a progress line per chunk on the
    ``dynpr.readers`` logger.

    Parameters
    ----------
    path : str or Path
        ``.mtx`` or ``.mtx.gz``.
    display_name : str, optional
        Name used in error messages (e.g. ``archive.tar.gz:member.mtx``).

    Raises
    ------
    ParseError
        For a non-coordinate, non-square, malformed (with its line number) or
        truncated file, or a header with more vertices than int32 ids hold.
    MemoryError
        When the header's entries would not fit the host's available memory.
    """
    path = Path(path)
    name = display_name or str(path)
    try:
        rows, cols, entries, layout, field, symmetry = scipy.io.mminfo(path)
    except (ValueError, OSError, EOFError, zlib.error) as err:
        raise ParseError(f"{name}: not a Matrix Market file: {err}") from None
    if layout != "coordinate":
        raise ParseError(f"{name}: Matrix Market layout {layout!r} is not a graph; expected 'coordinate'")
    if rows != cols:
        raise ParseError(f"{name}: matrix is {rows}x{cols}; a graph's adjacency matrix must be square")
    # the header decides before anything graph-sized is allocated
    if rows > MAX_VERTICES:
        raise ParseError(f"{name}: header says {rows:,} vertices; vertex ids are int32 (at most {MAX_VERTICES:,})")
    mirror = symmetry != "general"
    capacity = entries * (2 if mirror else 1)
    # the int32 ids read here, then build_graph's 40 bytes per record
    check_host_fits(capacity * (8 + 40) + 24 * rows, f"{name}: graph")
    ncols = {"pattern": 2, "complex": 4}.get(field, 3)
    src = np.empty(capacity, dtype=VERTEX_DTYPE)
    dst = np.empty(capacity, dtype=VERTEX_DTYPE)
    count = 0
    try:
        with _open_text(path) as fh:
            first = 1
            for line in fh:  # banner, comments, size line
                first += 1
                if not line.lstrip().startswith(b"%") and line.strip():
                    break
            chunks = pd.read_csv(fh, sep=r"\s+", header=None, comment="%", usecols=[0, 1], dtype=np.int64,
                                 engine="c", skip_blank_lines=True, chunksize=MM_CHUNK_ENTRIES)
            for chunk in chunks:
                ids = chunk.to_numpy()
                if count + len(ids) > entries or ids.min() < 1 or ids.max() > rows:
                    if count + len(ids) > entries:
                        raise ParseError(f"{name}: more entries than the header's {entries:,}")
                    raise ValueError("id out of range")
                src[count:count + len(ids)] = ids[:, 0] - 1
                dst[count:count + len(ids)] = ids[:, 1] - 1
                count += len(ids)
                log.info("%s: %s of %s entries read", name, f"{count:,}", f"{entries:,}")
    except (EOFError, gzip.BadGzipFile, zlib.error, OSError) as err:
        raise ParseError(f"{name}: corrupt or truncated gzip ({err}); delete it and download again") from None
    except pd.errors.EmptyDataError:
        count = 0
    except ParseError:
        raise
    except (ValueError, OverflowError, pd.errors.ParserError):
        number, reason = _find_bad_mm_line(path, first, ncols, rows)
        raise ParseError(f"{name}: line {number}: {reason}") from None
    if count != entries:
        raise ParseError(f"{name}: {count:,} entries but the header says {entries:,}: the file is truncated")
    if mirror:
        off = np.flatnonzero(src[:count] != dst[:count])
        src[count:count + len(off)], dst[count:count + len(off)] = dst[off], src[off]
        count += len(off)
    return EdgeData(src[:count], dst[:count], num_vertices=int(rows))


def _archive_stem(path: Path) -> str:
    name = path.name
    for suffix in (".tar.gz", ".tgz", ".tar"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return path.stem


def read_suitesparse_tar(path: str | Path, *, workdir: str | Path | None = None) -> EdgeData:
    """Read the matrix of a SuiteSparse ``<name>.tar.gz`` (``<name>/<name>.mtx`` inside).

    Every member is checked with tarfile's ``data`` filter before anything is
    extracted: an absolute path, ``..`` traversal, or a link leaving the folder
    rejects the whole archive. ``.mtx`` members are extracted (with the same
    filter) into a temporary folder in ``workdir`` (default: beside the
    archive, where there is room for large graphs) that is removed afterwards.

    Raises
    ------
    ParseError
        For an unsafe member, a truncated/corrupt archive, or no matrix inside.
    """
    path = Path(path)
    stem = _archive_stem(path)
    workdir = Path(workdir) if workdir is not None else path.resolve().parent
    # the pid in the name lets a later run remove the folder of one killed by SIGKILL
    sweep_stale(workdir, f".{stem}.extract")
    with tempfile.TemporaryDirectory(prefix=f".{stem}.extract.{os.getpid()}.", dir=workdir) as tmp:
        extracted: list[str] = []
        try:
            # stream mode: one pass over the compressed data, no seeking
            with tarfile.open(path, mode="r|*") as tar:
                for member in tar:
                    try:
                        # the data filter would silently strip a leading "/"; refuse instead
                        if member.name.startswith("/"):
                            raise tarfile.AbsolutePathError(member)
                        tarfile.data_filter(member, tmp)
                    except tarfile.FilterError as err:
                        raise ParseError(f"{path}: unsafe archive member {member.name!r} ({err}); refusing to extract") from None
                    if member.isfile() and member.name.endswith((".mtx", ".mtx.gz")):
                        tar.extract(member, tmp, filter="data")
                        extracted.append(member.name)
        except (tarfile.TarError, EOFError, zlib.error, OSError) as err:
            raise ParseError(f"{path}: corrupt or truncated archive ({err}); delete it and download again") from None
        wanted = [m for m in extracted if Path(m).name in (f"{stem}.mtx", f"{stem}.mtx.gz")]
        if not wanted and len(extracted) == 1:
            wanted = extracted
        if len(wanted) != 1:
            raise ParseError(f"{path}: expected one matrix {stem}/{stem}.mtx inside, found {extracted or 'no .mtx member'}")
        return read_matrix_market(Path(tmp) / wanted[0], display_name=f"{path}:{wanted[0]}")


def detect_format(path: str | Path) -> str:
    """Guess a file's format from its name (and, for SNAP text, its first data line).

    Returns
    -------
    str
        One of :data:`FORMATS`.
    """
    path = Path(path)
    name = path.name.lower()
    if name.endswith((".tar.gz", ".tgz", ".tar")):
        return "suitesparse-mm"
    if name.endswith((".mtx", ".mtx.gz")):
        return "matrix-market"
    with _open_text(path) as fh:
        try:
            for line in fh:
                if not _COMMENT_OR_BLANK.match(line):
                    return "snap-temporal" if len(line.split()) == 3 else "snap-edgelist"
        except (EOFError, OSError, zlib.error) as err:
            raise ParseError(f"{path}: corrupt or truncated gzip ({err})") from None
    raise ParseError(f"{path}: no edges found (empty file or only comments)")


def read_edges(path: str | Path, fmt: str | None = None) -> EdgeData:
    """Read any supported graph file.

    Parameters
    ----------
    path : str or Path
        The file.
    fmt : str, optional
        One of :data:`FORMATS`; guessed by :func:`detect_format` when omitted.
    """
    fmt = fmt or detect_format(path)
    readers = {
        "snap-temporal": functools.partial(read_snap, temporal=True),
        "snap-edgelist": read_snap,
        "matrix-market": read_matrix_market,
        "suitesparse-mm": read_suitesparse_tar,
    }
    if fmt not in readers:
        raise InputError(f"{path}: unknown graph format {fmt!r}; known: {', '.join(FORMATS)}")
    return readers[fmt](path)

