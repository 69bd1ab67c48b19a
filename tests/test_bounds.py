"""Nothing wrong gets through, second round: each case of the audit is built here and must be refused
in one named line, or handled, with memory bounded by what the file declares.

Memory cases lower the host's available memory (``dynpr.graph.hostmem.available_bytes``) to a few MB and
build inputs that declare more than that: the checks must refuse them before allocating, which
tracemalloc confirms (no gzip bomb is inflated beyond a few MB).
"""

from __future__ import annotations

import gzip
import re
import io
import tarfile
import time
import tracemalloc
import zipfile
import zlib

import numpy as np
import pytest

import dynpr.graph.hostmem as hostmem
import dynpr.io.readers as readers
from dynpr.io.download import verify_file
from dynpr.errors import EXIT_RESOURCE, InputError, ParseError
from dynpr.graph.graph import Graph
from dynpr.graph.hostmem import BUILD_BYTES_PER_RECORD, BUILD_BYTES_PER_VERTEX, build_bytes
from dynpr.io.prepare import build_graph
from dynpr.io.readers import EdgeData, read_edges, read_matrix_market, read_snap, read_suitesparse_tar
from dynpr.graph.validate import check_npz_header, npz_headers, read_graph_npz

from cli_errors import one_error_line


MB = 1 << 20


@pytest.fixture
def host_memory(monkeypatch):
    """Set the host's available memory, in bytes, for the memory checks."""
    def set_available(nbytes: int) -> None:
        monkeypatch.setattr(hostmem, "available_bytes", lambda: nbytes)
    return set_available


def traced_peak(call) -> tuple[int, BaseException | None]:
    """Peak bytes traced while ``call()`` runs, and what it raised."""
    tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    raised = None
    try:
        call()
    except BaseException as err:  # noqa: BLE001 - handed back to the test
        raised = err
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    return peak, raised


# --------------------------------------------------------------------------- .npz: headers before arrays


def test_npz_declaring_more_than_the_host_has_is_refused_before_reading(tmp_path, host_memory, capsys):
    path = tmp_path / "g.npz"
    big = np.zeros(8 * MB, dtype=np.int64)  # 64 MB each, a few hundred KB compressed
    offsets = big.copy()
    offsets[-1] = len(big)  # consistent with the targets: only its size is wrong for this host
    np.savez_compressed(path, offsets=offsets, targets=big.astype(np.int32))
    assert path.stat().st_size < 2 * MB
    host_memory(16 * MB)
    peak, raised = traced_peak(lambda: read_graph_npz(path))
    assert isinstance(raised, MemoryError)
    assert str(raised).startswith(f"{path}: reading its arrays needs 0.09 GiB of host memory")
    assert peak < 2 * MB  # not one array was inflated
    line = one_error_line(capsys, ["pagerank", str(path)], EXIT_RESOURCE)
    assert line == f"dynpr: error: {raised}"


def test_npz_member_declaring_more_than_it_holds_is_refused(tmp_path):
    member = io.BytesIO()
    np.save(member, np.zeros(3, dtype=np.int64))
    data = member.getvalue().replace(b"'shape': (3,)", b"'shape': (9,)")  # claims 72 bytes; 24 are stored
    path = tmp_path / "g.npz"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("offsets.npy", data)
    with pytest.raises(InputError, match=r"member 'offsets' declares int64 \(9,\) \(72 bytes\) but holds 24 bytes"):
        read_graph_npz(path)


@pytest.mark.parametrize("save", [np.savez, np.savez_compressed])
def test_npz_pointers_are_checked_against_the_arrays_before_any_is_inflated(tmp_path, host_memory, capsys, save):
    """Re-audit BAD case: 42 MB of compressed members declaring 9.6 GB passed the memory check and were
    inflated before a 4-entry offsets array refused them. Scaled down: 64 MB declared, a few MB of host
    memory traced."""
    path = tmp_path / "g.npz"
    huge = np.zeros(16 * MB, dtype=np.int32)
    small = np.array([0, 1, 2, 3], dtype=np.int64)
    save(path, offsets=small, in_offsets=small, targets=huge, sources=huge)
    host_memory(1 << 40)  # the memory check passes: only the shapes can refuse it
    peak, raised = traced_peak(lambda: read_graph_npz(path))
    assert isinstance(raised, InputError)
    assert str(raised) == (f"{path}: not a graph file (.npz): targets holds 16,777,216 entries, its pointers "
                           "offsets end at 3; the file is corrupt")
    assert peak < 2 * MB  # not one array was inflated
    assert "its pointers offsets end at 3" in one_error_line(capsys, ["pagerank", str(path)])


