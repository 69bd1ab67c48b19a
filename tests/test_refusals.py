"""Nothing wrong gets through, second round: every stored array covered, ids parsed strictly, batch
arrays checked against their pointers, no output over an input. Each case builds its input and must
be refused in one named line.
"""

from __future__ import annotations

import os
import re

import numpy as np
import pytest

from dynpr.batches import Batch, read_batches, write_batches
from dynpr.cli import main
from dynpr.io.edge_lists import EdgeListOptions
from dynpr.errors import BatchError, GraphError, InputError, ParseError
from dynpr.graph.graph import Graph
from dynpr.io.prepare import load_prepared, read_graph_with_ids
from dynpr.io.readers import read_snap
from dynpr.graph.validate import ARRAYS_DIGEST_KEY, arrays_digest

from cli_errors import one_error_line


def small_graph(n=30, m=120, seed=1) -> Graph:
    rng = np.random.default_rng(seed)
    return Graph.from_edges(rng.integers(0, n, m), rng.integers(0, n, m), n)


def stored(path) -> dict:
    with np.load(path) as data:
        return dict(data)


def temporal_graph(tmp_path):
    """A prepared temporal graph from an edge list, as the prepare rule writes it."""
    rng = np.random.default_rng(4)
    lines = [f"{u * 10} {v * 10} {t}" for t, (u, v) in enumerate(rng.integers(0, 25, (200, 2)))]
    source = tmp_path / "t.txt"
    source.write_text("\n".join(lines) + "\n")
    graph, temporal, _ = read_graph_with_ids(source, edge_list=EdgeListOptions(temporal=True))
    path = tmp_path / "t.npz"
    graph.save(path, temporal_src=temporal[0], temporal_dst=temporal[1], temporal_time=temporal[2])
    return path


# --------------------------------------------------------------------------- every stored array covered


@pytest.mark.parametrize("edit", ["vertex_ids reversed", "vertex_ids duplicated", "vertex_ids negative",
                                  "temporal_src", "temporal_time", "added array"])
def test_edited_extra_arrays_fail_the_arrays_digest(tmp_path, capsys, edit):
    path = temporal_graph(tmp_path)
    arrays = stored(path)
    if edit == "vertex_ids reversed":
        arrays["vertex_ids"] = arrays["vertex_ids"][::-1].copy()
    elif edit == "vertex_ids duplicated":
        arrays["vertex_ids"][1] = arrays["vertex_ids"][0]
    elif edit == "vertex_ids negative":
        arrays["vertex_ids"][0] = -5
    elif edit == "temporal_src":
        arrays["temporal_src"][[0, 1]] = arrays["temporal_src"][[1, 0]]
    elif edit == "temporal_time":
        arrays["temporal_time"][0] = 10**9
    else:
        arrays["param_note"] = np.asarray("x")
    np.savez(path, **arrays)
    with pytest.raises(GraphError, match=rf"differ from the stored {ARRAYS_DIGEST_KEY}; the file was modified"):
        load_prepared(path)
    assert "t.npz" in one_error_line(capsys, ["pagerank", str(path), "--backend", "cpu"])


@pytest.mark.parametrize("ids, match", [
    (lambda n: np.arange(n)[::-1].copy(), None),  # not increasing, but unique: accepted
    (lambda n: np.r_[7, np.arange(1, n)], "gives id 7 to more than one vertex"),
    (lambda n: np.r_[-3, np.arange(1, n)], "negative id -3"),
])
def test_vertex_ids_must_be_unique_and_non_negative_even_with_a_valid_digest(tmp_path, ids, match):
    g = small_graph()
    path = tmp_path / "g.npz"
    Graph(g.offsets, g.targets, g.in_offsets, g.sources, ids(g.num_vertices)).save(path)
    if match is None:
        np.testing.assert_array_equal(load_prepared(path)[0].vertex_ids, ids(g.num_vertices))
    else:
        with pytest.raises(GraphError, match=match):
            load_prepared(path)


