"""Parsers for the graph file formats in the catalog, vectorized end to end.

SNAP text files and Matrix Market entries go through pandas' C parser (Matrix
Market in chunks, also streamed straight out of a SuiteSparse ``.tar.gz``). No
code here loops in Python over lines on the happy path: only after a parse
failure do :func:`_find_bad_line` / :func:`_find_bad_mm_line` scan the file to
name the first malformed line.
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
from dynpr.graph import MAX_VERTICES, VERTEX_DTYPE
from dynpr.hostmem import check_host_fits
from dynpr.tar_streams import archive_stem, check_member, open_tar_stream, tar_member_stream

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


def _find_bad_line(path: Path, ncols: int) -> tuple[int, str] | None:
    """Return ``(line number, reason)`` of the first line that is not ``ncols`` ids.

    Only called after pandas failed, so a Python loop over lines is acceptable here.
    """
    data_line = re.compile(rb"^\s*" + rb"\s+".join([_ID.encode()] * ncols) + rb"\s*$")
    with _open_text(path) as fh:
        for number, line in enumerate(_lines(fh, str(path)), start=1):
            data = line.split(b"#", 1)[0]  # the parser drops a comment after the ids too
            if _COMMENT_OR_BLANK.match(data) or data_line.match(data):
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


#: Bytes of text parsed per block of a SNAP file (whole lines): bounds the parser's scratch.
TEXT_BLOCK_BYTES = 1 << 26
#: Host bytes per edge record and per vertex that :func:`dynpr.prepare.build_graph` allocates at its
#: peak (the int64 keys and their sort, the CSR and its transpose with their scratch, the stats);
#: tests/test_memory_model.py measures both against this model.
BUILD_BYTES_PER_RECORD = 80
BUILD_BYTES_PER_VERTEX = 88
# bytes an id may contain: digits (and the separators around it)
_DATA_CHARS = b"0123456789 \t\r\n"


def _separators(raw: np.ndarray) -> np.ndarray:
    """Which bytes separate fields: what ``bytes.split()`` splits at (a space, or 9-13: tab to CR)."""
    return (raw == 32) | ((raw - np.uint8(9)) <= 4)


def _odd_bytes(raw: np.ndarray) -> np.ndarray:
    """Where the bytes are neither digits nor in :data:`_DATA_CHARS`' separators (comparisons, not a
    table lookup: several times faster per byte)."""
    return np.flatnonzero(((raw - np.uint8(48)) > 9) & (raw != 32) & (raw != 9) & (raw != 13) & (raw != 10))


@dataclass(frozen=True)
class _LineState:
    """Where a piece of a stream starts within its line: inside a comment, after how many fields,
    and whether the byte before it was a separator (a field begun in the previous piece goes on)."""

    in_comment: bool = False
    fields: int = 0
    after_separator: bool = True


def build_bytes(records: int, vertices: int) -> int:
    """Peak host bytes of building a graph of ``vertices`` from ``records`` edge records (the model
    :func:`dynpr.prepare.build_graph` and the readers check before allocating)."""
    return BUILD_BYTES_PER_RECORD * records + BUILD_BYTES_PER_VERTEX * vertices


def _text_blocks(fh, name: str):
    """Blocks of whole lines, about :data:`TEXT_BLOCK_BYTES` each, from a binary stream (read in
    bounded pieces, also through gzip)."""
    rest, lines = b"", 0
    while data := fh.read(TEXT_BLOCK_BYTES):
        data = rest + data
        cut = data.rfind(b"\n") + 1
        if cut == 0 and len(data) > TEXT_BLOCK_BYTES:
            raise ParseError(f"{name}: line {lines + 1} is longer than {TEXT_BLOCK_BYTES:,} bytes: not a text "
                             "graph file")
        rest = data[cut:]
        if cut:
            lines += data.count(b"\n", 0, cut)
            yield data[:cut]
    if rest:
        yield rest


def _line_state_after(block: bytes, comment: bytes, state: _LineState) -> _LineState:
    """The :class:`_LineState` at the end of ``block`` (read from its last line only)."""
    if not block:
        return state
    newline = block.rfind(b"\n")
    tail = block[newline + 1:]
    fields = len(tail.split())
    if newline < 0:  # the line goes on from the previous piece, maybe inside a field
        fields += state.fields - (not state.after_separator and tail[:1].strip() != b"")
    return _LineState(in_comment=comment in tail or (newline < 0 and state.in_comment), fields=fields,
                      after_separator=block[-1:].isspace())


def _odd_id_byte(block: bytes, comment: bytes = b"#", id_fields: int | None = None,
                 state: _LineState = _LineState()) -> tuple[bool, _LineState]:
    """Whether ``block`` has a byte other than digits and separators in one of the first ``id_fields``
    fields of a line (all fields when None), outside comments (``comment`` to the end of the line),
    and the state its last line ends in (``state``: where the block starts). A sign, a decimal point
    or an exponent (``-1``, ``2.0``, ``1e3``) makes an id no integer; a value column after the ids
    may hold them."""
    ends = _line_state_after(block, comment, state)
    if not block.translate(None, _DATA_CHARS):  # the usual case of an edge list, at memory speed
        return False, ends
    raw = np.frombuffer(block, dtype=np.uint8)
    odd = _odd_bytes(raw)
    newlines = np.flatnonzero(raw == ord("\n"))
    line = np.searchsorted(newlines, odd, side="right") - 1  # the newline before each odd byte, -1: none
    line_start = np.where(line >= 0, newlines[line.clip(0)] + 1 if newlines.size else 0, 0)
    continued = line < 0  # on the line the block started in
    marks = odd[raw[odd] == comment[0]]
    last_mark = np.searchsorted(marks, odd, side="right") - 1
    in_comment = (last_mark >= 0) & ((marks[last_mark.clip(0)] if marks.size else 0) >= line_start)
    in_comment |= continued & state.in_comment
    if id_fields is not None:  # the field each odd byte is in, counted from 1 on its line
        separator = _separators(raw)
        begins = ~separator  # the first byte of each field
        begins[1:] &= separator[:-1]
        begins[0] &= state.after_separator
        begin_at = np.flatnonzero(begins)
        field = (np.searchsorted(begin_at, odd, side="right") - np.searchsorted(begin_at, line_start)
                 + np.where(continued, state.fields, 0))
        in_comment |= field > id_fields  # not an id: let the parser skip it as it skips a comment
    return bool(np.any(~in_comment)), ends


class _DigitsOnly(io.RawIOBase):
    """A stream of Matrix Market entries, refused (``ValueError``) at the first piece with a byte other
    than digits and separators in the first ``id_fields`` fields of a line (all when None) outside
    ``%`` comments: the parser would read ``2.0`` or ``1e3`` as an integer id."""

    def __init__(self, stream, id_fields: int | None = None):
        self.stream = stream
        self.id_fields = id_fields
        self.state = _LineState()

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    def readinto(self, buffer) -> int:
        data = self.stream.read(len(buffer))
        odd, self.state = _odd_id_byte(data, b"%", self.id_fields, self.state)
        if odd:
            raise ValueError("an id that is not digits only")
        buffer[:len(data)] = data
        return len(data)


def _parse_block(block: bytes, ncols: int) -> np.ndarray | None:
    """The ids of a block of whole lines as an int64 ``(records, ncols)`` array; None where it is not
    ``ncols`` non-negative integer ids per line."""
    if _odd_id_byte(block)[0]:
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
    blocks, records = [], 0
    try:
        with _open_text(path) as fh:
            for block in _text_blocks(fh, str(path)):
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
            continue
        size = line.split()
        if len(size) != 3 or not all(re.fullmatch(_ID.encode(), f) for f in size):
            text = line.decode("utf-8", "replace").rstrip("\r\n")
            raise ParseError(f"{name}: line {number}: expected the size line 'rows cols entries', got {text[:80]!r}")
        rows, cols, entries = (int(f) for f in size)
        return MMHeader(rows, cols, entries, field, symmetry, number + 1)
    raise ParseError(f"{name}: no size line after the Matrix Market banner")


def _find_bad_mm_line(fh, name: str, first: int, ncols: int, rows: int) -> tuple[int, str]:
    """``(line number, reason)`` of the first malformed entry at or after line ``first`` of the stream ``fh``.

    Only called after the chunked parse failed, so a Python loop over lines is acceptable here.
    """
    for number, line in enumerate(_lines(fh, name), start=1):
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


#: most bytes of text one byte of a gzip stream inflates to (deflate's limit)
_GZIP_MAX_RATIO = 1032


def _stored_text_bound(size: int, gzipped: bool) -> int:
    """At most how many bytes of text a file of ``size`` bytes holds."""
    return size * _GZIP_MAX_RATIO if gzipped else size


def _read_mm(open_stream, name: str, corrupt: str, reopen=None, text_bytes: int | None = None) -> EdgeData:
    """Read a Matrix Market coordinate matrix from the binary stream that ``open_stream()`` opens.

    The header is checked before anything graph-sized is allocated, then the
    entries are parsed :data:`MM_CHUNK_ENTRIES` at a time. ``open_stream`` and
    ``reopen`` (default: ``open_stream``) are context-manager factories; the
    second is called only to name a malformed line, from the start again.
    ``corrupt`` names the container in the message for a truncated/corrupt
    stream ("gzip", "archive"). ``text_bytes`` bounds the stream's length: a size
    line declaring more entries than that many bytes can hold (4 bytes each at
    least: ``1 1`` and a newline) is refused before anything is allocated.
    """
    broken = (EOFError, gzip.BadGzipFile, zlib.error, OSError, tarfile.TarError)
    count = 0
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
            # the int32 ids read here, then the graph built from them
            check_host_fits(8 * capacity + build_bytes(capacity, rows), f"{name}: graph")
            src = np.empty(capacity, dtype=VERTEX_DTYPE)
            dst = np.empty(capacity, dtype=VERTEX_DTYPE)
            # ids are digits only; the value columns after them may hold signs and points
            entries_stream = io.BufferedReader(_DigitsOnly(fh, None if header.field == "pattern" else 2),
                                               buffer_size=_ENTRY_READ_BYTES)
            chunks = pd.read_csv(entries_stream, sep=r"\s+", header=None, comment="%", usecols=[0, 1],
                                 dtype=np.int64, engine="c", skip_blank_lines=True, chunksize=MM_CHUNK_ENTRIES)
            for chunk in chunks:
                ids = chunk.to_numpy()
                if count + len(ids) > entries:
                    raise ParseError(f"{name}: more entries than the header's {entries:,}")
                if ids.min() < 1 or ids.max() > rows:
                    raise ValueError("id out of range")
                src[count:count + len(ids)] = ids[:, 0] - 1
                dst[count:count + len(ids)] = ids[:, 1] - 1
                count += len(ids)
                log.info("%s: %s of %s entries read", name, f"{count:,}", f"{entries:,}")
    except broken as err:
        raise ParseError(f"{name}: corrupt or truncated {corrupt} ({err}); delete it and download again") from None
    except pd.errors.EmptyDataError:
        count = 0
    except ParseError:  # a ValueError, but already one line
        raise
    except (ValueError, OverflowError, pd.errors.ParserError):
        ncols = {"pattern": 2, "complex": 4}.get(header.field, 3)
        with (reopen or open_stream)() as fh:
            number, reason = _find_bad_mm_line(fh, name, header.first_entry_line, ncols, rows)
        raise ParseError(f"{name}: line {number}: {reason}") from None
    if count != entries:
        raise ParseError(f"{name}: {count:,} entries but the header says {entries:,}: the file is truncated")
    if mirror:
        off = np.flatnonzero(src[:count] != dst[:count])
        src[count:count + len(off)], dst[count:count + len(off)] = dst[off], src[off]
        count += len(off)
    return EdgeData(src[:count], dst[:count], num_vertices=int(rows))


def read_matrix_market(path: str | Path) -> EdgeData:
    """Read a Matrix Market coordinate file as a directed graph (row -> column), in chunks.

    Pattern, integer, real and complex matrices are accepted (values are ignored; ids digits only);
    symmetric (and skew/hermitian) matrices give both directions of each
    off-diagonal entry. Ids become 0-based; ``num_vertices`` is the dimension.
    The header (:func:`read_mm_header`) is checked before anything is
    allocated; entries are then parsed :data:`MM_CHUNK_ENTRIES` at a time
    straight into int32 arrays (8 bytes per entry, 16 when symmetric), with a
    progress line per chunk on the ``dynpr.readers`` logger.

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
                    text_bytes=_stored_text_bound(path.stat().st_size, gzipped))


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
            for line in _lines(fh, str(path)):
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

