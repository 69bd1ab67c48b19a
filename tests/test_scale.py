"""Paper-scale paths on small inputs: chunked R-MAT, transpose in column ranges, row searches,
memory checks, graphs resident on the GPU. Imports nothing that needs jsonschema at module level,
so the GPU machine (without it) collects this file."""

from __future__ import annotations

import re
import sys

import numpy as np
import pytest
import yaml

import dynpr
import dynpr.graph.graph as graph_mod
import dynpr.generate.rmat as rmat_mod
from dynpr.backend import gpu_available
from dynpr.batches import Batch, apply_batch, apply_batch_with_report, random_batch
from dynpr.graph.graph import Graph, row_lower_bound, transpose_csr
from dynpr.errors import BatchError
from dynpr.graph.hostmem import check_host_fits, rss_line
from dynpr.pagerank import PageRankOptions, l1_error, static, update
from dynpr.generate.rmat import rmat_graph, rmat_raw_edges


def test_row_lower_bound_matches_searchsorted_per_row(random_edges):
    graph = Graph.from_edges(*random_edges(50, 600, seed=3))
    rng = np.random.default_rng(0)
    rows, values = rng.integers(0, 50, 400), rng.integers(-1, 52, 400)
    got = row_lower_bound(graph.offsets, graph.targets, rows, values)
    want = [graph.offsets[r] + np.searchsorted(graph.targets[graph.offsets[r]:graph.offsets[r + 1]], v)
            for r, v in zip(rows, values)]
    assert got.tolist() == want


def test_transpose_in_column_ranges_equals_one_scipy_transpose(monkeypatch, random_edges):
    graph = Graph.from_edges(*random_edges(300, 5000, seed=4), 400, self_loops=False)  # rows 300.. empty
    monkeypatch.setattr(graph_mod, "_SCIPY_TRANSPOSE_LIMIT", 97)  # many column ranges, hubs alone in theirs
    in_offsets, sources = transpose_csr(graph.offsets, graph.targets, graph.num_vertices)
    assert np.array_equal(in_offsets, graph.in_offsets) and np.array_equal(sources, graph.sources)
    assert sources.dtype == np.int32 and in_offsets.dtype == np.int64


def test_one_chunk_rmat_is_the_single_stream_generator():
    # at most CHUNK_EDGES drawn edges: exactly the pre-chunking generator (rmat-16..22 unchanged)
    rng = np.random.default_rng(2)
    src, dst = rmat_raw_edges(8, 8 << 8, rng)
    perm = rng.permutation(1 << 8).astype(np.int32)
    src, dst = perm[src], perm[dst]
    keep = src != dst
    want = Graph.from_edges(src[keep], dst[keep], 1 << 8)
    assert np.array_equal(rmat_graph(8, 8, seed=2).targets, want.targets)


def test_host_fits_check_is_one_line_before_allocating(monkeypatch):
    monkeypatch.setattr(rmat_mod, "check_host_fits",
                        lambda need, what: check_host_fits(need * 10**9, what))
    with pytest.raises(MemoryError, match=r"^R-MAT scale 10 edge factor 16 needs [\d.]+ GiB of host memory, "
                                          r"[\d.]+ GiB available$"):
        rmat_graph(10, 16)


def test_random_batch_deletes_only_non_loop_edges_when_some_vertices_lack_loops():
    # vertices 0 and 3 have self-loops, 1 and 2 not: ranks must skip exactly the loop positions
    graph = Graph.from_edges([0, 0, 1, 1, 2, 3, 3], [0, 1, 0, 2, 1, 0, 3], 4, self_loops=False)
    seen = set()
    for seed in range(40):
        batch = random_batch(graph, 0.8, 0.0, np.random.default_rng(seed))
        pairs = set(zip(batch.del_src.tolist(), batch.del_dst.tolist()))
        assert len(pairs) == batch.deletions == 4 and all(u != v for u, v in pairs)
        seen |= pairs
    assert seen == {(0, 1), (1, 0), (1, 2), (2, 1), (3, 0)}


def test_scale_config_validates_and_names_catalog_graphs(repo_root):
    jsonschema = pytest.importorskip("jsonschema")  # absent on the GPU machine, as is the catalog's reader
    from dynpr.io.catalog import load_catalog

    base = yaml.safe_load((repo_root / "config.yaml").read_text())
    scale = yaml.safe_load((repo_root / "config/scale.yaml").read_text())
    merged = {**base, **{k: ({**base[k], **v} if isinstance(v, dict) else v) for k, v in scale.items()}}
    jsonschema.validate(merged, yaml.safe_load((repo_root / "workflow/schemas/config.schema.yaml").read_text()))
    catalog = load_catalog()
    sizes = [(catalog[name].scale, catalog[name].edge_factor) for name in scale["datasets"]]
    assert sizes == [(24, 16), (25, 16), (26, 16), (26, 32), (28, 3)]  # rmat-27-ef28 on an H200 only, by --config


