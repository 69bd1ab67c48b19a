"""Matrix Market entries at the speed of ``scipy.io.mmread``, with dynpr's strict checks.

A plain (uncompressed) file of pattern, integer or real entries is read by SciPy's
fast_matrix_market straight from the file, as ``scipy.io.mmread`` reads it
(:func:`read_file_entries`), after a scan of its bytes (no NUL, which would crash the parser, and
no CR), and then vouched for: pattern and integer entries must number exactly the bytes their ids
and values take in digits, one separator between fields and a newline after each line; real ones,
whose values are read as integers, exactly three bytes of whitespace per line, and no digit
followed by a minus. Either way no line holds a sign, a point or another byte in an id, an extra
field, a comment or a blank line.

Otherwise SciPy's fast_matrix_market parser (C++, threaded) reads the entries from a stream that checks
them on the way (:class:`CheckedEntries`): ids digits only (:func:`dynpr.io.id_text.odd_id_byte`)
and a canonical layout, each line its fields separated by one space and ended by a newline (no
tabs, CRs, comments or blank lines among the entries, no line of more fields: fast_matrix_market
refuses one of fewer, and would ignore extra ones). Anything else (another layout, an id out of
range, a count that does not add up) is left to the line-naming parser of :mod:`dynpr.io.readers`,
which reads the stream again: a fast path, never a second set of rules."""

from __future__ import annotations

import io
import logging
import os
from dataclasses import dataclass

import numpy as np

from dynpr.io.id_text import LineState, odd_id_byte

log = logging.getLogger("dynpr.io.readers")

#: Bytes handed to the parser per read, checked first.
_READ_BYTES = 1 << 22
#: Bytes between two progress lines.
_PROGRESS_BYTES = 1 << 28
#: Field types and the fields of an entry line (two ids, then values).
FIELDS_PER_ENTRY = {"pattern": 2, "integer": 3, "real": 3, "complex": 4}
# what an id (digits) or a value (also signs, points, exponents) may hold: what is left of an entry line
# without them is its separators
_ID_BYTES, _VALUE_BYTES = b"0123456789", b"0123456789+-.eE"


class NotCanonical(Exception):
    """The entries are not in the layout :class:`CheckedEntries` can vouch for."""


class OddId(ValueError):
    """An id field holds a byte other than digits (a sign, a point, an exponent)."""