def test_npz_member_claiming_more_than_deflate_can_hold_is_a_broken_file(tmp_path, host_memory):
    """An npz bomb whose zip entry claims more than deflate stores is a broken file, not a memory shortage."""
    path = tmp_path / "g.npz"
    member = io.BytesIO()
    np.save(member, np.zeros(1000, dtype=np.int64))
    claimed = 64 * MB + 128  # the .npy header declares this much too
    data = member.getvalue().replace(b"(1000,)", f"({(claimed - 128) // 8},)".encode())
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("targets.npy", data)
    raw = bytearray(path.read_bytes())
    local, central = raw.index(b"PK\x03\x04"), raw.index(b"PK\x01\x02")
    for size_at in (local + 22, central + 24):  # the uncompressed size, as a crafted bomb states it
        raw[size_at:size_at + 4] = claimed.to_bytes(4, "little")
    path.write_bytes(bytes(raw))
    host_memory(16 * MB)
    with pytest.raises(InputError, match=r"member 'targets' claims 67,108,992 bytes from \d+ compressed, more than "
                                         r"deflate can hold; the file is corrupt"):
        read_graph_npz(path)


@pytest.mark.parametrize("arrays, match", [
    ({"offsets": np.zeros(4, np.int64), "in_offsets": np.zeros(5, np.int64)},
     r"offsets \(4,\), in_offsets \(5,\) must be 1-D arrays of one length"),
    ({"targets": np.zeros((2, 2), np.int32), "sources": np.zeros(4, np.int32)}, "must be 1-D arrays of one length"),
    ({"offsets": np.zeros(4, np.int64), "vertex_ids": np.arange(5)}, r"vertex_ids \(5,\) must hold one id per vertex"),
    ({"del_src": np.zeros(2, np.int32), "del_dst": np.zeros(3, np.int32)},
     r"del_src \(2,\), del_dst \(3,\) must be 1-D"),
    ({"temporal_src": np.zeros(2, np.int32), "temporal_dst": np.zeros(2, np.int32),
      "temporal_time": np.zeros(1, np.int64)}, "temporal_time"),
])
def test_npz_shapes_are_checked_against_each_other_from_the_headers(tmp_path, arrays, match):
    path = tmp_path / "x.npz"
    np.savez(path, **arrays)
    with pytest.raises(InputError, match=match):
        check_npz_header(path, "graph file (.npz)")


def test_npz_headers_read_no_array(tmp_path):
    path = tmp_path / "x.npz"
    np.savez(path, a=np.arange(5, dtype=np.int16), b=np.zeros((2, 3)))
    assert npz_headers(path, "file") == {"a": ((5,), np.dtype(np.int16)), "b": ((2, 3), np.dtype(np.float64))}


# --------------------------------------------------------------------------- text: read in blocks