def test_dynamic_pagerank_equals_update_calls_on_the_cpu():
    graph = rmat_graph(9, 8, seed=3)
    pr = dynpr.DynamicPageRank(graph, approach="dfp", backend="cpu")
    current, ranks = graph, static(graph, backend="cpu").ranks
    assert np.array_equal(pr.ranks, ranks)
    for seed in range(3):
        batch = random_batch(current, 0.01, 0.8, np.random.default_rng(seed))
        new = apply_batch(current, batch)
        ranks = update("dfp", current, new, batch, ranks, backend="cpu").ranks
        assert np.array_equal(pr.update(batch), ranks)
        current = new
    assert np.array_equal(pr.graph.targets, current.targets)
    with pytest.raises(ValueError, match="approach must be one of"):
        dynpr.DynamicPageRank(graph, approach="pr", backend="cpu")


@pytest.mark.parametrize("piece", [1, 7, 1000, 1 << 30])
def test_splice_copies_kept_entries_in_pieces(monkeypatch, piece):
    # kept entries are copied in pieces (bounded scratch; CuPy's boolean indexing stops at 2^31
    # elements): any piece size gives the one-piece result, with deletions and insertions in every piece.
    graph = rmat_graph(8, 8, seed=4)
    batch = random_batch(graph, 0.2, 0.8, np.random.default_rng(3))
    whole = apply_batch(graph, batch)
    monkeypatch.setattr(graph_mod, "_MAX_PIECE", piece)
    pieces = apply_batch(graph, batch)
    for name in ("offsets", "targets", "in_offsets", "sources"):
        assert np.array_equal(getattr(pieces, name), getattr(whole, name)), name


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_available(), reason="needs a CUDA device")
def test_row_lower_bound_on_the_device_equals_the_host(random_edges):
    import cupy

    graph = Graph.from_edges(*random_edges(200, 3000, seed=8), 230, self_loops=False)  # some rows empty
    rng = np.random.default_rng(2)
    rows, values = rng.integers(0, 230, 5000), rng.integers(0, 231, 5000).astype(np.int32)
    want = graph_mod.row_lower_bound(graph.offsets, graph.targets, rows, values)
    got = graph_mod.row_lower_bound(cupy.asarray(graph.offsets), cupy.asarray(graph.targets), rows, values)
    assert np.array_equal(got.get(), want)


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("piece", [5, 1 << 30])
@pytest.mark.parametrize("self_loops", [True, False])
def test_batches_applied_on_the_device_equal_the_host_twin(monkeypatch, piece, self_loops):
    monkeypatch.setattr(graph_mod, "_MAX_PIECE", piece)
    from dynpr.gpu.resident import to_host_graph, to_resident

    host = rmat_graph(11, 8, seed=5, self_loops=self_loops)  # without: the first batch adds every loop
    device = to_resident(host)
    for seed, fraction in enumerate((1e-3, 0.05, 0.3)):
        batch = random_batch(host, fraction, 0.8, np.random.default_rng(seed))
        # a messy tail: a missing deletion, a self-loop deletion, a repeated insertion
        batch = Batch(np.r_[batch.del_src, 0, 1], np.r_[batch.del_dst, 0, 1],
                      np.r_[batch.ins_src, batch.ins_src[:1]], np.r_[batch.ins_dst, batch.ins_dst[:1]])
        host, host_report = apply_batch_with_report(host, batch)
        device, device_report = apply_batch_with_report(device, batch)
        assert host_report.skipped == 3
        back = to_host_graph(device)
        assert device_report == host_report
        for name in ("offsets", "targets", "in_offsets", "sources"):
            assert np.array_equal(getattr(back, name), getattr(host, name)), name


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_available(), reason="needs a CUDA device")
def test_dynamic_pagerank_on_the_gpu_matches_the_cpu():
    graph = rmat_graph(10, 8, seed=2)
    gpu = dynpr.DynamicPageRank(graph, backend="gpu")
    cpu = dynpr.DynamicPageRank(graph, backend="cpu")
    assert type(gpu.graph.targets).__module__.startswith("cupy")
    for seed in range(3):
        batch = random_batch(cpu.graph, 1e-2, 0.8, np.random.default_rng(seed))
        assert l1_error(gpu.update(batch), cpu.update(batch)) < 1e-6
    assert type(gpu.graph.targets).__module__.startswith("cupy")


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("relabel", [False, True])
@pytest.mark.parametrize("variant", [None, "partitioned"])
def test_ranks_stay_where_the_resident_graph_is(monkeypatch, relabel, variant):
    import cupy

    import dynpr.gpu.pagerank as gpu_pagerank
    from dynpr.gpu.resident import to_resident, to_resident_batch

    monkeypatch.setattr(gpu_pagerank, "relabels", lambda n, l2: relabel)
    options = PageRankOptions(variant=variant)
    old = rmat_graph(10, 8, seed=4)
    batch = random_batch(old, 1e-2, 0.8, np.random.default_rng(0))
    batch_device = to_resident_batch(batch)
    assert isinstance(batch_device.ins_dst, cupy.ndarray) and batch_device.to_host().insertions == batch.insertions
    new = apply_batch(old, batch)
    old_device, new_device = to_resident(old), apply_batch(to_resident(old), batch_device)
    assert np.array_equal(new_device.targets.get(), new.targets)
    start = static(old, options, backend="gpu").ranks
    start_device = cupy.asarray(start)
    reference = static(new_device, options, backend="gpu").ranks
    assert isinstance(reference, cupy.ndarray)
    for approach in ("nd", "dt", "df", "dfp"):
        on_host = update(approach, old, new, batch, start, options, backend="gpu")
        on_device = update(approach, old_device, new_device, batch_device, start_device, options, backend="gpu")
        assert isinstance(on_device.ranks, cupy.ndarray) and isinstance(on_host.ranks, np.ndarray)
        assert on_device.iterations == on_host.iterations
        assert np.array_equal(on_device.ranks.get(), on_host.ranks), approach
        assert np.array_equal(start_device.get(), start)  # the engines copy the start before writing
        assert l1_error(on_device.ranks, reference) == pytest.approx(l1_error(on_host.ranks, reference.get()),
                                                                      rel=1e-12)
    cpu = update("dfp", old, new, batch_device, start, options, backend="cpu")  # the CPU twin takes it to the host
    assert cpu.iterations == update("dfp", old, new, batch, start, options, backend="cpu").iterations
    outside = Batch(batch_device.del_src, batch_device.del_dst, batch_device.ins_src, batch_device.ins_dst + old.num_vertices)
    with pytest.raises(BatchError, match="outside"):  # checked on the device before any kernel
        update("dfp", old_device, new_device, outside, start_device, options, backend="gpu")


