"""Parsers: SNAP temporal / edge lists, Matrix Market, SuiteSparse tar archives, malformed input."""

from __future__ import annotations

import gzip
import io
import tarfile

import numpy as np
import pytest

from dynpr.io.readers import ParseError, detect_format, read_edges, read_matrix_market, read_snap, read_suitesparse_tar


def test_snap_edgelist_comments_tabs_crlf(write_file):
    path = write_file("g.txt.gz", "# Directed graph\r\n# Nodes: 4\r\n0\t1\r\n1\t2\r\n\r\n3\t3\r\n1\t2\r\n")
    edges = read_snap(path)
    assert edges.src.tolist() == [0, 1, 3, 1] and edges.dst.tolist() == [1, 2, 3, 2]
    assert edges.time is None and edges.src.dtype == np.int64


def test_snap_temporal_is_stable_sorted_by_time(write_file):
    rng = np.random.default_rng(3)
    rows = np.column_stack([rng.integers(0, 50, 500), rng.integers(0, 50, 500), rng.integers(0, 20, 500)])
    path = write_file("t.txt", "".join(f"{u} {v} {t}\n" for u, v, t in rows))
    edges = read_snap(path, temporal=True)
    expected = sorted(range(len(rows)), key=lambda i: rows[i, 2])  # Python's sort is stable
    assert edges.src.tolist() == rows[expected, 0].tolist()
    assert edges.dst.tolist() == rows[expected, 1].tolist()
    assert edges.time.tolist() == rows[expected, 2].tolist()


@pytest.mark.parametrize("body, line, reason", [
    ("0 1\n1 2 5\n", 2, "expected 2 fields, got 3"),
    ("# c\n# c\n0 1\nx 2\n", 4, "non-negative integer"),
    ("0 1\n1\n", 2, "expected 2 fields, got 1"),
    ("0 1\n1.5 2\n", 2, "non-negative integer"),
    ("0 1\n2 -3\n", 2, "non-negative integer"),
    ("0 1\n2 99999999999999999999\n", 2, "non-negative integer"),
])
def test_malformed_line_is_named(write_file, body, line, reason):
    path = write_file("bad.txt", body)
    with pytest.raises(ParseError, match=rf"bad\.txt: line {line}: .*{reason}"):
        read_snap(path)


def test_malformed_temporal_line_is_named(write_file):
    path = write_file("bad.txt.gz", "1 2 100\n2 3 101\n3 4\n")
    with pytest.raises(ParseError, match=r"bad\.txt\.gz: line 3: expected 3 fields, got 2"):
        read_snap(path, temporal=True)


def test_truncated_gzip_text(write_file, tmp_path):
    data = gzip.compress(("".join(f"{i} {i + 1}\n" for i in range(20000))).encode())
    path = tmp_path / "cut.txt.gz"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(ParseError, match="cut.txt.gz: corrupt or truncated gzip"):
        read_snap(path)


def test_empty_file(write_file):
    with pytest.raises(ParseError, match="no edges"):
        read_snap(write_file("empty.txt", "# only a comment\n"))


def _edge_set(edges):
    return set(zip(edges.src.tolist(), edges.dst.tolist()))


def test_matrix_market_pattern_general(write_file):
    path = write_file("g.mtx", "%%MatrixMarket matrix coordinate pattern general\n% comment\n4 4 3\n1 2\n2 3\n4 4\n")
    edges = read_matrix_market(path)
    assert _edge_set(edges) == {(0, 1), (1, 2), (3, 3)} and edges.num_vertices == 4


def test_matrix_market_symmetric_gives_both_directions(write_file):
    path = write_file("s.mtx.gz", "%%MatrixMarket matrix coordinate integer symmetric\n5 5 3\n2 1 7\n3 3 1\n5 2 0\n")
    edges = read_matrix_market(path)
    assert sorted(zip(edges.src.tolist(), edges.dst.tolist())) == [(0, 1), (1, 0), (1, 4), (2, 2), (4, 1)]
    assert edges.num_vertices == 5


def test_matrix_market_real(write_file):
    path = write_file("r.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 2\n1 3 0.5\n3 1 -2e3\n")
    assert _edge_set(read_matrix_market(path)) == {(0, 2), (2, 0)}


