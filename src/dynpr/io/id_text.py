"""Ids in graph text checked as digits only, in bounded pieces at a cost per byte.

pandas' int64 parse reads ``2.0``, ``1e3`` or ``+4`` as integers; these checks run before it
(:mod:`dynpr.io.readers`): on SNAP blocks (:func:`odd_id_byte`) and on Matrix Market entries as a
stream (:class:`DigitsOnly`), where only the two id fields are checked and the value columns after
them may hold signs, points and exponents. Comments (``#`` or ``%`` to the end of the line) are
skipped; a piece may end inside a line, a field or a comment (:class:`LineState` carries on).
"""

from __future__ import annotations

import functools
import io
import re
from dataclasses import dataclass

import numpy as np

# bytes an id may contain: digits (and the separators around it)
DATA_CHARS = b"0123456789 \t\r\n"


def _separators(raw: np.ndarray) -> np.ndarray:
    """Which bytes separate fields: what ``bytes.split()`` splits at (a space, or 9-13: tab to CR)."""
    return (raw == 32) | ((raw - np.uint8(9)) <= 4)


def _odd_mask(raw: np.ndarray) -> np.ndarray:
    """Which bytes are neither digits nor one of :data:`DATA_CHARS`' separators."""
    return ((raw - np.uint8(48)) > 9) & (raw != 32) & (raw != 9) & (raw != 13) & (raw != 10)


@dataclass(frozen=True)
class LineState:
    """Where a piece of a stream starts within its line: inside a comment, after how many fields,
    and whether the byte before it was a separator (a field begun in the previous piece goes on)."""

    in_comment: bool = False
    fields: int = 0
    after_separator: bool = True


def _line_state_after(block: bytes, comment: bytes, state: LineState) -> LineState:
    """The :class:`LineState` at the end of ``block`` (read from its last line only)."""
    if not block:
        return state
    newline = block.rfind(b"\n")
    tail = block[newline + 1:]
    fields = len(tail.split())
    if newline < 0:  # the line goes on from the previous piece, maybe inside a field
        fields += state.fields - (not state.after_separator and tail[:1].strip() != b"")
    return LineState(in_comment=comment in tail or (newline < 0 and state.in_comment), fields=fields,
                      after_separator=block[-1:].isspace())


#: Bytes checked at once by :func:`odd_id_byte` (its scratch is a few int32 arrays of this length).
CHECK_PIECE_BYTES = 1 << 20


def odd_id_byte(block: bytes, comment: bytes = b"#", id_fields: int | None = None,
                 state: LineState = LineState()) -> tuple[bool, LineState]:
    """Whether ``block`` has a byte other than digits and separators in one of the first ``id_fields``
    fields of a line (all fields when None), outside comments (``comment`` to the end of the line),
    and the state its last line ends in (``state``: where the block starts). A sign, a decimal point
    or an exponent (``-1``, ``2.0``, ``1e3``) makes an id no integer; a value column after the ids
    may hold them. Checked in pieces of :data:`CHECK_PIECE_BYTES` at a cost per byte, however many
    comments or values the block holds."""
    odd_bytes = len(block.translate(None, DATA_CHARS))
    if not odd_bytes:  # the usual case of an edge list, at memory speed
        return False, _line_state_after(block, comment, state)
    first_line_end = block.find(b"\n") + 1
    if odd_bytes > len(block) // _MOSTLY_ODD and first_line_end:
        # mostly comments (or values): a search line by line in C, the first line as the exact check has it
        if _odd_id_byte_in_pieces(block[:first_line_end], comment, id_fields, state):
            return True, state
        return (_odd_field_pattern(comment, id_fields).search(block, first_line_end - 1) is not None,
                _line_state_after(block, comment, state))
    return _odd_id_byte_in_pieces(block, comment, id_fields, state), _line_state_after(block, comment, state)


#: Above one odd byte in this many, :func:`odd_id_byte` searches line by line (a flood of comment lines: 20 times
#: faster) rather than placing each odd byte in its line (faster where odd bytes are few).
_MOSTLY_ODD = 4


