"""Matrix Market entries at the speed of ``scipy.io.mmread``, with dynpr's strict checks.

A plain (uncompressed) file of pattern or integer entries is read by SciPy's fast_matrix_market
straight from the file, as ``scipy.io.mmread`` reads it (:func:`read_file_entries`), and then
vouched for from what it read: the entries' bytes must number exactly what the ids (and integer
values) take in digits, one separator between fields and a newline after each line, so no line
holds a sign, a point, a leading zero, an extra field or a comment, and no CR is among them.

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

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        if self.prefix:
            data, self.prefix = self.prefix[:len(buffer)], self.prefix[len(buffer):]
        else:
            data = self.stream.read(min(len(buffer), _READ_BYTES))
            self._check(data)
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


#: Bytes of a plain file scanned at once for a CR.
_SCAN_BYTES = 1 << 20
#: Fields whose entries :func:`read_file_entries` vouches for from the parsed numbers alone (a real
#: value's text has no one length).
FILE_FIELDS = ("pattern", "integer")


def _digits_total(numbers: np.ndarray, largest: int, plus: int = 0) -> int:
    """The decimal digits of ``numbers + plus`` (non-negative, at most ``largest``) all told, without a
    loop per number: each has one digit, and one more for each power of ten it reaches."""
    total, power = numbers.size, 10
    reaches = np.empty(numbers.shape, dtype=bool)  # one buffer for every power: no page faults per pass
    while power <= largest:
        total += np.count_nonzero(np.greater_equal(numbers, power - plus, out=reaches))
        power *= 10
    return total


def _has_carriage_return(path, offset: int) -> bool:
    """Whether the file holds a CR byte from ``offset`` on (read in pieces, not mapped: a file cut
    short while it is read must not end the process with a bus error)."""
    piece = bytearray(_SCAN_BYTES)  # one buffer, read into: no fresh pages per piece
    with open(path, "rb", buffering=0) as fh:
        fh.seek(offset)
        while length := fh.readinto(piece):
            if piece.find(b"\r", 0, length) >= 0:
                return True
    return False


def read_file_entries(path, rows: int, entries: int, field: str, symmetry: str,
                      offset: int) -> tuple[np.ndarray, np.ndarray] | None:
    """The 0-based int32 ``(src, dst)`` of a plain Matrix Market file of pattern or integer entries
    (:data:`FILE_FIELDS`) whose entries begin at byte ``offset``, as the header read by dynpr declares
    them; None where fast_matrix_market (SciPy >= 1.12) is missing, reads another header, refuses a
    line, or where the entries are not in the layout this can vouch for (the caller then reads the
    file with the line-naming parser).

    fast_matrix_market reads each line's leading integers and ignores what follows them (``2 3.0``,
    ``1 2 5`` in a pattern file), so what it read is checked against the file's size: each line
    takes at least its numbers' digits, a separator between two fields and a newline (the last may
    lack it), so a file of exactly that many bytes holds nothing else (no sign, point, leading zero,
    extra field, comment or blank line). The one separator may be a space or a tab, which the
    strict parser also reads, or a CR, which it does not: a file with a CR is declined.
    """
    try:
        from scipy.io import _fast_matrix_market as fmm
        from scipy.io._fast_matrix_market import _fmm_core
    except ImportError:  # SciPy < 1.12
        return None
    integer = field == "integer"
    try:
        cursor = _fmm_core.open_read_file(str(path), fmm.PARALLELISM)
        read_header = cursor.header
        if (read_header.nrows, read_header.ncols, read_header.nnz, read_header.field,
                read_header.symmetry) != (rows, rows, entries, field, symmetry):
            cursor.close()
            return None
        log.info("%s: reading %s entries with fast_matrix_market", path, f"{entries:,}")  # one call: no progress
        src = np.empty(entries, dtype=np.int32)
        dst = np.empty(entries, dtype=np.int32)
        # a pattern entry's value (1) is not needed: all written to one element
        values = np.empty(entries, dtype=np.int64) if integer else np.lib.stride_tricks.as_strided(
            np.empty(1), shape=(entries,), strides=(0,))
        _fmm_core.read_body_coo(cursor, src, dst, values)  # refuses an id outside 1..rows
    except (ValueError, OverflowError):  # a line it refuses (its message names no file): the caller names it
        return None
    fields = 3 if integer else 2
    least_bytes = fields * entries + _digits_total(src, rows, plus=1) + _digits_total(dst, rows, plus=1)
    if integer:
        least_bytes += np.count_nonzero(values < 0)  # their signs
        magnitudes = np.abs(values, out=values)
        least_bytes += _digits_total(magnitudes, int(magnitudes.max(initial=0)))
        del values, magnitudes
    entry_bytes = os.stat(path).st_size - offset
    if entry_bytes not in (least_bytes, least_bytes - (entries > 0)) or _has_carriage_return(path, offset):
        return None
    return src, dst