@pytest.mark.parametrize("body, match", [
    ("%%MatrixMarket matrix coordinate pattern general\n3 3 2\n1 2\n3 x\n", "line 4"),
    ("%%MatrixMarket matrix coordinate pattern general\n3 3 2\n1 2\n4 1\n", "line 4"),
    ("%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n", "coordinate"),
    ("%%MatrixMarket matrix coordinate pattern general\n3 4 1\n1 2\n", "square"),
])
def test_matrix_market_bad_input(write_file, body, match):
    path = write_file("bad.mtx", body)
    with pytest.raises(ParseError, match=rf"bad\.mtx.*{match}"):
        read_matrix_market(path)


def _tar(path, members):
    """Write a tar.gz with ``members`` = [(TarInfo-ish name, bytes or None for a symlink -> target)]."""
    with tarfile.open(path, "w:gz") as tar:
        for name, data, link in members:
            info = tarfile.TarInfo(name)
            if link is not None:
                info.type, info.linkname = tarfile.SYMTYPE, link
                tar.addfile(info)
            else:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return path


MTX = b"%%MatrixMarket matrix coordinate pattern symmetric\n3 3 2\n2 1\n3 2\n"


def test_suitesparse_tar(tmp_path):
    path = _tar(tmp_path / "g.tar.gz", [("g/g.mtx", MTX, None), ("g/g_nodename.txt", b"a\nb\nc\n", None)])
    edges = read_suitesparse_tar(path)
    assert _edge_set(edges) == {(1, 0), (0, 1), (2, 1), (1, 2)} and edges.num_vertices == 3
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.tar.gz"]  # nothing extracted
    assert detect_format(path) == "suitesparse-mm"
    assert _edge_set(read_edges(path)) == _edge_set(edges)


@pytest.mark.parametrize("evil", [
    ("../evil.mtx", MTX, None),
    ("/tmp/dynpr-evil.mtx", MTX, None),
    ("g/link", None, "../../outside"),
])
def test_suitesparse_tar_rejects_unsafe_members(tmp_path, evil):
    work = tmp_path / "work"
    work.mkdir()
    path = _tar(work / "g.tar.gz", [("g/g.mtx", MTX, None), evil])
    with pytest.raises(ParseError, match="unsafe archive member"):
        read_suitesparse_tar(path)
    assert sorted(p.name for p in work.iterdir()) == ["g.tar.gz"]
    assert not (tmp_path / "evil.mtx").exists()


def test_suitesparse_tar_truncated(tmp_path):
    body = b"%%MatrixMarket matrix coordinate pattern general\n1000 1000 5000\n" + b"".join(
        f"{i % 1000 + 1} {(i * 7) % 1000 + 1}\n".encode() for i in range(5000))
    path = _tar(tmp_path / "g.tar.gz", [("g/g.mtx", body, None)])
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(ParseError, match="corrupt or truncated archive"):
        read_suitesparse_tar(path)


def test_suitesparse_tar_without_matrix(tmp_path):
    path = _tar(tmp_path / "g.tar.gz", [("g/readme.txt", b"hi", None)])
    with pytest.raises(ParseError, match="expected one matrix"):
        read_suitesparse_tar(path)


@pytest.mark.parametrize("member", ["g/g.mtx", "g/g.mtx.gz", "g/other.mtx"])
def test_suitesparse_tar_member_streamed_equals_the_file(tmp_path, write_file, monkeypatch, member):
    import dynpr.io.readers as readers_mod

    rng = np.random.default_rng(4)
    body = "%%MatrixMarket matrix coordinate integer symmetric\n% c\n30 30 200\n" + "".join(
        f"{u} {v} 1\n" for u, v in rng.integers(1, 31, (200, 2)))
    plain = read_matrix_market(write_file("plain.mtx", body))
    data = gzip.compress(body.encode()) if member.endswith(".gz") else body.encode()
    # the wanted member is g/g.mtx*; without it the only .mtx member ("other") is read in a second pass
    work = tmp_path / "work"
    work.mkdir()
    path = _tar(work / "g.tar.gz", [("g/readme.txt", b"x", None), (member, data, None)])
    monkeypatch.setattr(readers_mod, "MM_CHUNK_ENTRIES", 7)
    monkeypatch.setattr(tarfile.TarFile, "extract", None)  # streamed: nothing may be extracted
    edges = read_suitesparse_tar(path)
    assert np.array_equal(edges.src, plain.src) and np.array_equal(edges.dst, plain.dst)
    assert edges.num_vertices == 30 and len(edges.src) > 200  # mirrored
    assert sorted(p.name for p in work.iterdir()) == ["g.tar.gz"]