def test_temporal_arrays_are_checked_against_the_graph_even_with_a_valid_digest(tmp_path):
    path = temporal_graph(tmp_path)
    arrays = stored(path)
    graph, temporal = load_prepared(path)
    del arrays[ARRAYS_DIGEST_KEY]
    absent = arrays.copy()
    missing_edge = next((u, v) for u in range(graph.num_vertices) for v in range(graph.num_vertices)
                        if not graph.has_edges(np.array([u]), np.array([v]))[0])
    absent["temporal_src"] = absent["temporal_src"].copy()
    absent["temporal_dst"] = absent["temporal_dst"].copy()
    absent["temporal_src"][3], absent["temporal_dst"][3] = missing_edge
    unordered = arrays.copy()
    unordered["temporal_time"] = unordered["temporal_time"][::-1].copy()
    for edited, match in ((absent, r"temporal edge 3 \(\d+, \d+\) is not an edge of the graph"),
                          (unordered, "temporal_time decreases at edge 1")):
        others = {k: v for k, v in edited.items() if k not in ("offsets", "targets", "in_offsets", "sources",
                                                                 "graph_sha256")}
        np.savez(path, **edited, **{ARRAYS_DIGEST_KEY: np.asarray(arrays_digest(others))})
        with pytest.raises(GraphError, match=match):
            load_prepared(path)


def test_extra_arrays_without_their_digest_are_refused(tmp_path):
    path = temporal_graph(tmp_path)
    arrays = stored(path)
    del arrays[ARRAYS_DIGEST_KEY]
    np.savez(path, **arrays)
    with pytest.raises(GraphError, match=rf"lacks {ARRAYS_DIGEST_KEY} for temporal_dst, .*vertex_ids"):
        load_prepared(path)


def test_ranks_table_reports_the_stored_ids(tmp_path):
    path = temporal_graph(tmp_path)
    graph, _ = load_prepared(path)
    assert np.all(graph.vertex_ids % 10 == 0) and np.all(np.diff(graph.vertex_ids) > 0)


# --------------------------------------------------------------------------- ids parse strictly


@pytest.mark.parametrize("line, shown", [
    ("9007199254740993.0 1", "9007199254740993.0 1"),  # rounds to ...992 as a float
    ("1e3 2", "1e3 2"),
    ("2.0 3", "2.0 3"),
    ("+4 5", "+4 5"),
    ("-1 2", "-1 2"),
])
def test_ids_parse_as_digits_only(tmp_path, capsys, line, shown):
    path = tmp_path / "e.txt"
    path.write_text(f"# ids\n9007199254740992 1\n{line}\n3 4\n")
    with pytest.raises(ParseError, match=rf"e\.txt: line 3: expected 2 non-negative integer ids, got '{re.escape(shown)}'"):
        read_snap(path)
    assert "line 3" in one_error_line(capsys, ["pagerank", str(path)])


def test_comment_after_ids_is_accepted_and_the_bad_line_after_it_is_named(tmp_path):
    path = tmp_path / "e.txt"
    path.write_text("1 2 # a comment with 3.5 and e\n# 1e3\n2 3\n4 x\n")
    with pytest.raises(ParseError, match=r"line 4: expected 2 non-negative integer ids, got '4 x'"):
        read_snap(path)
    path.write_text("1 2 # a comment with 3.5 and e\n# 1e3\n2 3\n")
    assert read_snap(path).src.tolist() == [1, 2]


# --------------------------------------------------------------------------- batch arrays vs pointers


@pytest.mark.parametrize("names, match", [
    (["del_dst"], r"del_src \(2,\), del_dst \(3,\) must be 1-D arrays of one length"),
    (["ins_src"], r"ins_src \(2,\), ins_dst \(1,\) must be 1-D arrays of one length"),
    (["del_src", "del_dst"], r"del_src holds 3 entries, its pointers del_ptr end at 2"),
    (["ins_src", "ins_dst"], r"ins_src holds 2 entries, its pointers ins_ptr end at 1"),
])
def test_batch_array_longer_than_its_pointers_is_refused(tmp_path, capsys, names, match):
    g = small_graph()
    path = tmp_path / "b.npz"
    write_batches(path, [Batch([0, 1], [2, 3], [4], [5])], made_for=g)
    arrays = stored(path)
    for name in names:
        arrays[name] = np.append(arrays[name], 1).astype(np.int32)
    np.savez(path, **arrays)
    with pytest.raises((BatchError, InputError), match=rf"b\.npz: .*{match}"):
        read_batches(path)
    name = names[0]
    graph_file = tmp_path / "g.npz"
    g.save(graph_file)
    assert name in one_error_line(capsys, ["pagerank", str(graph_file), "--batch", str(path), "--backend", "cpu"])


# --------------------------------------------------------------------------- DynamicPageRank.update


