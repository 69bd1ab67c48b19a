"""Text edge lists as users have them: a delimiter, a header line, string labels, a weight column.

The first data lines of a file are sampled (:func:`sniff`) to find its delimiter (a comma, a tab
or runs of whitespace), whether its first line is a header, how many columns it has and whether
its ids are integers. A plain SNAP file (integer ids separated by whitespace, no header) keeps
the fast path of :func:`dynpr.io.readers.read_snap`; any other list is read here in blocks by
pandas' C parser, string labels mapped to dense ids by one sorted :func:`pandas.factorize` (no
Python loop per line). A third column is a weight unless the catalog or the caller says the
list is temporal; dynpr's PageRank is unweighted, so weights are checked and then ignored, with
a one-line note on the ``dynpr.io.edge_lists`` logger.
"""

from __future__ import annotations

import functools
import io
import logging
import re
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd

from dynpr.errors import InputError, ParseError
from dynpr.graph.hostmem import BUILD_BYTES_PER_RECORD, check_host_fits
from dynpr.io.id_text import odd_character_reason, odd_id_byte
from dynpr.io.readers import (_FIRST_DATA_LINE, _NEXT_DATA_LINE, MAX_LINE_BYTES, EdgeData, _first_bad_line, _lines,
                              _open_text, _text_blocks, detect_format, log_long_read, read_matrix_market, read_snap,
                              read_suitesparse_tar)

log = logging.getLogger("dynpr.io.edge_lists")

#: names a first line of a list may hold to be recognised as its header
HEADER_WORDS = frozenset({"source", "target", "src", "dst", "from", "to", "node1", "node2", "u", "v", "weight",
                          "time", "timestamp"})
#: delimiter names accepted besides the character itself
DELIMITER_NAMES = {"comma": ",", "tab": "\t", "whitespace": None}
#: data lines sampled to find a list's layout
SAMPLE_LINES = 100
#: host bytes held per label beside its edges while a labelled list is read (a Python str each)
_LABEL_BYTES = 64

_INTEGER = re.compile(r"\d{1,18}")
_NUMBER = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?|[-+]?inf(inity)?|nan", re.IGNORECASE)
# control characters other than tab, newline and carriage return: binary data, not labels
_CONTROL = re.compile(rb"[\x00-\x08\x0b\x0c\x0e-\x1f]")


@dataclass(frozen=True)
class EdgeListOptions:
    """How to read a text edge list; None means found from the file's first lines (:func:`sniff`).

    Attributes
    ----------
    delimiter : str or None
        The character between fields (``","``, ``"\\t"``, ...); None: a comma or a tab when every
        sampled line has one, else runs of whitespace.
    header : bool or None
        Whether the first data line names the columns; None: recognised when its fields are column
        names (:data:`HEADER_WORDS`) or not numbers where the lines below hold numbers.
    labels : bool or None
        Read ids as string labels (``alice bob``); None: when most sampled ids are not non-negative
        integers (where a few are not, their lines are refused as errors).
    undirected : bool
        Each edge stands for both directions.
    temporal : bool
        The third column holds integer times (edges ordered by them); otherwise it is a weight.
    """

    delimiter: str | None = None
    header: bool | None = None
    labels: bool | None = None
    undirected: bool = False
    temporal: bool = False

    def __post_init__(self):
        if self.delimiter is not None and (len(self.delimiter) != 1 or self.delimiter in "#\"\r\n"
                                           or self.delimiter.isalnum()):
            raise InputError(f"delimiter must be one character other than a letter, digit, '#', quote or newline "
                             f"(or one of {', '.join(DELIMITER_NAMES)}), got {self.delimiter!r}")

    @property
    def is_default(self) -> bool:
        """Whether every option is left to the file (nothing asked of it)."""
        return self == EdgeListOptions()


def delimiter_option(value: str | None) -> str | None:
    """A delimiter given by name (``comma``, ``tab``, ``whitespace``) or as itself (``\\t`` spelled out too)."""
    if value is None:
        return None
    return DELIMITER_NAMES.get(value.lower(), "\t" if value == "\\t" else value)


@dataclass(frozen=True)
class Layout:
    """What :func:`sniff` found: the delimiter (None: whitespace), a header line, the number of
    columns (2, or 3 with a weight or a time) and whether ids are integers (else labels)."""

    delimiter: str | None
    header: bool
    columns: int
    labels: bool

    @property
    def plain_snap(self) -> bool:
        """Integer ids separated by whitespace, no header: the fast path of :func:`read_snap`."""
        return self.delimiter is None and not self.header and not self.labels