@pytest.mark.parametrize("member", ["g/g.mtx", "g/g.mtx.gz"])
def test_suitesparse_tar_member_stream_says_it_cannot_seek(tmp_path, member):
    # pandas 2 wraps a binary handle in TextIOWrapper, which asks the stream whether it can seek
    from dynpr.io.tar_streams import tar_member_stream

    data = gzip.compress(MTX) if member.endswith(".gz") else MTX
    path = _tar(tmp_path / "g.tar.gz", [("g/readme.txt", b"x", None), (member, data, None)])
    with tar_member_stream(path, member) as stream:
        assert io.TextIOWrapper(stream).read() == MTX.decode()


def test_suitesparse_tar_two_other_matrices_is_one_line(tmp_path):
    path = _tar(tmp_path / "g.tar.gz", [("g/a.mtx", MTX, None), ("g/b.mtx", MTX, None)])
    with pytest.raises(ParseError, match=r"expected one matrix g/g\.mtx inside, found \['g/a\.mtx', 'g/b\.mtx'\]"):
        read_suitesparse_tar(path)


@pytest.mark.parametrize("member", ["g/g.mtx", "g/other.mtx"])
@pytest.mark.parametrize("body, match", [
    ("5 5 4\n1 2\n2 3\n3 x\n4 1\n", "line 6: expected two positive integer ids"),
    ("5 5 4\n1 2\n2 3\n3 4\n6 1\n", r"line 7: id out of range 1\.\.5"),
    ("5 5 4\n1 2\n2 3\n3 4\n", "3 entries but the header says 4: the file is truncated"),
    ("5 5 2\n1 2\n2 3\n3 4\n", "more entries than the header's 2"),
    ("3000000000 3000000000 2\n1 2\n2 1\n", "header says 3,000,000,000 vertices; vertex ids are int32"),
])
def test_suitesparse_tar_member_errors_name_member_and_line(tmp_path, monkeypatch, member, body, match):
    import dynpr.io.readers as readers_mod

    text = "%%MatrixMarket matrix coordinate pattern general\n% c\n" + body
    path = _tar(tmp_path / "g.tar.gz", [(member, text.encode(), None), ("g/g_nodename.txt", b"a\n", None)])
    monkeypatch.setattr(readers_mod, "MM_CHUNK_ENTRIES", 2)
    with pytest.raises(ParseError, match=rf"^\S*g\.tar\.gz:{member}: {match}"):
        read_suitesparse_tar(path)


def test_suitesparse_tar_member_cut_inside_the_gzip_stream(tmp_path):
    body = b"%%MatrixMarket matrix coordinate pattern general\n1000 1000 5000\n" + b"".join(
        f"{i % 1000 + 1} {(i * 7) % 1000 + 1}\n".encode() for i in range(5000))
    path = _tar(tmp_path / "g.tar.gz", [("g/g.mtx", body, None)])
    path.write_bytes(path.read_bytes()[:-200])  # the member's data is cut, not only the tar's end blocks
    with pytest.raises(ParseError, match=r"^\S*g\.tar\.gz:g/g\.mtx: corrupt or truncated archive") as err:
        read_suitesparse_tar(path)
    assert "\n" not in str(err.value)


def test_detect_format(write_file):
    assert detect_format(write_file("a.txt", "# c\n1 2 3\n")) == "snap-temporal"
    assert detect_format(write_file("b.txt.gz", "1\t2\n")) == "snap-edgelist"
    assert detect_format(write_file("c.mtx", "x")) == "matrix-market"


# --------------------------------------------------------------------------- Matrix Market at SciPy's speed


@pytest.mark.parametrize("field, symmetry", [("pattern", "general"), ("real", "symmetric"), ("complex", "general"),
                                             ("integer", "skew-symmetric")])