@pytest.mark.parametrize("block", [1, 37, 1 << 24])
def test_streaming_searches_equal_row_binary_search(monkeypatch, random_edges, block):
    graph = Graph.from_edges(*random_edges(200, 3000, seed=6), 230, self_loops=False)  # some rows empty
    rng = np.random.default_rng(1)
    src, dst = graph.edges()
    pick = rng.integers(0, graph.num_edges, 500)
    u = np.r_[src[pick], rng.integers(0, 230, 500)]
    v = np.r_[dst[pick], rng.integers(0, 230, 500)]
    monkeypatch.setattr(graph_mod, "_BULK_QUERIES", 1 << 40)
    want = graph.find_edges(u, v)
    loops = graph.find_edges(np.arange(230), np.arange(230))
    monkeypatch.setattr(graph_mod, "_BULK_QUERIES", 0)
    monkeypatch.setattr(graph_mod, "_LOOP_BLOCK", block)
    got = graph.find_edges(u, v)
    assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
    assert got[0].sum() >= 500
    assert np.array_equal(graph.self_loop_positions, np.where(loops[0], loops[1], -1))


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_available(), reason="needs a CUDA device")
def test_random_experiment_on_the_gpu_matches_the_cpu_rows():
    from dynpr.evaluation.experiments import run_batches

    graph = rmat_graph(10, 8, seed=1)
    batches = {1e-2: [random_batch(graph, 1e-2, 0.8, np.random.default_rng(s)) for s in range(2)]}
    rows = {backend: run_batches("random", "r", graph, batches, ["static", "dfp"], backend=backend, commit="c")
            for backend in ("cpu", "gpu")}
    assert len(rows["gpu"]) == len(rows["cpu"]) == 4
    for g, c in zip(rows["gpu"], rows["cpu"]):
        assert (g["approach"], g["edges"], g["deletions"]) == (c["approach"], c["edges"], c["deletions"])
        assert g["l1_error"] < 1e-3 and c["l1_error"] < 1e-3