@functools.cache
def _odd_field_pattern(comment: bytes, id_fields: int | None) -> re.Pattern:
    """A newline, then a line with an odd byte (neither a digit nor a space, tab or CR) in one of its first
    ``id_fields`` fields (any field when None) before any ``comment`` mark: what
    :func:`_odd_id_byte_in_piece` finds, line by line."""
    odd = rb"[^0-9 \t\r\n" + re.escape(comment) + rb"]"
    if id_fields is None:
        return re.compile(rb"\n[0-9 \t\r]*" + odd)
    # within the first fields, or among the separators after them (a vertical tab or form feed)
    return re.compile(rb"\n[ \t\r]*(?:[0-9]+[ \t\r]+){0,%d}(?:[0-9]*%s|[0-9]+[ \t\r]*[\x0b\x0c])"
                      % (id_fields - 1, odd))


def _odd_id_byte_in_pieces(block: bytes, comment: bytes, id_fields: int | None, state: LineState) -> bool:
    """:func:`odd_id_byte`'s answer, each odd byte placed in its line and field, piece by piece."""
    view = memoryview(block)
    for start in range(0, len(block), CHECK_PIECE_BYTES):
        piece = view[start:start + CHECK_PIECE_BYTES]
        if _odd_id_byte_in_piece(np.frombuffer(piece, dtype=np.uint8), comment[0], id_fields, state):
            return True
        state = _line_state_after(bytes(piece), comment, state)
    return False


def _odd_id_byte_in_piece(raw: np.ndarray, comment: int, id_fields: int | None, state: LineState) -> bool:
    """:func:`odd_id_byte` on one piece: running counts of newlines, comment marks and fields place
    every odd byte in its line, without a search per byte."""
    at = np.flatnonzero(_odd_mask(raw))
    if not at.size:
        return False
    newline = raw == ord("\n")
    line = np.cumsum(newline, dtype=np.int32)[at]  # newlines before each odd byte; 0: the line the piece began in
    newline_at = np.flatnonzero(newline)
    first = newline_at[(line - 1).clip(0)] + 1 if newline_at.size else np.zeros_like(at)
    first[line == 0] = 0  # each odd byte's line begins here (0: at or before the piece's start)

    def on_its_line(counts: np.ndarray) -> np.ndarray:
        """How many of the counted bytes lie on each odd byte's line, up to it, within the piece."""
        return counts[at] - np.where(first > 0, counts[first - 1], 0)

    continued = line == 0
    in_comment = (on_its_line(np.cumsum(raw == comment, dtype=np.int32)) > 0) | (continued & state.in_comment)
    if id_fields is None or in_comment.all():
        return not in_comment.all()
    separator = _separators(raw)
    begins = ~separator  # the first byte of each field
    begins[1:] &= separator[:-1]
    begins[0] &= state.after_separator
    field = on_its_line(np.cumsum(begins, dtype=np.int32)) + np.where(continued, state.fields, 0)
    return bool(np.any(~in_comment & (field <= id_fields)))


class DigitsOnly(io.RawIOBase):
    """A stream of Matrix Market entries, refused (``ValueError``) at the first piece with a byte other
    than digits and separators in the first ``id_fields`` fields of a line (all when None) outside
    ``%`` comments: the parser would read ``2.0`` or ``1e3`` as an integer id."""

    def __init__(self, stream, id_fields: int | None = None):
        self.stream = stream
        self.id_fields = id_fields
        self.state = LineState()

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    def readinto(self, buffer) -> int:
        data = self.stream.read(len(buffer))
        odd, self.state = odd_id_byte(data, b"%", self.id_fields, self.state)
        if odd:
            raise ValueError("an id that is not digits only")
        buffer[:len(data)] = data
        return len(data)


# non-ASCII or control characters (a non-breaking space looks like a separator but is not one)
_ODD_CHAR = re.compile(r"[^\x20-\x7e\t\r\n]")


def odd_character_reason(text: str, *, labels: bool = False) -> str | None:
    """Why a decoded line is no text of ids: binary data (a control character or undecodable
    bytes), or, unless ``labels`` (whose text may be any Unicode), a non-ASCII character such as a
    non-breaking space, which looks like a separator but is not one. None: neither."""
    odd = _ODD_CHAR.search(text)
    if odd is None:
        return None
    if odd.group() == "\ufffd" or ord(odd.group()) < 32:
        return "binary data, not a text edge list"
    if labels:
        binary = re.search(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ufffd]", text)
        return None if binary is None else "binary data, not a text edge list"
    return (f"unexpected character {odd.group()!r} (U+{ord(odd.group()):04X}) at column "
            f"{odd.start() + 1}; fields are ids separated by spaces or tabs: {text[:80]!r}")