def gzip_bomb(path, text_gib: float, line: bytes = b"1 2\n"):
    """A multi-member gzip of ``text_gib`` GiB of ``line`` repeated, a few KB per inflated MiB."""
    piece = gzip.compress(line * (MB // len(line)), compresslevel=9)
    with open(path, "wb") as fh:
        for _ in range(int(text_gib * 1024)):
            fh.write(piece)
    return path


def test_gzip_bomb_edge_list_stops_early_with_the_need(tmp_path, host_memory, monkeypatch, capsys):
    path = gzip_bomb(tmp_path / "e.txt.gz", 10)  # 10 GiB of text
    assert path.stat().st_size < 16 * MB
    monkeypatch.setattr(readers, "TEXT_BLOCK_BYTES", MB)
    host_memory(32 * MB)
    started = time.perf_counter()
    peak, raised = traced_peak(lambda: read_snap(path))
    assert isinstance(raised, MemoryError), raised
    assert str(raised).startswith(f"{path}: graph needs ") and "GiB available" in str(raised)
    assert peak < 32 * MB and time.perf_counter() - started < 10
    line = one_error_line(capsys, ["pagerank", str(path)], EXIT_RESOURCE)
    assert line.startswith(f"dynpr: error: {path}: graph needs ")


def test_edge_list_in_blocks_reads_what_one_pass_reads(tmp_path, monkeypatch):
    rng = np.random.default_rng(5)
    edges = rng.integers(0, 10**12, (3000, 3))
    text = "# header\n" + "".join(f"{u}\t{v} {t}\n" + ("# between\n\n" if i % 97 == 0 else "")
                                  for i, (u, v, t) in enumerate(edges))
    path = tmp_path / "t.txt"
    path.write_text(text)
    monkeypatch.setattr(readers, "TEXT_BLOCK_BYTES", 1000)  # lines cut across blocks
    got = read_snap(path, temporal=True)
    order = np.argsort(edges[:, 2], kind="stable")
    for column, want in zip((got.src, got.dst, got.time), edges[order].T):
        np.testing.assert_array_equal(column, want)


def test_line_longer_than_a_block_is_refused(tmp_path, monkeypatch):
    path = tmp_path / "e.txt"
    path.write_bytes(b"1 2\n" + b"3" * 5000)
    monkeypatch.setattr(readers, "TEXT_BLOCK_BYTES", 1000)
    with pytest.raises(ParseError, match="line 2 is longer than 1,000 bytes: not a text graph file"):
        read_snap(path)


# --------------------------------------------------------------------------- the memory model, measured


def _measured_build(edges: EdgeData) -> int:
    peak, raised = traced_peak(lambda: build_graph(edges))
    assert raised is None
    return peak


@pytest.mark.parametrize("case", ["vertices", "records-mm", "records-snap"])
def test_memory_model_covers_the_measured_peak_within_half_again(case):
    """build_bytes (what the readers and build_graph check) against tracemalloc's peak: at least the
    measurement, at most 1.5 times it, where vertices dominate and where records do."""
    rng = np.random.default_rng(2)
    m = 400_000
    if case == "vertices":  # a Matrix Market matrix of many vertices and few entries
        n = 1_000_000
        edges = EdgeData(np.array([0, 5], np.int32), np.array([7, 1], np.int32), num_vertices=n)
    elif case == "records-mm":
        n = 20_000
        edges = EdgeData(*(rng.integers(0, n, m).astype(np.int32) for _ in range(2)), num_vertices=n)
    else:  # SNAP ids, renumbered
        edges = EdgeData(*(rng.integers(0, 10**12, m) for _ in range(2)))
        n = len(np.unique(np.concatenate([edges.src, edges.dst])))
    measured = _measured_build(edges)
    model = build_bytes(len(edges.src), n)
    assert measured <= model <= 1.5 * measured, (measured, model)


def test_matrix_market_of_many_vertices_is_refused_by_the_per_vertex_cost(tmp_path, host_memory, capsys):
    n = 20_000_000  # with one entry: the vertices alone need BUILD_BYTES_PER_VERTEX each
    path = tmp_path / "m.mtx"
    path.write_text(f"%%MatrixMarket matrix coordinate pattern general\n{n} {n} 1\n1 2\n")
    host_memory(n * BUILD_BYTES_PER_VERTEX - 1)
    assert n * 24 + 48 < n * BUILD_BYTES_PER_VERTEX - 1  # the former model let it through
    with pytest.raises(MemoryError, match=rf"^{path}: graph needs 1\.64 GiB of host memory"):
        read_matrix_market(path)
    assert one_error_line(capsys, ["kahn", str(path)], EXIT_RESOURCE).startswith(f"dynpr: error: {path}: graph needs")


def test_a_cpu_run_is_checked_for_what_it_holds_beyond_the_build(tmp_path, host_memory, capsys, monkeypatch):
    """Re-audit BAD case: the check budgeted the build's 88 bytes per vertex where a CPU run holds 114
    (the graph and the engine), so graphs between the two passed and then exceeded the host. The
    CLI checks the run from the Matrix Market header, before reading anything; the engine checks it
    again before it allocates (for any graph)."""
    from dynpr.io import prepare

    n = 1_000_000
    path = tmp_path / "m.mtx"
    path.write_text(f"%%MatrixMarket matrix coordinate pattern symmetric\n{n} {n} 1\n1 2\n")
    host_memory(100 * n)  # the build's check passes (88 bytes per vertex); the run does not fit
    monkeypatch.setattr(prepare, "read_graph_file", lambda *args, **kwargs: pytest.fail("read before the check"))
    line = one_error_line(capsys, ["pagerank", str(path), "--backend", "cpu"], EXIT_RESOURCE)
    assert line.startswith(f"dynpr: error: {path}: PageRank on the CPU of 1,000,000 vertices and up to 1,000,002 "
                           "edges needs 0.14 GiB of host memory, 0.09 GiB available")
    monkeypatch.undo()
    host_memory(100 * n)
    monkeypatch.setattr("dynpr.cli._check_cpu_run_fits", lambda graph: None)  # the engine's check, behind it
    line = one_error_line(capsys, ["pagerank", str(path), "--backend", "cpu"], EXIT_RESOURCE)
    assert line.startswith(f"dynpr: error: {path}: PageRank on the CPU of 1,000,000 vertices and 1,000,002 edges "
                           "needs 0.12 GiB of host memory, 0.09 GiB available")


def test_the_run_check_reads_the_header_of_every_matrix_market_container(tmp_path):
    from dynpr.io.prepare import matrix_market_size

    mtx = b"%%MatrixMarket matrix coordinate real symmetric\n% c\n7 7 3\n1 2 .5\n2 3 1\n4 4 2\n"
    (tmp_path / "m.mtx").write_bytes(mtx)
    (tmp_path / "m.mtx.gz").write_bytes(gzip.compress(mtx))
    with tarfile.open(tmp_path / "m.tar.gz", "w:gz") as tar:
        info = tarfile.TarInfo("m/m.mtx")
        info.size = len(mtx)
        tar.addfile(info, io.BytesIO(mtx))
    (tmp_path / "m.txt").write_text("1 2\n")
    for name in ("m.mtx", "m.mtx.gz", "m.tar.gz"):
        assert matrix_market_size(tmp_path / name) == (7, 2 * 3 + 7)  # both ways, and the self-loops
    assert matrix_market_size(tmp_path / "m.txt") is None and matrix_market_size(tmp_path / "none.mtx") is None


@pytest.mark.parametrize("gzipped", [False, True])
def test_size_line_declaring_more_entries_than_the_file_holds_is_a_parse_error(tmp_path, gzipped, capsys):
    text = b"%%MatrixMarket matrix coordinate pattern general\n% c\n5 5 900000000\n1 2\n"
    path = tmp_path / ("m.mtx.gz" if gzipped else "m.mtx")
    path.write_bytes(gzip.compress(text) if gzipped else text)
    with pytest.raises(ParseError, match=r"line 3: the size line declares 900,000,000 entries, but the file holds "
                                         r"at most [\d,]+: the size line is wrong or the file is truncated"):
        read_matrix_market(path)
    one_error_line(capsys, ["kahn", str(path)])


def test_build_bytes_is_linear_in_both():
    assert build_bytes(3, 5) == 3 * BUILD_BYTES_PER_RECORD + 5 * BUILD_BYTES_PER_VERTEX


# --------------------------------------------------------------------------- archives: bounded pieces


def _zeros_gzip_member(fh, nbytes: int) -> None:
    block = bytes(MB)
    for _ in range(nbytes // MB):
        fh.write(block)


def big_member_tar(path, member_mib: int):
    """A .tar.gz holding a ``member_mib`` MiB member of zeros (a few hundred KB compressed), then a matrix."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w|") as tar:
        info = tarfile.TarInfo("g/notes.bin")
        info.size = member_mib * MB
        body = io.BytesIO()
        _zeros_gzip_member(body, info.size)
        body.seek(0)
        tar.addfile(info, body)
        mtx = b"%%MatrixMarket matrix coordinate pattern general\n3 3 2\n1 2\n2 3\n"
        info = tarfile.TarInfo("g/g.mtx")
        info.size = len(mtx)
        tar.addfile(info, io.BytesIO(mtx))
    compressor = zlib.compressobj(1, zlib.DEFLATED, 31)
    path.write_bytes(compressor.compress(raw.getvalue()) + compressor.flush())
    return path


def test_tarball_inflates_in_bounded_pieces_in_the_reader_and_the_download_check(tmp_path):
    path = big_member_tar(tmp_path / "g.tar.gz", 128)
    assert path.stat().st_size < MB
    peak, raised = traced_peak(lambda: read_suitesparse_tar(path))
    assert raised is None and peak < 16 * MB, (peak, raised)  # tarfile's r|gz holds the 128 MiB at once
    peak, raised = traced_peak(lambda: verify_file(path, name="g.tar.gz", source=str(path)))
    assert raised is None and peak < 16 * MB, (peak, raised)


@pytest.mark.parametrize("compress", ["bz2", "xz", "none"])
def test_tarball_of_other_compressions_is_read(tmp_path, compress):
    mtx = b"%%MatrixMarket matrix coordinate pattern general\n3 3 2\n1 2\n2 3\n"
    path = tmp_path / f"g.tar{'' if compress == 'none' else '.' + compress}"
    with tarfile.open(path, "w" if compress == "none" else f"w:{compress}") as tar:
        info = tarfile.TarInfo("g/g.mtx")
        info.size = len(mtx)
        tar.addfile(info, io.BytesIO(mtx))
    edges = read_edges(path, "suitesparse-mm")
    assert edges.num_vertices == 3 and edges.src.tolist() == [0, 1]


def test_graph_from_many_vertices_fits_when_memory_allows(host_memory):
    """The per-vertex model refuses only what does not fit: the same kind of graph, small, is built."""
    host_memory(10**9)
    graph, *_ = build_graph(EdgeData(np.array([0]), np.array([1]), num_vertices=1000))
    assert isinstance(graph, Graph) and graph.num_vertices == 1000


@pytest.mark.parametrize("name, call", [
    ("e.txt.gz", lambda path: read_edges(path)),  # the format is guessed from the first data line
    ("m.mtx.gz", read_matrix_market),  # the banner
    ("e.txt.gz", lambda path: read_snap(path)),  # the blocks of the parse
])
def test_a_line_without_end_is_not_read_whole(tmp_path, monkeypatch, name, call):
    path = gzip_bomb(tmp_path / name, 0.25, line=b"7" * 64)  # 256 MiB without a newline
    monkeypatch.setattr(readers, "MAX_LINE_BYTES", MB)
    monkeypatch.setattr(readers, "TEXT_BLOCK_BYTES", MB)
    peak, raised = traced_peak(lambda: call(path))
    assert isinstance(raised, ParseError), raised
    assert re.search(r"line 1 is longer than 1,048,576 bytes: not a text graph file", str(raised)), raised
    assert peak < 16 * MB


def test_search_for_the_bad_line_reads_lines_bounded(tmp_path, monkeypatch):
    path = tmp_path / "e.txt"
    path.write_bytes(b"1 2\n" + b"7" * (2 * MB) + b"\n3 4\n")  # one block, a line the parser cannot take
    with pytest.raises(ParseError, match=r"e\.txt: line 2: expected 2 fields, got 1: '7{80}'$"):
        read_snap(path)
    monkeypatch.setattr(readers, "TEXT_BLOCK_BYTES", MB)  # the search reads blocks of whole lines, no longer
    with pytest.raises(ParseError, match=r"e\.txt: line 2 is longer than 1,048,576 bytes: not a text graph file"):
        read_snap(path)