def test_matrix_market_header_beyond_int32_is_one_line_before_reading(write_file):
    from dynpr.io.readers import ParseError, read_matrix_market

    path = write_file("huge.mtx", "%%MatrixMarket matrix coordinate pattern general\n"
                                  "3000000000 3000000000 2\n1 2\n2 1\n")
    with pytest.raises(ParseError, match=r"^.*huge.mtx: header says 3,000,000,000 vertices; vertex ids are int32"):
        read_matrix_market(path)


def test_matrix_market_too_large_for_the_host_is_one_line(write_file, monkeypatch):
    import dynpr.io.readers as readers_mod
    from dynpr.graph.hostmem import check_host_fits as real_check

    monkeypatch.setattr(readers_mod, "check_host_fits", lambda need, what: real_check(need * 10**12, what))
    path = write_file("big.mtx", "%%MatrixMarket matrix coordinate pattern symmetric\n4 4 2\n1 2\n3 4\n")
    with pytest.raises(MemoryError, match=r"big.mtx: graph needs [\d.]+ GiB of host memory, [\d.]+ GiB available$"):
        readers_mod.read_matrix_market(path)


def _mtx(write_file, name, body, symmetry="general"):
    return write_file(name, f"%%MatrixMarket matrix coordinate pattern {symmetry}\n% made by a test\n" + body)


@pytest.mark.parametrize("symmetry", ["general", "symmetric"])
def test_matrix_market_in_chunks_equals_one_chunk(write_file, monkeypatch, caplog, symmetry):
    import dynpr.io.readers as readers_mod

    rng = np.random.default_rng(2)
    pairs = rng.integers(1, 41, (300, 2))
    path = _mtx(write_file, "c.mtx.gz", "40 40 300\n" + "".join(f"{u} {v}\n" for u, v in pairs), symmetry)
    whole = readers_mod.read_matrix_market(path)  # by fast_matrix_market, this layout being canonical
    monkeypatch.setattr(readers_mod, "read_entries", lambda *args: None)  # by pandas, in chunks of 7
    monkeypatch.setattr(readers_mod, "MM_CHUNK_ENTRIES", 7)
    with caplog.at_level("INFO", logger="dynpr.io.readers"):
        chunked = readers_mod.read_matrix_market(path)
    assert np.array_equal(chunked.src, whole.src) and np.array_equal(chunked.dst, whole.dst)
    assert chunked.src.dtype == np.int32 and chunked.num_vertices == 40
    assert sum("entries read" in r.getMessage() for r in caplog.records) == 43  # ceil(300 / 7)
    loops = int(np.count_nonzero(pairs[:, 0] == pairs[:, 1]))
    assert len(chunked.src) == (300 if symmetry == "general" else 600 - loops)


@pytest.mark.parametrize("body, match", [
    ("5 5 4\n1 2\n2 3\n3 4\n", "3 entries but the header says 4: the file is truncated"),
    ("5 5 2\n1 2\n2 3\n3 4\n", "more entries than the header's 2"),
    ("5 5 4\n1 2\n2 3\n3 4\n6 1\n", r"line 7: id out of range 1\.\.5"),
    ("5 5 4\n1 2\n2 3\n3 4\n0 1\n", "line 7: id out of range"),
    ("5 5 4\n1 2\n2 3\n3 x\n4 1\n", "line 6: expected two positive integer ids"),
])
def test_matrix_market_errors_name_the_line_in_any_chunk(write_file, monkeypatch, body, match):
    import dynpr.io.readers as readers_mod

    monkeypatch.setattr(readers_mod, "MM_CHUNK_ENTRIES", 2)
    with pytest.raises(readers_mod.ParseError, match=rf"^\S*bad\.mtx: {match}"):
        readers_mod.read_matrix_market(_mtx(write_file, "bad.mtx", body))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
def test_rss_line_splits_files_from_own_memory_and_gives_the_peak():

    held = np.ones(64 << 17)  # 64 MiB of this process's own memory
    now, files, own, peak = map(float, re.fullmatch(
        r"host RSS ([\d.]+) GiB \(files ([\d.]+), own ([\d.]+)\), peak ([\d.]+) GiB", rss_line()).groups())
    assert own >= 0.06 and abs(now - files - own) <= 0.02 and peak >= now
    del held
