"""Parsers for the graph file formats in the catalog, vectorized end to end.

SNAP text files and Matrix Market entries go through pandas' C parser (Matrix
Market in chunks, also streamed straight out of a SuiteSparse ``.tar.gz``). No
code here loops in Python over lines: after a parse failure,
:func:`_find_bad_line` / :func:`_find_bad_mm_line` name the first malformed line
by halving the failing block until a few KiB remain (a flood of blank or comment
lines before it costs no loop per line).
"""

from __future__ import annotations

import functools
import gzip
import io
import logging
import lzma
import re
import tarfile
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from dynpr.errors import InputError, ParseError
from dynpr.graph.graph import MAX_VERTICES, VERTEX_DTYPE
from dynpr.graph.hostmem import BUILD_BYTES_PER_RECORD, build_bytes, check_host_fits
from dynpr.io.id_text import DigitsOnly, odd_character_reason, odd_id_byte
from dynpr.io.mm_fast import FILE_FIELDS, read_entries, read_file_entries
from dynpr.io.tar_streams import archive_stem, check_member, open_tar_stream, tar_member_stream

log = logging.getLogger("dynpr.io.readers")

FORMATS = ("snap-temporal", "snap-edgelist", "matrix-market", "suitesparse-mm")

_ID = r"\d{1,18}"  # non-negative and safely inside int64
_COMMENT_OR_BLANK = re.compile(rb"^\s*(#.*)?$")


@dataclass(frozen=True)
class EdgeData:
    """Edges as read from a file, before deduplication.

    ``src``/``dst`` are 0-based ids (int64 from SNAP files, int32 from Matrix Market); ``time`` is int64 for temporal
    files (edges stable-sorted by it) and None otherwise; ``num_vertices`` is the
    matrix dimension for Matrix Market input and None for SNAP files (whose ids
    :func:`dynpr.io.prepare.build_graph` renumbers densely). ``labels`` is the string label of each
    dense id of a labelled list (:mod:`dynpr.io.edge_lists`; ``num_vertices`` is their count), else None.
    """

    src: np.ndarray
    dst: np.ndarray
    time: np.ndarray | None = None
    num_vertices: int | None = None
    labels: np.ndarray | None = None


def _open_text(path: Path):
    """Open a possibly gzip-compressed file for binary line reading."""
    with open(path, "rb") as fh:
        magic = fh.read(2)
    return gzip.open(path, "rb") if magic == b"\x1f\x8b" else open(path, "rb")


#: Longest line read one at a time (headers, the search for a bad line): a "line" without a newline
#: in a file that inflates to GBs must not be read whole.
MAX_LINE_BYTES = 1 << 20


def _lines(fh, name: str):
    """The lines of a binary stream, each read with a bound of :data:`MAX_LINE_BYTES`."""
    number = 0
    while line := fh.readline(MAX_LINE_BYTES + 1):
        number += 1
        if len(line) > MAX_LINE_BYTES:
            raise ParseError(f"{name}: line {number} is longer than {MAX_LINE_BYTES:,} bytes: not a text graph file")
        yield line


def _snap_line_reason(line: bytes, ncols: int) -> str | None:
    """Why one line of a SNAP file is not ``ncols`` ids (None: it is, or it is a comment or blank)."""
    data = line.split(b"#", 1)[0]  # the parser drops a comment after the ids too
    data_line = rb"^\s*" + rb"\s+".join([_ID.encode()] * ncols) + rb"\s*$"
    if _COMMENT_OR_BLANK.match(data) or re.match(data_line, data):
        return None
    text = line.decode("utf-8", "replace").rstrip("\r\n")
    if (reason := odd_character_reason(text)) is not None:
        return reason
    fields = text.split()
    if len(fields) != ncols:
        return f"expected {ncols} fields, got {len(fields)}: {text[:80]!r}"
    return f"expected {ncols} non-negative integer ids, got {text[:80]!r}"


#: Size of a piece of text whose lines are tested one by one (the search for a bad line halves
#: larger pieces first).
_LINE_SCAN_BYTES = 1 << 12