def test_canonical_matrix_market_is_read_by_the_fast_parser(tmp_path, monkeypatch, field, symmetry):
    """One space between fields, a newline after each line: SciPy's fast_matrix_market reads it (no pandas
    pass), with the same edges as pandas and scipy.io.mmread give."""
    import scipy.io

    from dynpr.io import readers

    rng = np.random.default_rng(3)
    n, m = 40, 200
    rows, cols = rng.integers(1, n + 1, m), rng.integers(1, n + 1, m)
    values = {"pattern": [""] * m, "real": [f" {v:.3g}" for v in rng.normal(size=m)],
              "complex": [f" {v:.3g} -1e-3" for v in rng.normal(size=m)], "integer": [" -7"] * m}[field]
    path = tmp_path / "m.mtx"
    path.write_text(f"%%MatrixMarket matrix coordinate {field} {symmetry}\n% a comment\n{n} {n} {m}\n"
                    + "".join(f"{r} {c}{v}\n" for r, c, v in zip(rows, cols, values)))
    pandas_passes = []
    monkeypatch.setattr(readers, "_read_mm_entries", lambda *args: pandas_passes.append(1))
    edges = readers.read_matrix_market(path)
    assert not pandas_passes
    reference = scipy.io.mmread(path)
    if symmetry == "general":
        assert (edges.src.tolist(), edges.dst.tolist()) == (reference.row.tolist(), reference.col.tolist())
    else:  # both directions of each off-diagonal entry, as scipy generalizes them
        assert sorted(zip(edges.src, edges.dst)) == sorted(zip(reference.row, reference.col))
    assert edges.src.dtype == np.int32 and edges.num_vertices == n


@pytest.mark.parametrize("entries, message", [
    ("1 2\n2 4\n", r"line 4: id out of range 1\.\.3: '2 4'"),
    ("1 2\n2 3.0\n", r"line 4: expected two positive integer ids, got '2 3.0'"),
    ("1 2\n", r"1 entries but the header says 2: the file is truncated"),
    ("1 2\n2 3\n3 1\n", r"more entries than the header's 2"),
])
def test_what_the_fast_parser_declines_is_named_by_the_strict_one(tmp_path, entries, message):
    path = tmp_path / "m.mtx"
    path.write_text("%%MatrixMarket matrix coordinate pattern general\n3 3 2\n" + entries)
    with pytest.raises(ParseError, match=message):
        read_matrix_market(path)


@pytest.mark.parametrize("entries", ["1\t2\n2 3\n", "1 2\r\n2 3\r\n", "1 2\n% c\n2 3\n", "1  2\n2 3\n", "1 2\n\n2 3\n",
                                     " 1 2\n2 3\n", "1 2\n2 3", "1 2 5\n2 3\n"])
def test_other_layouts_are_read_by_the_strict_parser(tmp_path, entries):
    """fast_matrix_market would ignore a third field on a pattern line: the layout check leaves such
    a line to pandas, which reads the file as before."""
    path = tmp_path / "m.mtx"
    path.write_text("%%MatrixMarket matrix coordinate pattern general\n3 3 2\n" + entries)
    edges = read_matrix_market(path)
    assert (edges.src.tolist(), edges.dst.tolist()) == ([0, 1], [1, 2])


# what the plain-file path (fast_matrix_market straight from the file) reads, and what it leaves to pandas
_FAST_LAYOUTS = [("pattern", "1 2\n2 3\n"), ("pattern", "1\t2\n2 3\n"), ("integer", "1 2 5\n2 3 -17\n")]
_DECLINED_LAYOUTS = [("pattern", "1 2\n2 3.0\n"), ("pattern", "1 2\n2 3x\n"), ("pattern", "1 2 5\n2 3\n"),
                     ("pattern", "01 2\n2 3\n"), ("pattern", "1\r2\n2 3\n"), ("pattern", "1 2\r\n2 3\r\n"),
                     ("pattern", "1 2\n2 3\n\n"), ("pattern", " 1 2\n2 3\n"), ("pattern", "1 2\n% c\n2 3\n"),
                     ("pattern", "1 2\n2 4\n"), ("pattern", "1 2\n"), ("pattern", "1 2\n2 3\n3 1\n"),
                     ("integer", "1 2 +5\n2 3 7\n"), ("integer", "1 2 5.5\n2 3 7\n"), ("integer", "1 2 -0\n2 3 7\n"),
                     ("integer", "1 2 5 9\n2 3 7\n"), ("integer", "1 2\n2 3 7\n"), ("integer", "1 2 05\n2 3 7\n"),
                     ("integer", "1 2.0 5\n2 3 7\n"), ("pattern", "1 2\0\n2 3\n"), ("integer", "1 2 5\0\n2 3 7\n"),
                     # a last line without its newline: read from the stream, which gives it one
                     ("pattern", "1 2\n2 3"), ("pattern", "1 2\n2 3 5"), ("integer", "1 2 0\n2 3 99"),
                     ("integer", "1 2 0\n2 3 9 9")]