class CheckedEntries(io.RawIOBase):
    """The entries of ``stream`` behind a synthetic header ``prefix``, checked as they are read.

    Each piece, without the bytes its fields may hold, must be exactly the separators of ``fields``
    fields per line: one space between two fields, a newline after the last (so no tab, CR, comment,
    blank line, or a line of more fields; fast_matrix_market refuses one of fewer). Raises
    :class:`NotCanonical` at the first piece of another layout and :class:`OddId` at the first with
    an odd byte in an id field (values may hold signs and points; pattern entries hold digits only).
    :meth:`finish` checks the stream's end.
    """

    def __init__(self, stream, prefix: bytes, fields: int, name: str):
        self.stream, self.prefix, self.name = stream, prefix, name
        self.id_fields = None if fields == 2 else 2
        self.field_bytes = _ID_BYTES if fields == 2 else _VALUE_BYTES
        self.line = b" " * (fields - 1) + b"\n"
        self.phase = 0  # separators of the current line seen so far
        self.state = LineState()
        self.read_bytes = 0
        self.line_ended = True  # whether the last byte handed to the parser is a newline

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        if self.prefix:
            data, self.prefix = self.prefix[:len(buffer)], self.prefix[len(buffer):]
        else:
            data = self.stream.read(min(len(buffer), _READ_BYTES))
            if not data and not self.line_ended:
                # the last line's newline, where it has none: fast_matrix_market looks for the end of a
                # line it stops reading before it ends past the end of its data (a segmentation fault)
                data = b"\n"
            self._check(data)
            self.line_ended = data[-1:] == b"\n" if data else self.line_ended
        buffer[:len(data)] = data
        return len(data)

    def _check(self, data: bytes) -> None:
        separators = data.translate(None, self.field_bytes)
        lines = self.line * (len(separators) // len(self.line) + 2)
        if separators != lines[self.phase:self.phase + len(separators)]:
            raise NotCanonical
        self.phase = (self.phase + len(separators)) % len(self.line)
        if self.id_fields is not None:
            odd, self.state = odd_id_byte(data, b"%", self.id_fields, self.state)
            if odd:
                raise OddId("an id that is not digits only")
        before, self.read_bytes = self.read_bytes, self.read_bytes + len(data)
        if self.read_bytes // _PROGRESS_BYTES > before // _PROGRESS_BYTES:
            log.info("%s: %s MB of entries read", self.name, f"{self.read_bytes / 1e6:,.0f}")

    def finish(self) -> None:
        """Read what the parser left (nothing but the end of the stream); the last line ends with its
        newline, or without one after all its separators."""
        while data := self.stream.read(_READ_BYTES):
            self._check(data)
        if self.phase not in (0, len(self.line) - 1):
            raise NotCanonical


def read_entries(stream, name: str, rows: int, entries: int, field: str):
    """The 0-based int32 ``(src, dst)`` of the entries left in ``stream`` (after the size line), read by
    SciPy's fast_matrix_market through :class:`CheckedEntries`; None where the layout is not canonical
    or the parser refuses a line (then the caller reads the stream again and names it).

    Raises
    ------
    OddId
        For an id with a byte other than digits.
    """
    import scipy.io

    checked = CheckedEntries(stream, f"%%MatrixMarket matrix coordinate {field} general\n{rows} {rows} {entries}\n"
                             .encode(), FIELDS_PER_ENTRY[field], name)
    try:
        matrix = scipy.io.mmread(io.BufferedReader(checked, _READ_BYTES))
        checked.finish()
    except NotCanonical:
        return None
    except OddId:
        raise
    except ValueError:  # a line the parser refuses (its message names no file): the caller names it
        return None
    src, dst = matrix.row, matrix.col
    del matrix  # and its values
    return np.asarray(src, dtype=np.int32), np.asarray(dst, dtype=np.int32)


#: Bytes of a plain file scanned at once (its scratch: two masks of this length).
_SCAN_BYTES = 1 << 20
#: Fields whose plain files :func:`read_file_entries` reads: pattern and integer entries vouched for by
#: their byte count, real ones by their whitespace (a real value's text has no one length).
FILE_FIELDS = ("pattern", "integer", "real")
# the bytes below "!" (space, tab, newline and the other control bytes), the digits and a minus sign
_BELOW_PRINTABLE, _DIGIT_ZERO, _MINUS = 33, ord("0"), ord("-")


def _digits_total(numbers: np.ndarray, largest: int, plus: int = 0) -> int:
    """The decimal digits of ``numbers + plus`` (non-negative, at most ``largest``) all told, without a
    loop per number: each has one digit, and one more for each power of ten it reaches."""
    total, power = numbers.size, 10
    reaches = np.empty(numbers.shape, dtype=bool)  # one buffer for every power: no page faults per pass
    while power <= largest:
        total += np.count_nonzero(np.greater_equal(numbers, power - plus, out=reaches))
        power *= 10
    return total


@dataclass(frozen=True)
class EntryBytes:
    """What :func:`scan_entry_bytes` found in a file's entries (``whitespace`` and
    ``digit_then_minus`` only where asked for their layout)."""

    #: bytes below "!": separators, newlines and any other control byte
    whitespace: int
    #: whether a digit is followed by "-" somewhere (never in a number: "5-3", "2-1")
    digit_then_minus: bool


def scan_entry_bytes(path, offset: int, layout: bool) -> EntryBytes | None:
    """The bytes of a file from ``offset`` on, scanned in pieces (read, not mapped: a file cut short
    while it is read must not end the process with a bus error); None where they hold a NUL
    (fast_matrix_market's search for the end of a line runs past one: a segmentation fault, as it
    does past the end of a last line without a newline), a CR (which it takes for a space), or where
    they do not end with a newline. ``layout`` also counts what :class:`EntryBytes` holds, at a cost
    per byte (without it, only the two searches, at memory speed)."""
    piece = bytearray(_SCAN_BYTES)  # one buffer, read into: no fresh pages per piece
    below = np.empty(_SCAN_BYTES, dtype=bool)
    digits = np.empty(_SCAN_BYTES, dtype=np.uint8)
    whitespace, digit_then_minus, last = 0, False, b"\n"
    with open(path, "rb", buffering=0) as fh:
        fh.seek(offset)
        while length := fh.readinto(piece):
            if piece.find(b"\0", 0, length) >= 0 or piece.find(b"\r", 0, length) >= 0:
                return None
            if layout:
                data = np.frombuffer(piece, dtype=np.uint8, count=length)
                whitespace += np.count_nonzero(np.less(data, _BELOW_PRINTABLE, out=below[:length]))
                if not digit_then_minus and piece.find(b"-", 0, length) >= 0:
                    # a digit, then "-" (also across the pieces' seam)
                    digit = np.less_equal(np.subtract(data, _DIGIT_ZERO, out=digits[:length]), 9, out=below[:length])
                    digit_then_minus = (last.isdigit() and data[0] == _MINUS) or bool(
                        np.logical_and(digit[:-1], data[1:] == _MINUS, out=digit[:-1]).any())
            last = piece[length - 1:length]
    return EntryBytes(whitespace, digit_then_minus) if last == b"\n" else None


def read_file_entries(path, rows: int, entries: int, field: str, symmetry: str,
                      offset: int) -> tuple[np.ndarray, np.ndarray] | None:
    """The 0-based int32 ``(src, dst)`` of a plain Matrix Market file of pattern, integer or real
    entries (:data:`FILE_FIELDS`) whose entries begin at byte ``offset``, as the header read by dynpr
    declares them; None where fast_matrix_market (SciPy >= 1.12) is missing, reads another header,
    refuses a line, or where the entries are not in the layout this can vouch for (the caller then
    reads the file another way). The entries are scanned first (:func:`scan_entry_bytes`): a NUL, a
    CR, or a last line without its newline is declined before fast_matrix_market reads them.

    fast_matrix_market reads each line's leading numbers and ignores what follows them (``2 3.0``,
    ``1 2 5`` in a pattern file), so what it read is checked:

    - pattern and integer entries against the file's size: each line takes at least its numbers'
      digits, a separator between two fields and a newline, so a file of exactly that many bytes
      holds nothing else (no sign, point, leading zero, extra field, comment or blank line); the
      one separator may be a space or a tab, as the strict parser reads.
    - real entries against their whitespace. Their values are read as integers (dynpr keeps none of
      them): fast_matrix_market then takes a token to start only at a digit or a "-" and skips
      spaces and tabs between tokens. With no digit followed by "-" in the file, each line's three
      tokens need a separator before the second and the third, and the file's newlines one per
      line; so a file of exactly ``3 * entries`` bytes below "!" has, on each line, digits (the
      ids, leading zeros allowed, as the stream and the strict parser read them), one space or tab,
      digits, one, and a value without whitespace: no sign or point in an id, no extra field, blank
      line, comment or leading space. A value that does not begin as an integer would (".5", "+1",
      "nan") makes fast_matrix_market refuse its line: declined.
    """
    try:
        from scipy.io import _fast_matrix_market as fmm
        from scipy.io._fast_matrix_market import _fmm_core
    except ImportError:  # SciPy < 1.12
        return None
    real = field == "real"
    try:
        cursor = _fmm_core.open_read_file(str(path), fmm.PARALLELISM)
        read_header = cursor.header
        if ((read_header.nrows, read_header.ncols, read_header.nnz, read_header.field, read_header.symmetry)
                != (rows, rows, entries, field, symmetry) or (scan := scan_entry_bytes(path, offset, real)) is None):
            cursor.close()
            return None
        log.info("%s: reading %s entries with fast_matrix_market", path, f"{entries:,}")  # one call: no progress
        src = np.empty(entries, dtype=np.int32)
        dst = np.empty(entries, dtype=np.int32)
        # an integer entry's values are counted in digits; the others are not kept: all written to one element
        values = np.empty(entries, dtype=np.int64) if field == "integer" else np.lib.stride_tricks.as_strided(
            np.empty(1, dtype=np.int64 if real else np.float64), shape=(entries,), strides=(0,))
        _fmm_core.read_body_coo(cursor, src, dst, values)  # refuses an id outside 1..rows
    except (ValueError, OverflowError):  # a line it refuses (its message names no file): the caller names it
        return None
    if real:
        vouched = not scan.digit_then_minus and scan.whitespace == 3 * entries
    else:
        vouched = _byte_count_matches(path, offset, src, dst, values if field == "integer" else None, rows)
    return (src, dst) if vouched else None


def _byte_count_matches(path, offset: int, src: np.ndarray, dst: np.ndarray, values: np.ndarray | None,
                        rows: int) -> bool:
    """Whether the entries from ``offset`` on take exactly the bytes of the ids ``src + 1`` and
    ``dst + 1`` (and the integer ``values``) in digits, signs, one separator between two fields and a
    newline after each line."""
    fields = 2 if values is None else 3
    least_bytes = fields * src.size + _digits_total(src, rows, plus=1) + _digits_total(dst, rows, plus=1)
    if values is not None:
        least_bytes += np.count_nonzero(values < 0)  # their signs
        magnitudes = np.abs(values, out=values)
        least_bytes += _digits_total(magnitudes, int(magnitudes.max(initial=0)))
    entry_bytes = os.stat(path).st_size - offset
    return entry_bytes == least_bytes