def _first_bad_line(fh, name: str, block_ok, line_reason, first_number: int = 1) -> tuple[int, str] | None:
    """``(line number, reason)`` of the first line of the binary stream ``fh`` that ``line_reason``
    refuses (``first_number``: the number of the stream's first line), None if none.

    Whole blocks are tested with the vectorized ``block_ok`` and a failing one halved until a few
    KiB remain, so a flood of blank or comment lines before the bad one costs no Python loop.
    """
    number = first_number - 1  # lines before the piece at hand
    for block in _text_blocks(fh, name):
        if block_ok(block):
            number += block.count(b"\n")
            continue
        while len(block) > _LINE_SCAN_BYTES:
            cut = (block.rfind(b"\n", 0, len(block) // 2) + 1) or (block.find(b"\n") + 1)
            if cut in (0, len(block)):  # one long line
                break
            head = block[:cut]
            if block_ok(head):
                number += head.count(b"\n")
                block = block[cut:]
            else:
                block = head
        for line in block.splitlines(keepends=True):
            number += 1
            if (reason := line_reason(line)) is not None:
                return number, reason
    return None


def _find_bad_line(path: Path, ncols: int) -> tuple[int, str] | None:
    """Return ``(line number, reason)`` of the first line that is not ``ncols`` ids."""
    with _open_text(path) as fh:
        return _first_bad_line(fh, str(path), lambda block: _parse_block(block, ncols) is not None,
                               functools.partial(_snap_line_reason, ncols=ncols))


#: Bytes of text parsed per block of a SNAP file (whole lines): bounds the parser's scratch.
TEXT_BLOCK_BYTES = 1 << 26

def _text_blocks(fh, name: str, size: int | None = None):
    """Blocks of whole lines, about ``size`` bytes each (default :data:`TEXT_BLOCK_BYTES`), from a
    binary stream (read in bounded pieces, also through gzip)."""
    size = size or TEXT_BLOCK_BYTES
    rest, lines = b"", 0
    while data := fh.read(size):
        data = rest + data
        cut = data.rfind(b"\n") + 1
        if cut == 0 and len(data) > size:
            raise ParseError(f"{name}: line {lines + 1} is longer than {size:,} bytes: not a text graph file")
        rest = data[cut:]
        if cut:
            lines += data.count(b"\n", 0, cut)
            yield data[:cut]
    if rest:
        yield rest


def log_long_read(path, text_bytes: int, block_bytes: int, records: int) -> int:
    """Log a progress line for each block of a file of more than one block (a flood of comment lines
    read without a word looks hung); return the bytes of text read with this block."""
    if text_bytes:
        log.info("%s: %s MB of text read, %s edges so far", path, f"{text_bytes / 1e6:,.0f}", f"{records:,}")
    return text_bytes + block_bytes


# a line with something other than blanks and a comment, at a block's start and after a newline (a search
# for the newline first: ten times faster through a flood of comment lines than a multi-line ^)
_FIRST_DATA_LINE = re.compile(rb"[ \t]*[^# \t\r\n]")
_NEXT_DATA_LINE = re.compile(rb"\n[ \t]*[^# \t\r\n]")


def has_data_line(block: bytes) -> bool:
    """Whether a block of text has a line other than blanks and a ``#`` comment."""
    return _FIRST_DATA_LINE.match(block) is not None or _NEXT_DATA_LINE.search(block) is not None


def _parse_block(block: bytes, ncols: int) -> np.ndarray | None:
    """The ids of a block of whole lines as an int64 ``(records, ncols)`` array; None where it is not
    ``ncols`` non-negative integer ids per line."""
    if not has_data_line(block):  # comments and blank lines only: no parse
        return np.empty((0, ncols), dtype=np.int64)
    if odd_id_byte(block)[0]:
        return None
    try:
        frame = pd.read_csv(io.BytesIO(block), sep=r"\s+", header=None, comment="#", dtype=np.int64, engine="c",
                            skip_blank_lines=True)
    except pd.errors.EmptyDataError:  # only comments and blank lines
        return np.empty((0, ncols), dtype=np.int64)
    except (ValueError, OverflowError, pd.errors.ParserError):
        return None
    return frame.to_numpy(dtype=np.int64) if frame.shape[1] == ncols or frame.empty else None


def read_snap(path: str | Path, *, temporal: bool = False) -> EdgeData:
    """Read a SNAP edge list (``u v`` lines) or temporal edge list (``u v t`` lines).

    The text is read in blocks of :data:`TEXT_BLOCK_BYTES` (inflated in bounded pieces
    when gzipped), with a running check that what is read so far could still be
    built into a graph in the host's memory: a small ``.gz`` that inflates to far
    more is stopped early, not read whole.

    Parameters
    ----------
    path : str or Path
        ``.txt`` or ``.txt.gz``; ``#`` comments, blank lines, tabs/spaces and CRLF are accepted.
        Ids are digits only: a sign, decimal point or exponent is refused, never rounded.
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
    MemoryError
        Naming the file, once the records read so far could not be built in the available memory.
    """
    path = Path(path)
    ncols = 3 if temporal else 2
    blocks, records, text_bytes = [], 0, 0
    try:
        with _open_text(path) as fh:
            for block in _text_blocks(fh, str(path)):
                text_bytes = log_long_read(path, text_bytes, len(block), records)
                values = _parse_block(block, ncols)
                if values is None:
                    bad = _find_bad_line(path, ncols)
                    raise ParseError(f"{path}: line {bad[0]}: {bad[1]}" if bad is not None
                                     else f"{path}: cannot parse as {ncols}-column SNAP file")
                blocks.append(values)
                records += len(values)
                # still to allocate (the blocks read so far are held already, outside what is available):
                # their concatenation, then the graph built from it
                check_host_fits((8 * ncols + BUILD_BYTES_PER_RECORD) * records, f"{path}: graph")
    except (EOFError, gzip.BadGzipFile, zlib.error, OSError) as err:
        raise ParseError(f"{path}: corrupt or truncated gzip ({err}); delete it and download again") from None
    if records == 0:
        raise ParseError(f"{path}: no edges found (empty file or only comments)")
    columns = [np.concatenate([values[:, j] for values in blocks]) for j in range(ncols)]
    del blocks
    if temporal:
        order = np.argsort(columns[2], kind="stable")
        columns = [column[order] for column in columns]
    return EdgeData(*columns)


#: Entries parsed per chunk of a Matrix Market file: bounds the parser's scratch, one progress line each.
MM_CHUNK_ENTRIES = 1 << 24

#: Bytes of entries read (and their ids checked) at once.
_ENTRY_READ_BYTES = 1 << 20

_MM_FIELDS = ("real", "complex", "integer", "pattern")
_MM_SYMMETRIES = ("general", "symmetric", "skew-symmetric", "hermitian")


#: Most comment and blank lines before a Matrix Market size line (read one at a time).
MAX_HEADER_LINES = 1 << 20


@dataclass(frozen=True)
class MMHeader:
    """A Matrix Market coordinate header (field and symmetry as in ``scipy.io.mminfo``).

    ``first_entry_line`` is the 1-based line number of the line after the size line.
    """

    rows: int
    cols: int
    entries: int
    field: str
    symmetry: str
    first_entry_line: int


def read_mm_header(fh, name: str) -> MMHeader:
    """Read the banner, comments and size line of a Matrix Market coordinate file from a binary stream.

    Leaves ``fh`` at the first entry line, so the same stream (a plain or
    gzip file, or a tar member) can go on to :func:`_read_mm_entries`.

    Parameters
    ----------
    fh : binary file object
        Positioned at the start of the file.
    name : str
        Used in error messages.

    Raises
    ------
    ParseError
        For a missing or unknown banner, a non-coordinate layout, or a malformed size line.
    """
    lines = _lines(fh, name)
    banner = next(lines, b"").decode("utf-8", "replace").split()
    if len(banner) != 5 or banner[0].lower() != "%%matrixmarket" or banner[1].lower() != "matrix":
        raise ParseError(f"{name}: not a Matrix Market file: first line must be "
                         f"'%%MatrixMarket matrix coordinate <field> <symmetry>', got {' '.join(banner)[:80]!r}")
    layout, field, symmetry = (word.lower() for word in banner[2:])
    if layout != "coordinate":
        raise ParseError(f"{name}: Matrix Market layout {layout!r} is not a graph; expected 'coordinate'")
    if field not in _MM_FIELDS or symmetry not in _MM_SYMMETRIES:
        raise ParseError(f"{name}: line 1: unknown Matrix Market field {field!r} or symmetry {symmetry!r}")
    number = 1
    for line in lines:  # comments and blank lines, then the size line
        number += 1
        if line.lstrip().startswith(b"%") or not line.strip():
            if number > MAX_HEADER_LINES:
                raise ParseError(f"{name}: no size line in the first {MAX_HEADER_LINES:,} lines: not a Matrix "
                                 "Market file")
            continue
        size = line.split()
        if len(size) != 3 or not all(re.fullmatch(_ID.encode(), f) for f in size):
            text = line.decode("utf-8", "replace").rstrip("\r\n")
            raise ParseError(f"{name}: line {number}: expected the size line 'rows cols entries', got {text[:80]!r}")
        rows, cols, entries = (int(f) for f in size)
        return MMHeader(rows, cols, entries, field, symmetry, number + 1)
    raise ParseError(f"{name}: no size line after the Matrix Market banner")


def _mm_line_reason(line: bytes, ncols: int, rows: int) -> str | None:
    """Why one Matrix Market entry line is malformed (None: it is not, or it is a comment or blank)."""
    if line.lstrip().startswith(b"%") or not line.strip():
        return None
    text = line.decode("utf-8", "replace").rstrip("\r\n")
    fields = text.split()
    if len(fields) != ncols:
        return f"expected {ncols} fields, got {len(fields)}: {text[:80]!r}"
    if not all(re.fullmatch(_ID, f) for f in fields[:2]):
        return f"expected two positive integer ids, got {text[:80]!r}"
    if not all(1 <= int(f) <= rows for f in fields[:2]):
        return f"id out of range 1..{rows}: {text[:80]!r}"
    return None


def _mm_ids(stream, id_fields: int | None, chunksize: int | None = None):
    """The entries' two id columns as pandas reads them (``chunksize``: an iterator of chunks), ids
    checked as digits only (:class:`DigitsOnly`)."""
    return pd.read_csv(io.BufferedReader(DigitsOnly(stream, id_fields), buffer_size=_ENTRY_READ_BYTES),
                       sep=r"\s+", header=None, comment="%", usecols=[0, 1], dtype=np.int64, engine="c",
                       skip_blank_lines=True, chunksize=chunksize)


def _mm_block_ok(block: bytes, id_fields: int | None, rows: int) -> bool:
    """Whether a block of whole entry lines reads as ids in 1..``rows`` (as :func:`_read_mm` reads them)."""
    try:
        ids = _mm_ids(io.BytesIO(block), id_fields).to_numpy()
    except pd.errors.EmptyDataError:
        return True
    except (ValueError, OverflowError, pd.errors.ParserError):
        return False
    return ids.size == 0 or (ids.min() >= 1 and ids.max() <= rows)


def _find_bad_mm_line(fh, name: str, header: MMHeader) -> tuple[int, str]:
    """``(line number, reason)`` of the first malformed entry of the stream ``fh`` (at its start)."""
    read_mm_header(fh, name)
    ncols = {"pattern": 2, "complex": 4}.get(header.field, 3)
    found = _first_bad_line(fh, name, functools.partial(_mm_block_ok, id_fields=_mm_id_fields(header),
                                                         rows=header.rows),
                            functools.partial(_mm_line_reason, ncols=ncols, rows=header.rows),
                            header.first_entry_line)
    return found or (header.first_entry_line, "malformed entry")


def _mm_id_fields(header: MMHeader) -> int | None:
    """The fields of an entry that must be digits only: all of a pattern entry's, the two ids otherwise
    (the value columns may hold signs and points)."""
    return None if header.field == "pattern" else 2


#: most bytes of text one byte of a gzip stream inflates to (deflate's limit)
_GZIP_MAX_RATIO = 1032


def _stored_text_bound(size: int, gzipped: bool) -> int:
    """At most how many bytes of text a file of ``size`` bytes holds."""
    return size * _GZIP_MAX_RATIO if gzipped else size


def _read_mm(open_stream, name: str, corrupt: str, reopen=None, text_bytes: int | None = None,
             plain_path: Path | None = None) -> EdgeData:
    """Read a Matrix Market coordinate matrix from the binary stream that ``open_stream()`` opens.

    The header is checked before anything graph-sized is allocated, then the entries are read by
    :mod:`dynpr.io.mm_fast` (from ``plain_path``, the stream's plain file, else or where that declines
    from the stream); where that declines (a layout, a line to name), again by pandas :data:`MM_CHUNK_ENTRIES`
    at a time. ``open_stream`` and ``reopen`` (default: ``open_stream``) are context-manager factories; the second opens the stream again.
    ``corrupt`` names the container in the message for a truncated/corrupt stream ("gzip",
    "archive"). ``text_bytes`` bounds the stream's length: a size line declaring more entries than
    that many bytes can hold (4 bytes each at least: ``1 1`` and a newline) is refused before
    anything is allocated.
    """
    broken = (EOFError, gzip.BadGzipFile, zlib.error, OSError, tarfile.TarError)
    try:
        with open_stream() as fh:
            header = read_mm_header(fh, name)
            rows, entries = header.rows, header.entries
            if rows != header.cols:
                raise ParseError(f"{name}: matrix is {rows}x{header.cols}; a graph's adjacency matrix must be square")
            if rows > MAX_VERTICES:
                raise ParseError(f"{name}: header says {rows:,} vertices; vertex ids are int32 (at most {MAX_VERTICES:,})")
            if text_bytes is not None and 4 * entries > text_bytes + 1:
                raise ParseError(f"{name}: line {header.first_entry_line - 1}: the size line declares {entries:,} "
                                 f"entries, but the file holds at most {(text_bytes + 1) // 4:,}: the size line is "
                                 "wrong or the file is truncated")
            mirror = header.symmetry != "general"
            capacity = entries * (2 if mirror else 1)
            # the int32 ids read here (the parser's values and the ids before mirroring freed before the build),
            # then the graph built from them
            check_host_fits(8 * capacity + build_bytes(capacity, rows), f"{name}: graph")
            read = (read_file_entries(plain_path, rows, entries, header.field, header.symmetry, fh.tell())
                    if plain_path is not None and header.field in FILE_FIELDS else None)
            # a stream, or a file in a layout only the stream's checks vouch for (".5" values)
            read = read or read_entries(fh, name, rows, entries, header.field)
        if read is None:
            with (reopen or open_stream)() as fh:
                read_mm_header(fh, name)
                read = _read_mm_entries(fh, name, header)
    except broken as err:
        raise ParseError(f"{name}: corrupt or truncated {corrupt} ({err}); delete it and download again") from None
    except ParseError:  # a ValueError, but already one line
        raise
    except (ValueError, OverflowError, pd.errors.ParserError):
        with (reopen or open_stream)() as fh:
            number, reason = _find_bad_mm_line(fh, name, header)
        raise ParseError(f"{name}: line {number}: {reason}") from None
    src, dst = read
    if mirror:
        off = np.flatnonzero(src != dst)
        src, dst = np.concatenate([src, dst[off]]), np.concatenate([dst, src[off]])
    return EdgeData(src, dst, num_vertices=int(rows))


def _read_mm_entries(fh, name: str, header: MMHeader) -> tuple[np.ndarray, np.ndarray]:
    """The 0-based int32 ids of the entries left in ``fh``, parsed by pandas :data:`MM_CHUNK_ENTRIES`
    at a time (a progress line per chunk)."""
    entries, count = header.entries, 0
    src = np.empty(entries, dtype=VERTEX_DTYPE)
    dst = np.empty(entries, dtype=VERTEX_DTYPE)
    try:
        for chunk in _mm_ids(fh, _mm_id_fields(header), MM_CHUNK_ENTRIES):
            ids = chunk.to_numpy()
            if count + len(ids) > entries:
                raise ParseError(f"{name}: more entries than the header's {entries:,}")
            if ids.min() < 1 or ids.max() > header.rows:
                raise ValueError("id out of range")
            src[count:count + len(ids)] = ids[:, 0] - 1
            dst[count:count + len(ids)] = ids[:, 1] - 1
            count += len(ids)
            log.info("%s: %s of %s entries read", name, f"{count:,}", f"{entries:,}")
    except pd.errors.EmptyDataError:
        count = 0
    if count != entries:
        raise ParseError(f"{name}: {count:,} entries but the header says {entries:,}: the file is truncated")
    return src[:count], dst[:count]


def read_matrix_market(path: str | Path) -> EdgeData:
    """Read a Matrix Market coordinate file as a directed graph (row -> column), in chunks.

    Pattern, integer, real and complex matrices are accepted (values are ignored; ids digits only);
    symmetric (and skew/hermitian) matrices give both directions of each
    off-diagonal entry. Ids become 0-based; ``num_vertices`` is the dimension.
    The header (:func:`read_mm_header`) is checked before anything is
    allocated; entries are then read by SciPy's fast_matrix_market through
    dynpr's checks (:mod:`dynpr.io.mm_fast`), or, in a layout other than one
    separator between fields, parsed by pandas :data:`MM_CHUNK_ENTRIES` at a time,
    into int32 arrays (8 bytes per entry, 16 when symmetric), with progress
    lines on the ``dynpr.io.readers`` logger.

    Parameters
    ----------
    path : str or Path
        ``.mtx`` or ``.mtx.gz``.

    Raises
    ------
    ParseError
        For a non-coordinate, non-square, malformed (with its line number) or
        truncated file, or a header with more vertices than int32 ids hold.
    MemoryError
        When the header's entries would not fit the host's available memory.
    """
    path = Path(path)
    with open(path, "rb") as fh:
        gzipped = fh.read(2) == b"\x1f\x8b"
    return _read_mm(functools.partial(_open_text, path), str(path), "gzip",
                    text_bytes=_stored_text_bound(path.stat().st_size, gzipped), plain_path=None if gzipped else path)


def read_suitesparse_tar(path: str | Path) -> EdgeData:
    """Read the matrix of a SuiteSparse ``<name>.tar.gz`` (``<name>/<name>.mtx`` inside), streamed.

    The member is parsed straight from the decompressed archive stream, in the
    chunks of :func:`read_matrix_market`, with its checks; nothing is written to
    disk. Every member is checked with tarfile's ``data`` filter: an absolute
    path, ``..`` traversal, or a link leaving the folder rejects the whole
    archive. Without ``<name>/<name>.mtx`` (or ``.mtx.gz``), the archive's only
    ``.mtx`` member is read in a second streaming pass; naming a malformed line
    also takes a second pass.

    Raises
    ------
    ParseError
        For an unsafe member, a truncated/corrupt archive or member, a malformed
        entry (naming the member and line), or not exactly one matrix inside.
    MemoryError
        When the header's entries would not fit the host's available memory.
    """
    path = Path(path)
    stem = archive_stem(path)
    wanted_names = (f"{stem}.mtx", f"{stem}.mtx.gz")
    matrices: list[str] = []
    text_bytes: dict[str, int] = {}
    edges = None
    try:
        # stream mode: one pass over the compressed data, no seeking
        with open_tar_stream(path) as tar:
            for member in tar:
                check_member(path, member)
                if not (member.isfile() and member.name.endswith((".mtx", ".mtx.gz"))):
                    continue
                matrices.append(member.name)
                text_bytes[member.name] = _stored_text_bound(member.size, member.name.endswith(".gz"))
                if edges is None and Path(member.name).name in wanted_names:
                    # read the member where the stream is; naming a bad line takes a new pass
                    edges = _read_mm(functools.partial(tar_member_stream, path, member.name, tar, member),
                                     f"{path}:{member.name}", "archive",
                                     reopen=functools.partial(tar_member_stream, path, member.name),
                                     text_bytes=text_bytes[member.name])
    except (tarfile.TarError, EOFError, zlib.error, OSError, lzma.LZMAError) as err:
        raise ParseError(f"{path}: corrupt or truncated archive ({err}); delete it and download again") from None
    wanted = [m for m in matrices if Path(m).name in wanted_names]
    if edges is not None and len(wanted) == 1:
        return edges
    if not wanted and len(matrices) == 1:
        return _read_mm(functools.partial(tar_member_stream, path, matrices[0]), f"{path}:{matrices[0]}", "archive",
                        text_bytes=text_bytes[matrices[0]])
    raise ParseError(f"{path}: expected one matrix {stem}/{stem}.mtx inside, found {matrices or 'no .mtx member'}")


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
            # the parser skips a flood of blank or comment lines; the first line is in the first block
            for block in _text_blocks(fh, str(path), MAX_LINE_BYTES):
                try:
                    first = pd.read_csv(io.BytesIO(block), sep=r"\s+", header=None, comment="#", nrows=1, dtype=str,
                                        engine="c", skip_blank_lines=True)
                except pd.errors.EmptyDataError:
                    continue
                except (ValueError, pd.errors.ParserError):  # read_snap names the line
                    return "snap-edgelist"
                return "snap-temporal" if first.shape[1] == 3 else "snap-edgelist"
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