def _fields(line: str, delimiter: str | None) -> list[str]:
    text = line.split("#", 1)[0]  # the parser drops a comment after the fields too
    return text.split() if delimiter is None else [field.strip() for field in text.split(delimiter)]


def _sample(path: Path) -> list[str]:
    """The first :data:`SAMPLE_LINES` data lines of a file (blank and comment lines skipped in C)."""
    with _open_text(path) as fh:
        for block in _text_blocks(fh, str(path), MAX_LINE_BYTES):
            found = _data_line_starts(block, SAMPLE_LINES)
            if found:
                end = block.find(b"\n", found[-1])
                text = block[found[0]:len(block) if end < 0 else end].decode("utf-8", "replace")
                return [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    raise ParseError(f"{path}: no edges found (empty file or only comments)")


def _data_line_starts(block: bytes, limit: int) -> list[int]:
    """Where the first ``limit`` lines of ``block`` that are neither blank nor comments start."""
    found = [0] if _FIRST_DATA_LINE.match(block) else []
    later = (match.start() + 1 for match in _NEXT_DATA_LINE.finditer(block))
    return found + [start for _, start in zip(range(limit - len(found)), later)]


def _looks_like_header(rows: list[list[str]]) -> bool:
    first, rest = rows[0], rows[1:]
    if all(field.lower() in HEADER_WORDS for field in first):
        return True
    for column, field in enumerate(first):
        below = [row[column] for row in rest if len(row) > column]
        if below and not _NUMBER.fullmatch(field) and all(_NUMBER.fullmatch(value) for value in below):
            return True
    return False


def sniff(path: str | Path, options: EdgeListOptions = EdgeListOptions()) -> Layout:
    """The layout of a text edge list from its first data lines, as ``options`` leave it open.

    Raises
    ------
    ParseError
        For a file without data lines, or whose first data line has other than 2 or 3 fields.
    """
    path = Path(path)
    lines = _sample(path)
    delimiter = options.delimiter
    if delimiter is None:
        if all("," in line for line in lines):
            delimiter = ","
        elif all("\t" in line for line in lines) and any(len(line.split("\t")) != len(line.split())
                                                         for line in lines):
            delimiter = "\t"  # fields holding spaces
    rows = [_fields(line, delimiter) for line in lines]
    header = _looks_like_header(rows) if options.header is None else options.header
    data = rows[1:] if header else rows
    if not data:
        raise ParseError(f"{path}: no edges found after the header line")
    columns = len(data[0])
    if columns not in (2, 3):
        raise ParseError(f"{path}: line 1 of the data: expected 2 or 3 fields (source, target and a weight or, "
                         f"temporal, a time), got {columns}: {lines[1 if header else 0][:80]!r}")
    labels = options.labels
    if labels is None:  # a few odd ids among integers are more likely errors, named with their line
        ids = [field for row in data for field in row[:2]]
        labels = 2 * sum(not _INTEGER.fullmatch(field) for field in ids) > len(ids)
    return Layout(delimiter, header, columns, labels)


def _third_column(layout: Layout, temporal: bool) -> str:
    return "time" if temporal else "weight"


def _parse_block(block: bytes, layout: Layout, temporal: bool) -> list[np.ndarray] | None:
    """The columns of a block of whole lines (ids int64 or labels, times int64, weights float64);
    None where a line does not fit the layout."""
    if not layout.labels:
        # ids digits only: pandas' int64 parse would read 2.0, 1e3 or +4
        spaced = block if layout.delimiter is None else block.replace(layout.delimiter.encode(), b" ")
        if odd_id_byte(spaced, b"#", 3 if temporal else 2)[0]:
            return None
    elif _CONTROL.search(block) or not _is_utf8(block):
        return None
    id_type = object if layout.labels else np.int64
    types = {0: id_type, 1: id_type, 2: np.int64 if temporal else np.float64}
    try:
        frame = pd.read_csv(io.BytesIO(block), sep=r"\s+" if layout.delimiter is None else layout.delimiter,
                            header=None, comment="#", engine="c", skip_blank_lines=True, skipinitialspace=True,
                            dtype={k: v for k, v in types.items() if k < layout.columns}, keep_default_na=False,
                            na_values=[""] if layout.columns == 3 and not temporal else [])
    except pd.errors.EmptyDataError:  # only comments and blank lines
        return [np.empty(0, dtype=types[k]) for k in range(layout.columns)]
    except (ValueError, OverflowError, pd.errors.ParserError):
        return None
    if frame.shape[1] != layout.columns:
        return None
    columns = [frame[k].to_numpy() for k in range(layout.columns)]
    if layout.labels and any(((column == "") | pd.isna(column)).any() for column in columns[:2]):
        return None
    if layout.columns == 3 and not temporal and not bool(np.isfinite(columns[2]).all()):
        return None
    return columns


def _is_utf8(block: bytes) -> bool:
    try:
        block.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _line_reason(line: bytes, layout: Layout, temporal: bool) -> str | None:
    """Why one line does not fit the layout (None: it does, or it is a comment or blank)."""
    text = line.decode("utf-8", "replace").rstrip("\r\n")
    if (odd := odd_character_reason(text, labels=layout.labels)) is not None:
        return odd
    fields = _fields(text, layout.delimiter)
    if not "".join(fields).strip():
        return None
    shown = text[:80]
    if len(fields) != layout.columns:
        names = "source, target" + (f", {_third_column(layout, temporal)}" if layout.columns == 3 else "")
        return f"expected {layout.columns} fields ({names}), got {len(fields)}: {shown!r}"
    if layout.labels and not all(fields[:2]):
        return f"an empty vertex label: {shown!r}"
    if not layout.labels and not all(_INTEGER.fullmatch(field) for field in fields[:2]):
        return (f"expected non-negative integer ids as on the lines before, got {shown!r} (to read every id as "
                "a string label, ask for labels)")
    if layout.columns == 3:
        third = fields[2]
        if temporal and not _INTEGER.fullmatch(third):
            return f"expected a non-negative integer time in column 3, got {shown!r}"
        if not temporal and not (_NUMBER.fullmatch(third) and np.isfinite(float(third))):
            return f"expected a finite number (a weight) in column 3, got {shown!r}"
    return None


def _find_bad_line(path: Path, layout: Layout, temporal: bool) -> tuple[int, str] | None:
    """``(line number, reason)`` of the first line after any header that does not fit the layout."""
    with _open_text(path) as fh:
        number = 0
        if layout.header:  # the lines up to and including the header
            for line in _lines(fh, str(path)):
                number += 1
                if _FIRST_DATA_LINE.match(line):
                    break
        return _first_bad_line(fh, str(path), lambda block: _parse_block(block, layout, temporal) is not None,
                               functools.partial(_line_reason, layout=layout, temporal=temporal), number + 1)


def _without_header(block: bytes) -> bytes | None:
    """The block after its first data line (None: it has none, only comments and blank lines)."""
    found = _data_line_starts(block, 1)
    if not found:
        return None
    end = block.find(b"\n", found[0])
    return b"" if end < 0 else block[end + 1:]


def _read_columns(path: Path, layout: Layout, temporal: bool) -> list[np.ndarray]:
    """Every column of the list, in file order, read block by block with a running memory check."""
    blocks, records, header_left, text_bytes = [], 0, layout.header, 0
    per_record = 8 * layout.columns + BUILD_BYTES_PER_RECORD + (2 * _LABEL_BYTES if layout.labels else 0)
    with _open_text(path) as fh:
        for block in _text_blocks(fh, str(path)):
            text_bytes = log_long_read(path, text_bytes, len(block), records)
            if header_left:
                block = _without_header(block)
                if block is None:
                    continue
                header_left = False
            columns = _parse_block(block, layout, temporal)
            if columns is None:
                bad = _find_bad_line(path, layout, temporal)
                raise ParseError(f"{path}: line {bad[0]}: {bad[1]}" if bad is not None
                                 else f"{path}: cannot parse as an edge list")
            blocks.append(columns)
            records += len(columns[0])
            check_host_fits(per_record * records, f"{path}: graph")
    if records == 0:
        raise ParseError(f"{path}: no edges found (empty file, only comments or only a header)")
    return [np.concatenate([columns[k] for columns in blocks]) for k in range(layout.columns)]


def read_edge_list(path: str | Path, options: EdgeListOptions = EdgeListOptions()) -> EdgeData:
    """Read a text edge list of any :class:`EdgeListOptions` layout (``.txt``, ``.csv``, ``.tsv``, gzipped too).

    Parameters
    ----------
    path : str or Path
        The file; ``#`` comments and blank lines are skipped.
    options : EdgeListOptions
        Delimiter, header, labels, undirected, temporal; what is left None is found by :func:`sniff`.

    Returns
    -------
    EdgeData
        Integer ids as in the file (renumbered densely when the graph is built), or, for labels, dense
        ids in the sorted order of the labels with ``labels`` the label of each; both directions of
        each edge when undirected; ``time`` set only when temporal.

    Raises
    ------
    ParseError
        Naming the file and the first line that does not fit the layout.
    MemoryError
        Naming the file, once the records read so far could not be built in the available memory.
    """
    path = Path(path)
    layout = sniff(path, options)
    if layout.columns == 2 and options.temporal:
        raise ParseError(f"{path}: a temporal edge list needs a third column of times; the lines have 2 fields")
    if layout.plain_snap and layout.columns == (3 if options.temporal else 2):
        edges = read_snap(path, temporal=options.temporal)
    else:
        columns = _read_columns(path, layout, options.temporal)
        time = columns[2] if options.temporal else None
        if layout.columns == 3 and not options.temporal:
            log.warning("%s: column 3 read as edge weights and ignored: dynpr's PageRank is unweighted "
                        "(if it holds times, read the list as temporal)", path)
        edges = _edge_data(columns[0], columns[1], time, layout.labels)
    return both_ways(edges) if options.undirected else edges


def _edge_data(src: np.ndarray, dst: np.ndarray, time: np.ndarray | None, labels: bool) -> EdgeData:
    """Edges in time order (stable), labels mapped to dense ids in their sorted order."""
    vertex_labels = None
    if labels:
        codes, uniques = pd.factorize(np.concatenate([src, dst]), sort=True)
        src, dst = codes[:len(src)], codes[len(src):]
        vertex_labels = np.asarray(uniques, dtype=str)
    if time is not None:
        order = np.argsort(time, kind="stable")
        src, dst, time = src[order], dst[order], time[order]
    return EdgeData(src, dst, time, None if vertex_labels is None else len(vertex_labels), vertex_labels)


def both_ways(edges: EdgeData) -> EdgeData:
    """Each edge in both directions (an undirected list); a temporal list stays in time order."""
    time = None if edges.time is None else np.concatenate([edges.time, edges.time])
    src, dst = np.concatenate([edges.src, edges.dst]), np.concatenate([edges.dst, edges.src])
    if time is not None:
        order = np.argsort(time, kind="stable")
        src, dst, time = src[order], dst[order], time[order]
    return replace(edges, src=src, dst=dst, time=time)


def read_graph_file(path: str | Path, fmt: str | None = None,
                    options: EdgeListOptions = EdgeListOptions()) -> EdgeData:
    """Read any supported graph file: Matrix Market (plain, gzipped or in a SuiteSparse tar) by
    its name, any other file as a text edge list (:func:`read_edge_list`).

    Parameters
    ----------
    path : str or Path
        The file.
    fmt : str, optional
        A catalog format (:data:`dynpr.io.readers.FORMATS`): ``snap-temporal`` reads the list as temporal;
        guessed from the name when omitted.
    options : EdgeListOptions
        For text edge lists; ``undirected`` also for Matrix Market.

    Raises
    ------
    InputError
        For an unknown format, or text options given for a Matrix Market file.
    """
    fmt = fmt or detect_format_by_name(path)
    matrix_readers = {"matrix-market": read_matrix_market, "suitesparse-mm": read_suitesparse_tar}
    if fmt in matrix_readers:
        if replace(options, undirected=False) != EdgeListOptions():
            raise InputError(f"{path}: a Matrix Market file has no delimiter, header, labels or times to set")
        edges = matrix_readers[fmt](path)
        return both_ways(edges) if options.undirected else edges
    if fmt not in ("snap-edgelist", "snap-temporal"):
        raise InputError(f"{path}: unknown graph format {fmt!r}; known: snap-temporal, snap-edgelist, "
                         "matrix-market, suitesparse-mm")
    return read_edge_list(path, replace(options, temporal=options.temporal or fmt == "snap-temporal"))


def detect_format_by_name(path: str | Path) -> str:
    """``matrix-market`` or ``suitesparse-mm`` by the file name, else ``snap-edgelist`` (a text list,
    its third column a weight until said temporal)."""
    name = Path(path).name.lower()
    if name.endswith((".tar.gz", ".tgz", ".tar", ".mtx", ".mtx.gz")):
        return detect_format(path)
    return "snap-edgelist"