# real entries: a leading zero reads as the strict parser reads it, and what follows a value's number is
# fast_matrix_market's (``1.5x`` as 1.5), as in the stream; a value that does not begin as an integer is left
# to the stream
_FAST_LAYOUTS += [("real", "1 2 0.5\n2 3 -1.5e-3\n"), ("real", "1\t2\t-3\n2 3 1e5\n"),
                  ("real", "01 2 0.5\n2 003 1\n"), ("real", "1 2 1.5x\n2 3 1\n"), ("real", "1 2 -0\n2 3 0\n")]
_DECLINED_LAYOUTS += [("real", case) for case in [
    "1 2 0.5 9\n2 3 1\n", "1 2 0.5\n2 3\n", "+1 2 0.5\n2 3 1\n", "1 +2 0.5\n2 3 1\n", "1 2-3 4\n2 3 1\n",
    "1 2.5 3\n2 3 1\n", "1 23.0\n2 3 1 1\n", "1 2-3\n2 3 1 1\n", "1 2 0.5\r\n2 3 1\r\n", "1 2 0.5\n\n2 3 1\n",
    "1 2 0.5\n% c\n2 3 1\n", " 1 2 0.5\n2 3 1\n", "1  2 0.5\n2 3 1\n", "1 2 0.5 \n2 3 1\n", "1 2 0.5\n2 3 1\n\n",
    "1 2 0.5\n2 3 1\n ", "1 2 .5\n2 3 1\n", "1 2 nan\n2 3 1\n", "1 2 0.5\n2 3 7", "1 2 0.5\n2 3 1.5e", "1 2 0.5\0\n2 3 1\n", "1 2 0.5\v1\n2 3 1\n",
    "1 2 2-1\n2 3 1\n", "1 2 0.5\n2 4 1\n", "1 2 0.5\n", "1 2 0.5\n2 3 1\n3 1 1\n"]]


def _outcome(read, path):
    try:
        edges = read(path)
    except ParseError as err:
        return str(err)
    return edges.src.tolist(), edges.dst.tolist(), edges.num_vertices


@pytest.mark.parametrize("fast, field, entries", [(True, *case) for case in _FAST_LAYOUTS]
                         + [(False, *case) for case in _DECLINED_LAYOUTS])
@pytest.mark.parametrize("symmetry", ["general", "symmetric"])
def test_plain_file_path_reads_what_the_strict_parser_reads(tmp_path, monkeypatch, fast, field, entries, symmetry):
    """The plain-file path takes a file only in the layout it can vouch for (one separator between
    fields, digits only, nothing more on a line) and gives the strict parser's edges; any other file
    has the strict parser's edges or its error, naming the line."""
    from dynpr.io import mm_fast, readers

    path = tmp_path / "m.mtx"
    path.write_text(f"%%MatrixMarket matrix coordinate {field} {symmetry}\n% a comment\n3 3 2\n" + entries)
    answers = []
    monkeypatch.setattr(readers, "read_file_entries", lambda *args: answers.append(
        mm_fast.read_file_entries(*args)) or answers[-1])
    read = _outcome(readers.read_matrix_market, path)
    assert (answers[0] is not None) == fast
    monkeypatch.setattr(readers, "read_file_entries", lambda *args: None)
    monkeypatch.setattr(readers, "read_entries", lambda *args: None)  # pandas only
    assert read == _outcome(readers.read_matrix_market, path)