def test_dynamic_pagerank_refuses_another_graphs_batch_none_and_a_swapped_graph():
    from dynpr import DynamicPageRank

    g, other = small_graph(seed=1), small_graph(seed=2)
    pr = DynamicPageRank(g, approach="dfp", backend="cpu")
    missing = next((u, v) for u in range(g.num_vertices) for v in range(g.num_vertices)
                   if not g.has_edges(np.array([u]), np.array([v]))[0])
    foreign = Batch([missing[0]], [missing[1]], [], [])  # deletes an edge only another graph has
    before = pr.ranks.copy()
    with pytest.raises(BatchError, match="does not fit the current graph .*1 deletions of missing edges"):
        pr.update(foreign)
    with pytest.raises(InputError, match="needs a dynpr.batches.Batch, not NoneType"):
        pr.update(None)
    with pytest.raises(InputError, match="cannot be replaced"):
        pr.graph = other
    assert pr.graph is g and np.array_equal(pr.ranks, before)  # nothing changed by the refusals
    inserted = Batch([], [], [missing[0]], [missing[1]])
    pr.update(inserted)
    assert pr.graph.has_edges(np.array([missing[0]]), np.array([missing[1]]))[0]
    with pytest.raises(BatchError, match="applied twice"):
        pr.update(inserted)


def test_dynamic_pagerank_hands_out_copies_its_next_update_does_not_see():
    """Re-audit BAD case: ``ranks`` and ``update()`` returned the object's own array, so a caller
    normalising it in place corrupted the next update with no error."""
    from dynpr import DynamicPageRank

    g = small_graph(seed=3)
    missing = next((u, v) for u in range(g.num_vertices) for v in range(g.num_vertices)
                   if not g.has_edges(np.array([u]), np.array([v]))[0])
    batch = Batch([], [], [missing[0]], [missing[1]])
    untouched = DynamicPageRank(g, approach="dfp", backend="cpu")
    expected = untouched.update(batch)
    pr = DynamicPageRank(g, approach="dfp", backend="cpu")
    mine = pr.ranks
    mine *= 1000.0  # the caller's own array: changing it changes nothing inside
    returned = pr.update(batch)
    assert np.array_equal(returned, expected)
    returned /= returned.max()
    assert np.array_equal(pr.ranks, expected)
    with pytest.raises(ValueError, match="read-only"):
        pr.result.ranks[0] = 1.0  # the attribute the next update starts from cannot be changed either


def test_a_folder_given_as_the_graph_is_named_a_folder(tmp_path, capsys):
    """Re-audit WEAK case: a folder given as the graph read "no such file"."""
    folder = tmp_path / "graphs"
    folder.mkdir()
    assert one_error_line(capsys, ["pagerank", str(folder)]) == (
        f"dynpr: error: {folder}: is a folder; give a graph file in it or a catalog name")


# --------------------------------------------------------------------------- outputs over inputs


def test_batch_out_over_the_graph_is_refused_before_the_work(tmp_path, capsys):
    g = small_graph()
    path = tmp_path / "g.npz"
    g.save(path)
    before = path.read_bytes()
    line = one_error_line(capsys, ["batch", str(path), "--fraction", "0.1", "--out", str(path)])
    assert line == (f"dynpr: error: --out {path}: is an input of this run ({path}); writing it would replace the "
                    "input: give another file name")
    assert path.read_bytes() == before
    other_spelling = tmp_path / "sub" / ".." / "g.npz"
    (tmp_path / "sub").mkdir()
    assert "is an input" in one_error_line(capsys, ["batch", str(path), "--fraction", "0.1", "--out",
                                                    str(other_spelling)])


def test_ranks_out_over_an_input_is_refused_before_the_work(tmp_path, capsys, monkeypatch):
    import dynpr.pagerank as pagerank

    edges = tmp_path / "g.csv"  # an edge list that happens to end in .csv
    edges.write_text("1 2\n2 3\n3 1\n")
    before = edges.read_bytes()

    def no_solve(*_args, **_kwargs):
        raise AssertionError("the output must be checked before any solve")
    monkeypatch.setattr(pagerank, "update", no_solve)
    line = one_error_line(capsys, ["pagerank", str(edges), "--ranks-out", str(edges)])
    assert line.startswith(f"dynpr: error: --ranks-out {edges}: is an input of this run")
    assert edges.read_bytes() == before
    g = small_graph()
    graph_file, batch_file = tmp_path / "g.npz", tmp_path / "b.csv"
    g.save(graph_file)
    write_batches(tmp_path / "b.npz", [Batch([], [], [1], [2])], made_for=g)
    (tmp_path / "b.npz").rename(batch_file)
    assert "is an input" in one_error_line(capsys, ["pagerank", str(graph_file), "--batch", str(batch_file),
                                                    "--ranks-out", str(batch_file)])


