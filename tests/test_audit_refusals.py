"""Nothing wrong gets through, third round: the cases the re-audit (benchmarks/audit_inputs.py) found.

A flood of blank or comment lines costs no Python loop per line (the search for a bad line
halves blocks instead; the format is detected by the parser), Matrix Market ids are digits only
in every field (test_refusals.py), library calls refuse non-integer ids and out-of-range batch
fractions with dynpr's errors, and the CLI bounds counts that would run for days.
Each case builds its input.
"""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from dynpr.io import readers
from dynpr.io.id_text import odd_id_byte
from dynpr.errors import BatchError, GraphError, InputError, ParseError

from cli_errors import one_error_line

FLOOD_LINES = 1 << 20


def count_calls(monkeypatch, name: str) -> list:
    """Count the calls of ``readers.<name>`` (a per-line check) while the test runs."""
    calls, original = [], getattr(readers, name)

    def counted(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)
    monkeypatch.setattr(readers, name, counted)
    return calls


@pytest.mark.parametrize("flood", [b"\n", b"# c\n", b"\r\n"])
def test_bad_line_after_a_flood_is_named_without_a_loop_per_line(tmp_path, monkeypatch, flood):
    monkeypatch.setattr(readers, "TEXT_BLOCK_BYTES", 1 << 16)  # many blocks, each halved to find the line
    calls = count_calls(monkeypatch, "_snap_line_reason")
    path = tmp_path / "e.txt.gz"
    path.write_bytes(gzip.compress(b"1 2\n" + flood * FLOOD_LINES + b"3 4\n5 x\n6 7\n"))
    with pytest.raises(ParseError, match=rf"e\.txt\.gz: line {FLOOD_LINES + 3}: expected 2 non-negative integer ids, "
                                         r"got '5 x'"):
        readers.read_edges(path)
    assert 0 < len(calls) <= 2 * readers._LINE_SCAN_BYTES


def test_bad_line_search_names_the_first_of_several(tmp_path, monkeypatch):
    monkeypatch.setattr(readers, "TEXT_BLOCK_BYTES", 1 << 12)
    lines = [f"{i} {i + 1}" for i in range(5000)]
    lines[3001], lines[4500] = "3001 -2", "x y"
    path = tmp_path / "e.txt"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ParseError, match=r"line 3002: expected 2 non-negative integer ids, got '3001 -2'"):
        readers.read_snap(path)


def test_format_is_detected_after_a_flood_of_blank_and_comment_lines(tmp_path, monkeypatch):
    monkeypatch.setattr(readers, "TEXT_BLOCK_BYTES", 1 << 16)
    path = tmp_path / "t.txt.gz"
    path.write_bytes(gzip.compress(b"\n" * FLOOD_LINES + b"# 1 2\n" * 1000 + b"1 2 30 # three fields\n2 3 10\n"))
    assert readers.detect_format(path) == "snap-temporal"
    edges = readers.read_edges(path)
    assert edges.time.tolist() == [10, 30] and edges.src.tolist() == [2, 1]
    path.write_bytes(gzip.compress(b"\n" * FLOOD_LINES + b"1 2 # a comment of words\n"))
    assert readers.detect_format(path) == "snap-edgelist"


@pytest.mark.parametrize("field, value", [("pattern", ""), ("real", " -1.5e-3")])
def test_matrix_market_bad_entry_after_a_flood_is_named_without_a_loop_per_line(tmp_path, monkeypatch, field, value):
    monkeypatch.setattr(readers, "TEXT_BLOCK_BYTES", 1 << 16)
    calls = count_calls(monkeypatch, "_mm_line_reason")
    path = tmp_path / "m.mtx.gz"
    path.write_bytes(gzip.compress(f"%%MatrixMarket matrix coordinate {field} general\n3 3 3\n1 2{value}\n".encode()
                                   + b"%\n" * FLOOD_LINES + f"2 3{value}\n3 4{value}\n".encode()))
    with pytest.raises(ParseError, match=rf"m\.mtx\.gz: line {FLOOD_LINES + 5}: id out of range 1\.\.3: "
                                         rf"'3 4{value}'"):
        readers.read_edges(path)
    assert 0 < len(calls) <= 2 * readers._LINE_SCAN_BYTES


def test_matrix_market_header_lines_are_bounded(tmp_path, monkeypatch):
    monkeypatch.setattr(readers, "MAX_HEADER_LINES", 100)
    path = tmp_path / "m.mtx"
    path.write_text("%%MatrixMarket matrix coordinate pattern general\n" + "\n" * 200 + "3 3 1\n1 2\n")
    with pytest.raises(ParseError, match=r"m\.mtx: no size line in the first 100 lines"):
        readers.read_edges(path)
    path.write_text("%%MatrixMarket matrix coordinate pattern general\n" + "% c\n" * 90 + "3 3 1\n1 2\n")
    assert readers.read_edges(path).src.tolist() == [0]


def test_digit_check_costs_no_search_per_comment_byte():
    """A piece dense with comments is checked by running counts: same answer as line by line."""
    rng = np.random.default_rng(5)
    lines = []
    for _ in range(3000):
        kind = rng.integers(0, 4)
        lines.append([b"%c 1.5 -2", b"1 2 -3.5e2", b"4 5 6 % x.y", b"7\t8\t+1"][kind])
    block = b"\n".join(lines) + b"\n"
    assert odd_id_byte(block, b"%", 2)[0] is False
    for bad in (b"1 2.0 3", b"-1 2 3", b"1e0 2 3"):
        with_bad = block + bad + b"\n" + block
        assert odd_id_byte(with_bad, b"%", 2)[0] is True
        assert odd_id_byte(with_bad.replace(bad, b"%" + bad), b"%", 2)[0] is False