@pytest.mark.filterwarnings("ignore:invalid value encountered in cast:RuntimeWarning")  # pandas, on a bad id
def test_plain_real_file_path_vouches_only_for_what_the_strict_parser_reads(tmp_path, monkeypatch):
    """Canonical real lines with bytes inserted, replaced or removed at random: whatever the plain-file
    path (or the checked stream) takes, it takes with the strict parser's edges, never crashing (and
    the plain-file path takes some, and declines some)."""
    from dynpr.io import mm_fast, readers

    rng = np.random.default_rng(48)
    alphabet = list("0123456789 \t\n-+.eE%x\r\v")
    lines = [f"{r} {c} {v:.3g}\n" for r, c, v in zip(rng.integers(1, 13, 6), rng.integers(1, 13, 6), rng.normal(size=6))]
    path = tmp_path / "m.mtx"
    taken = declined = 0
    for _ in range(300):
        body = list("".join(lines))
        for _ in range(rng.integers(1, 3)):
            at, byte = int(rng.integers(len(body))), alphabet[rng.integers(len(alphabet))]
            body[at:at + int(rng.integers(2))] = [byte] if rng.random() < 0.8 else []
        header = "%%MatrixMarket matrix coordinate real general\n12 12 6\n"
        path.write_text(header + "".join(body))
        fast = mm_fast.read_file_entries(path, 12, 6, "real", "general", len(header))
        try:
            streamed = mm_fast.read_entries(io.BytesIO("".join(body).encode()), "m", 12, 6, "real")
        except mm_fast.OddId:
            streamed = None
        monkeypatch.setattr(readers, "read_file_entries", lambda *args: None)
        monkeypatch.setattr(readers, "read_entries", lambda *args: None)  # pandas only
        strict = _outcome(readers.read_matrix_market, path)
        monkeypatch.undo()
        if streamed is not None:
            assert (streamed[0].tolist(), streamed[1].tolist(), 12) == strict, "".join(body)
        if fast is None:
            declined += 1
        else:
            taken += 1
            assert (fast[0].tolist(), fast[1].tolist(), 12) == strict, "".join(body)
    assert taken > 30 and declined > 30


def test_scan_entry_bytes_counts_whitespace_and_a_digit_then_minus_across_pieces(tmp_path, monkeypatch):
    from dynpr.io import mm_fast

    monkeypatch.setattr(mm_fast, "_SCAN_BYTES", 4)
    path = tmp_path / "e"
    path.write_bytes(b"xx1 2 -0.5\n3 4 1e-3\n")
    assert mm_fast.scan_entry_bytes(path, 2, layout=True) == mm_fast.EntryBytes(6, False)
    path.write_bytes(b"xx1 2 0.5\n3 44-1 1\n")  # the "-" opens a piece after a digit
    assert mm_fast.scan_entry_bytes(path, 2, layout=True) == mm_fast.EntryBytes(6, True)
    # a NUL or a CR, or no newline at the end: fast_matrix_market would crash or read a CR as a space
    for odd in (b"\0\n", b"\r\n", b""):
        path.write_bytes(b"xx1 2 0.5\n3 4 1" + odd)
        assert mm_fast.scan_entry_bytes(path, 2, layout=False) is None


@pytest.mark.parametrize("field, last", [("real", "2 3 1.5e"), ("real", "2 3 0.5"), ("pattern", "2 3 5"),
                                         ("pattern", "2 3")])
def test_a_last_line_without_newline_is_read_from_a_stream(tmp_path, field, last):
    """fast_matrix_market reads past the end of a last line it stops parsing before its end (a
    segmentation fault in scipy.io.mmread): the checked stream hands it the line's newline."""
    text = f"%%MatrixMarket matrix coordinate {field} general\n3 3 2\n1 2{' 1' if field == 'real' else ''}\n{last}"
    plain, packed = tmp_path / "m.mtx", tmp_path / "m.mtx.gz"
    plain.write_text(text)
    packed.write_bytes(gzip.compress(text.encode()))
    for path in (plain, packed):
        outcome = _outcome(read_matrix_market, path)
        assert outcome == (([0, 1], [1, 2], 3) if last.count(" ") == 1 + (field == "real") else outcome)
        assert isinstance(outcome, tuple) or "line 4" in outcome


def test_digits_total_counts_the_digits_of_each_number():
    from dynpr.io.mm_fast import _digits_total

    numbers = np.array([0, 1, 8, 9, 10, 98, 99, 100, 999_999, 1_000_000, 2_147_483_646], dtype=np.int64)
    assert _digits_total(numbers, int(numbers.max())) == sum(len(str(v)) for v in numbers)
    assert _digits_total(numbers, int(numbers.max()) + 1, plus=1) == sum(len(str(v + 1)) for v in numbers)