def test_unwritable_output_folder_is_refused_before_the_work(tmp_path, capsys):
    g = small_graph()
    path = tmp_path / "g.npz"
    g.save(path)
    blocker = tmp_path / "file"
    blocker.write_text("x")
    # a file where a folder of the path would be is a mistyped path (exit 2), as a folder given for a file is
    line = one_error_line(capsys, ["batch", str(path), "--fraction", "0.1", "--out", str(blocker / "b.npz")])
    assert line == f"dynpr: error: --out {blocker / 'b.npz'}: {blocker} is a file, not a folder; give a path in a folder"
    line = one_error_line(capsys, ["pagerank", str(path), "--ranks-out", str(blocker / "sub" / "r.csv")])
    assert line.endswith(f": {blocker} is a file, not a folder; give a path in a folder")
    line = one_error_line(capsys, ["pagerank", str(path), "--batch", str(blocker / "b.npz")])
    assert line == f"dynpr: error: {blocker / 'b.npz'}: no such batch file ({blocker} is a file, not a folder)"
    if os.geteuid() != 0:  # root writes anywhere
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        line = one_error_line(capsys, ["pagerank", str(path), "--ranks-out", str(locked / "r.csv")], 1)
        assert line == f"dynpr: error: --ranks-out {locked / 'r.csv'}: cannot write (folder {locked} is not writable)"


def test_write_errors_name_the_output_not_its_temporary_name(tmp_path):
    from dynpr.graph.atomic_files import atomic_path
    from dynpr.errors import ResourceError

    out = tmp_path / "x.csv"
    with pytest.raises(ResourceError) as err:
        with atomic_path(out) as tmp:
            raise OSError(f"failed writing {tmp}")  # as writers that put the name in the message do
    assert str(err.value) == f"{out}: cannot write (failed writing {out})"
    assert ".tmp" not in str(err.value)


# --------------------------------------------------------------------------- YAML files in one line


def test_corrupt_lock_file_is_one_line_with_what_to_do(tmp_path):
    import shutil
    from pathlib import Path

    from dynpr.io.catalog import LOCK_NAME, load_catalog
    from dynpr.errors import CatalogError

    catalog = tmp_path / "datasets" / "catalog.yaml"
    catalog.parent.mkdir()
    shutil.copy(Path(__file__).resolve().parents[1] / "datasets" / "catalog.yaml", catalog)
    (catalog.parent / LOCK_NAME).write_text("files:\n  a.txt.gz: {sha256: abc\n  size: 3\n")
    with pytest.raises(CatalogError) as err:
        load_catalog(catalog)
    assert str(err.value) == (f"{catalog.parent / LOCK_NAME}: not valid YAML (line 3, column 7: expected ',' or '}}', "
                              "but got ':'); delete it: dynpr writes it again as downloads are verified")
    catalog.write_text("datasets:\n  - [unclosed\n")
    with pytest.raises(CatalogError, match=r"catalog\.yaml: dataset catalog is not valid YAML: line 3, column 1: "):
        load_catalog(catalog)
    catalog.write_text("datasets: {}\nunknown_key: 1\n")
    with pytest.raises(CatalogError) as err:
        load_catalog(catalog)
    assert "\n" not in str(err.value) and "unknown_key" in str(err.value)


# --------------------------------------------------------------------------- the newcomer's command line


@pytest.mark.parametrize("command", ["pagerank", "batch", "kahn"])
def test_every_subcommand_has_a_description(command):
    from dynpr.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command").choices[command]
    assert sub.description and len(sub.description) > 60


def test_dataset_typo_gets_a_suggestion(capsys):
    line = one_error_line(capsys, ["kahn", "collegemsg"])
    assert "unknown dataset 'collegemsg'; did you mean 'CollegeMsg'?" in line
    assert "did you mean" not in one_error_line(capsys, ["kahn", "zzzzzzzz"])