def test_a_flood_of_comment_lines_is_checked_line_by_line_in_c(monkeypatch, tmp_path, caplog):
    """Re-audit WEAK case: 4 GiB of comment lines took 141 s without a word, each comment byte placed
    in its line by NumPy; a block that is mostly comments is searched line by line by a regular
    expression instead (the first line, which may go on from the block before, as before)."""
    from dynpr.io import id_text

    calls = []
    original = id_text._odd_id_byte_in_piece
    monkeypatch.setattr(id_text, "_odd_id_byte_in_piece", lambda *args: calls.append(1) or original(*args))
    flood = b"# a comment line, as SNAP files begin\n" * (4 * id_text.CHECK_PIECE_BYTES // 38)
    assert odd_id_byte(flood + b"1 2\n", b"#")[0] is False
    assert odd_id_byte(flood + b"1 2.5\n", b"#")[0] is True
    assert len(calls) <= 2  # the first line of each call, not every piece
    # progress on the logger for a file of more than one block
    monkeypatch.setattr(readers, "TEXT_BLOCK_BYTES", 1 << 20)
    path = tmp_path / "e.txt"
    path.write_bytes(flood + b"1 2\n")
    with caplog.at_level("INFO", logger="dynpr.io.readers"):
        assert readers.read_snap(path).src.tolist() == [1]
    assert any("MB of text read, 0 edges so far" in message for message in caplog.messages), caplog.messages


def test_the_line_by_line_search_agrees_with_the_byte_by_byte_check(monkeypatch):
    """Both ways of :func:`odd_id_byte` on random text: comments, values, odd separators, and pieces that
    begin inside a line or a comment."""
    from dynpr.io import id_text

    rng = np.random.default_rng(11)
    alphabet = [b"1", b"23", b" ", b"\t", b"\n", b"\r\n", b"#", b"%", b"x", b".", b"-", b"e", b"\x0b", b"\x0c"]
    for _ in range(20_000):
        block = b"".join(alphabet[i] for i in rng.integers(0, len(alphabet), rng.integers(0, 25)))
        comment, id_fields = [b"#", b"%"][rng.integers(2)], [None, 1, 2, 3][rng.integers(4)]
        state = id_text.LineState(bool(rng.integers(2)), int(rng.integers(4)), bool(rng.integers(2)))
        exact = id_text._odd_id_byte_in_pieces(block, comment, id_fields, state)
        monkeypatch.setattr(id_text, "_MOSTLY_ODD", 1 << 40)  # any odd byte: the search
        assert odd_id_byte(block, comment, id_fields, state)[0] == exact, (block, comment, id_fields, state)
        monkeypatch.undo()


# --------------------------------------------------------------------------- library calls


@pytest.mark.parametrize("src, dst, n, match", [
    (np.array([0.5, 2.0]), np.array([1, 2]), 3, r"vertex ids must be integers, not float64"),
    (np.array([-1, 2]), np.array([1, 2]), 3, r"negative vertex id"),
    (np.array([0, 7]), np.array([1, 2]), 3, r"vertex id 7 is not below num_vertices=3"),
    (np.array([0, 1, 2]), np.array([1, 2]), 3, r"1-D arrays of one length"),
])
def test_graph_from_edges_refuses_with_a_graph_error(src, dst, n, match):
    from dynpr.graph.graph import Graph

    with pytest.raises(GraphError, match=match):
        Graph.from_edges(src, dst, n)


@pytest.mark.parametrize("fraction", [2.0, 0.0, -0.1, float("nan")])
def test_random_batch_fraction_lies_in_zero_one(fraction):
    from dynpr.batches import batch_rng, random_batch
    from dynpr.graph.graph import Graph

    rng = np.random.default_rng(2)
    g = Graph.from_edges(rng.integers(0, 20, 80), rng.integers(0, 20, 80), 20)
    with pytest.raises(BatchError, match=r"batch fraction must lie in \(0, 1\]"):
        random_batch(g, fraction, 0.8, batch_rng(1, "g", 0.5, 0))


def test_library_refusals_are_dynpr_errors():
    from dynpr import DynamicPageRank
    from dynpr.graph.graph import Graph
    from dynpr.kahn import kahn
    from dynpr.pagerank import l1_error

    g = Graph.from_edges(np.array([0, 1]), np.array([1, 2]), 3)
    with pytest.raises(InputError, match="approach must be one of"):
        DynamicPageRank(g, approach="pagerank", backend="cpu")
    with pytest.raises(InputError, match="graph must be a dynpr.graph.graph.Graph, not NoneType"):
        kahn(None)
    with pytest.raises(InputError, match=r"differ in shape: \(3,\) vs \(4,\)"):
        l1_error(np.ones(3), np.ones(4))


# --------------------------------------------------------------------------- CLI bounds


@pytest.mark.parametrize("argv, flag", [
    (["pagerank", "g.txt", "--repeat", "99999999999999999999"], "--repeat"),
    (["batch", "g.txt", "--fraction", "0.1", "--count", "100000000", "--out", "b.npz"], "--count"),
])
def test_counts_that_would_run_for_days_are_refused(capsys, argv, flag):
    line = one_error_line(capsys, argv)
    assert f"argument {flag}: must be at most" in line