def test_progress_counts_every_solve_with_the_references(tmp_path, monkeypatch, capsys):
    import dynpr.cli as cli

    totals, updates = [], []

    class Bar:
        def __init__(self, total, what):
            totals.append((total, what))

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def update(self, n=1):
            updates.append(n)
    monkeypatch.setattr(cli, "_progress", Bar)
    g = small_graph()
    graph_file, batch_file = tmp_path / "g.npz", tmp_path / "b.npz"
    g.save(graph_file)
    assert main(["batch", str(graph_file), "--fraction", "0.05", "--count", "2", "--out", str(batch_file)]) == 0
    assert main(["pagerank", str(graph_file), "--batch", str(batch_file), "--approach", "nd,dfp",
                 "--repeat", "2", "--reference", "--backend", "cpu"]) == 0
    assert totals == [(1 + 2 * (2 * 2 + 1), "solves")] and sum(updates) == totals[0][0]


# a value column per field: the ids before it are digits only in every field, never rounded
MM_VALUES = {"pattern": "", "real": " -2.5e-3", "integer": " -3", "complex": " 1.0 -2.5"}


@pytest.mark.parametrize("container", ["mtx", "mtx.gz", "tar.gz"])
@pytest.mark.parametrize("entry", ["1 2.0", "2.0 1", "1e0 2", "+1 2"])
@pytest.mark.parametrize("field", sorted(MM_VALUES))
def test_matrix_market_ids_parse_as_digits_only(tmp_path, container, entry, field):
    import gzip
    import io
    import tarfile

    from dynpr.io.readers import read_edges

    value = MM_VALUES[field]
    text = (f"%%MatrixMarket matrix coordinate {field} general\n% c 2.5e3 -1\n5 5 3\n3 4{value}\n{entry}{value}\n"
            f"2 3{value}\n").encode()
    path = tmp_path / f"g.{container}"
    if container == "tar.gz":
        with tarfile.open(path, "w:gz") as tar:
            info = tarfile.TarInfo("g/g.mtx")
            info.size = len(text)
            tar.addfile(info, io.BytesIO(text))
    else:
        path.write_bytes(gzip.compress(text) if container.endswith(".gz") else text)
    with pytest.raises(ParseError, match=rf"line 5: expected two positive integer ids, got '{re.escape(entry + value)}'"):
        read_edges(path)


def test_matrix_market_values_may_hold_signs_and_points(tmp_path):
    from dynpr.io.readers import read_matrix_market

    path = tmp_path / "r.mtx"
    path.write_text("%%MatrixMarket matrix coordinate real general\n3 3 2\n1 2 -2.5e-3\n2 3 +1.0\n")
    assert read_matrix_market(path).src.tolist() == [0, 1]


def test_digits_only_stream_follows_a_comment_across_pieces():
    import io

    from dynpr.io.id_text import DigitsOnly

    def read_in_pieces(data: bytes, size: int, id_fields: int | None = None) -> bytes:
        stream, out = DigitsOnly(io.BytesIO(data), id_fields), b""
        while True:
            buffer = bytearray(size)
            n = stream.readinto(buffer)
            if not n:
                return out
            out += bytes(buffer[:n])
    text = b"1 2\n% a comment 2.0 e+ spanning pieces\n3 4\n"
    for size in (1, 3, 7, 64):
        assert read_in_pieces(text, size) == text
        with pytest.raises(ValueError, match="not digits only"):
            read_in_pieces(text + b"5 6.0\n", size)



def test_digits_only_stream_counts_the_id_fields_across_pieces():
    """A value column may hold signs and points; a field begun in one piece goes on in the next."""
    import io

    from dynpr.io.id_text import DigitsOnly

    def read_in_pieces(data: bytes, size: int) -> bytes:
        stream, out = DigitsOnly(io.BytesIO(data), 2), b""
        while n := stream.readinto(buffer := bytearray(size)):
            out += bytes(buffer[:n])
        return out
    text = b"1 2 -1.0\n  11\t22\t3.5e-3 -4.5\n% 1.0 2.0\n3 4 +5 # x.y\n"
    for size in (1, 2, 3, 5, 7, 64):
        assert read_in_pieces(text, size) == text
        for bad in (b"5 6.0 1\n", b"5.0 6 1\n", b" -5 6 1\n", b"5 6e0 1\n"):
            with pytest.raises(ValueError, match="not digits only"):
                read_in_pieces(text + bad, size)
