"""Nothing wrong gets through: each refused input is built here and must fail in one named line.

One test per case of the audit (prepared graphs, batch ids, batch files of another
graph, a wrong file from a mirror, infinite flags, signals) plus its weak cases.
"""

from __future__ import annotations

import gzip
import os
import re
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from dynpr import pagerank as pr
from dynpr.graph.atomic_files import atomic_path, sweep_stale
from dynpr.batches import Batch, read_batches, write_batches
from dynpr.cli import main
from dynpr.errors import EXIT_INPUT, BatchError, DynprError, GraphError, InputError, ResourceError
from dynpr.graph.graph import Graph
from dynpr.io.prepare import load_prepared
from dynpr.graph.validate import DIGEST_KEY, check_graph

from cli_errors import one_error_line


RNG = np.random.default_rng(3)


def small_graph(n=30, m=120, seed=1) -> Graph:
    rng = np.random.default_rng(seed)
    return Graph.from_edges(rng.integers(0, n, m), rng.integers(0, n, m), n)


def save_arrays(path, graph_arrays: dict, digest: str | None):
    extra = {} if digest is None else {DIGEST_KEY: np.asarray(digest)}
    np.savez(path, **graph_arrays, **extra)


def arrays(g: Graph) -> dict:
    return {"offsets": g.offsets.copy(), "targets": g.targets.copy(), "in_offsets": g.in_offsets.copy(),
            "sources": g.sources.copy()}


# --------------------------------------------------------------------------- case 1: prepared graphs


def _corrupt(name: str, g: Graph) -> dict:
    a = arrays(g)
    if name == "offsets":  # offsets beyond the targets (a last entry off is refused from the header check)
        a["offsets"][len(a["offsets"]) // 2] = len(a["targets"]) + 2
    elif name == "decreasing":
        a["offsets"][5] = a["offsets"][7] + 1
    elif name == "target_id":  # a target beyond the vertex count
        a["targets"][-1] = g.num_vertices + 7
    elif name == "transpose":  # a transpose of another graph with the same in-degrees
        other = small_graph(seed=9)
        a["in_offsets"], a["sources"] = other.in_offsets, other.sources
        a["in_offsets"] = g.in_offsets  # keep lengths: only the sources differ
        a["sources"] = np.sort(RNG.integers(0, g.num_vertices, g.num_edges)).astype(np.int32)
    elif name == "float":
        a["targets"] = a["targets"].astype(np.float64)
    elif name == "unsorted":
        a["targets"][[0, 1]] = a["targets"][[1, 0]]
    return a


@pytest.mark.parametrize("name,message", [
    ("offsets", r"offsets run from 0 to \d+ \(at most \d+\), expected 0 to \d+"),
    ("decreasing", "offsets decrease at vertex"),
    ("target_id", "is outside 0..29"),
    ("transpose", "(in-edges)|transpose"),
    ("float", "targets must hold integers"),
    ("unsorted", "unsorted or repeats"),
])
def test_inconsistent_prepared_graph_is_refused(tmp_path, capsys, name, message):
    g = small_graph()
    path = tmp_path / "g.npz"
    save_arrays(path, _corrupt(name, g), g.sha256)
    with pytest.raises(GraphError, match=message):
        load_prepared(path)
    line = one_error_line(capsys, ["pagerank", str(path), "--backend", "cpu"])
    assert str(path) in line


def test_transpose_of_another_graph_with_equal_degrees_is_refused():
    # in-degrees and sortedness all fine: only the edge fingerprint can tell
    g = Graph.from_edges([0, 1, 2], [1, 2, 0], 3)
    other = Graph.from_edges([0, 1, 2], [2, 0, 1], 3)  # the reversed cycle: same degrees everywhere
    with pytest.raises(GraphError, match="transpose .* describes other edges"):
        check_graph(Graph(g.offsets, g.targets, other.in_offsets, other.sources), "g")
    assert check_graph(g).num_edges == 6


def test_prepared_graph_edited_on_disk_fails_its_checksum(tmp_path, capsys):
    g, edited = small_graph(seed=1), small_graph(seed=2)  # both consistent graphs
    path = tmp_path / "g.npz"
    g.save(path)
    assert load_prepared(path)[0].num_edges == g.num_edges
    save_arrays(path, arrays(edited), g.sha256)
    with pytest.raises(GraphError, match="differs from the stored .* modified"):
        load_prepared(path)
    save_arrays(path, arrays(g), None)
    with pytest.raises(GraphError, match="lacks graph_sha256"):
        load_prepared(path)
    assert str(path) in one_error_line(capsys, ["pagerank", str(path), "--backend", "cpu"])


@pytest.mark.parametrize("content,message", [
    (b"PK\x03\x04 truncated", "not a graph file"),
    (b"plain text", "not a graph file"),
])
def test_unreadable_npz_is_one_line(tmp_path, capsys, content, message):
    path = tmp_path / "g.npz"
    path.write_bytes(content)
    assert message in one_error_line(capsys, ["pagerank", str(path), "--backend", "cpu"])


def test_truncated_and_object_npz(tmp_path, capsys):
    g = small_graph()
    good = tmp_path / "good.npz"
    g.save(good)
    cut = tmp_path / "cut.npz"
    cut.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    assert "cut.npz: not a graph file" in one_error_line(capsys, ["pagerank", str(cut), "--backend", "cpu"])
    objects = tmp_path / "obj.npz"
    np.savez(objects, **arrays(g), **{DIGEST_KEY: np.asarray(g.sha256)}, junk=np.array([{}], dtype=object))
    assert "obj.npz: not a graph file" in one_error_line(capsys, ["pagerank", str(objects), "--backend", "cpu"])
    missing = tmp_path / "missing.npz"
    np.savez(missing, offsets=g.offsets)
    assert "lacks targets" in one_error_line(capsys, ["pagerank", str(missing), "--backend", "cpu"])


# --------------------------------------------------------------------------- case 2: batch ids


@pytest.mark.parametrize("ids", [np.array([2**32 + 3], dtype=np.int64), np.array([2**63 + 5], dtype=np.uint64),
                                 np.array([-1], dtype=np.int64)])
def test_batch_ids_are_checked_before_the_int32_cast(ids):
    with pytest.raises(BatchError, match=f"vertex id {int(ids[0])} is outside"):
        Batch(ids, np.zeros(1, np.int64), [], [])


def test_batch_file_with_wide_ids_is_refused(tmp_path, capsys):
    g = small_graph()
    path = tmp_path / "b.npz"
    write_batches(path, [Batch([], [], [1], [2])], made_for=g)
    with np.load(path) as data:
        stored = dict(data)
    stored["ins_src"] = np.array([2**32 + 3], dtype=np.int64)  # wraps to 3 in int32
    np.savez(path, **stored)
    with pytest.raises(BatchError, match=rf"b.npz: ins_src: vertex id {2**32 + 3} is outside"):
        read_batches(path)
    graph_file = tmp_path / "g.npz"
    g.save(graph_file)
    assert "4294967299" in one_error_line(capsys, ["pagerank", str(graph_file), "--batch", str(path),
                                                   "--backend", "cpu"])


def test_pagerank_checks_batch_ids_before_any_engine(monkeypatch):
    g = small_graph()
    monkeypatch.setattr(pr, "_engine", lambda backend: pytest.fail("an engine got unchecked input"))
    ranks = np.full(g.num_vertices, 1 / g.num_vertices)
    for approach in ("dt", "df", "dfp"):
        with pytest.raises(InputError, match="ins_dst: vertex id 30 is outside 0..29"):
            pr.update(approach, g, g, Batch([], [], [0], [30]), ranks, backend="gpu")
    with pytest.raises(InputError, match=r"previous_ranks must have shape \(30,\)"):
        pr.update("nd", g, g, Batch.empty(), ranks[:-1], backend="gpu")
    with pytest.raises(InputError, match="finite"):
        pr.update("nd", g, g, Batch.empty(), np.full(g.num_vertices, np.nan), backend="gpu")
    with pytest.raises(InputError, match="must be a dynpr.graph.graph.Graph"):
        pr.static("not a graph", backend="gpu")


# --------------------------------------------------------------------------- case 3: batch file of another graph


def test_batch_file_made_for_another_graph_is_refused(tmp_path, capsys):
    a = Graph.from_edges([0, 1, 2, 3], [1, 2, 3, 0], 6)
    b = Graph.from_edges([0, 2, 4], [5, 1, 3], 6)  # same vertex count; the insertion fits both
    batch_file, graph_file = tmp_path / "b.npz", tmp_path / "other.npz"
    write_batches(batch_file, [Batch([], [], [5], [4])], made_for=a, experiment="random")
    b.save(graph_file)
    line = one_error_line(capsys, ["pagerank", str(graph_file), "--batch", str(batch_file), "--backend", "cpu"])
    assert f"{batch_file}: made for a graph of 6 vertices and 10 edges" in line and "make the batches" in line
    a.save(graph_file)
    assert main(["pagerank", str(graph_file), "--batch", str(batch_file), "--backend", "cpu"]) == 0


# --------------------------------------------------------------------------- case 5: a wrong file from a mirror


def _snap_gz(path, n, m, seed=0):
    rng = np.random.default_rng(seed)
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    keep = src != dst
    lines = "".join(f"{u} {v} {t}\n" for t, (u, v) in enumerate(zip(src[keep], dst[keep])))
    path.write_bytes(gzip.compress(lines.encode(), mtime=0))


@pytest.fixture
def tiny_catalog(tmp_path, monkeypatch):
    """A catalog in a fresh folder with one downloadable temporal dataset whose counts come from good.txt.gz."""
    from dynpr.io.readers import read_edges
    from dynpr.io.prepare import build_graph

    mirror = tmp_path / "mirror"
    mirror.mkdir()
    good = tmp_path / "good.txt.gz"
    _snap_gz(good, 80, 400)
    _, _, _, stats = build_graph(read_edges(good, "snap-temporal"))
    (tmp_path / "datasets").mkdir()
    (tmp_path / "datasets" / "catalog.yaml").write_text(textwrap.dedent(f"""\
        datasets:
          toy-temporal:
            kind: temporal
            format: snap-temporal
            url: https://example.org/data/toy.txt.gz
            vertices: {stats['vertices']}
            edges: {stats['edges']}
            temporal_edges: {stats['temporal_edges']}
        """))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DYNPR_MIRROR", str(mirror))
    return tmp_path, mirror, good


def test_wrong_file_from_a_mirror_is_refused_and_not_kept(tiny_catalog, capsys):
    root, mirror, good = tiny_catalog
    _snap_gz(mirror / "toy.txt.gz", 50, 300, seed=5)  # a different graph under the right name
    line = one_error_line(capsys, ["pagerank", "toy-temporal", "--backend", "cpu"])
    assert "toy-temporal: prepared vertices = 50" in line and "catalog publishes" in line
    assert not (root / "datasets" / "raw" / "toy.txt.gz").exists()
    assert not (root / "datasets" / "catalog.lock.yaml").exists()


def test_first_verified_download_is_locked_and_enforced(tiny_catalog, capsys):
    import yaml

    from dynpr.graph.atomic_files import sha256_file

    root, mirror, good = tiny_catalog
    (mirror / "toy.txt.gz").write_bytes(good.read_bytes())
    assert main(["pagerank", "toy-temporal", "--backend", "cpu"]) == 0
    lock = yaml.safe_load((root / "datasets" / "catalog.lock.yaml").read_text())
    assert lock["files"]["toy.txt.gz"] == {"sha256": sha256_file(good), "size": good.stat().st_size}
    # the locked checksum now travels with the catalog: another file fails at download time
    (root / "datasets" / "raw" / "toy.txt.gz").unlink()
    capsys.readouterr()
    _snap_gz(mirror / "toy.txt.gz", 80, 400, seed=8)
    line = one_error_line(capsys, ["pagerank", "toy-temporal", "--backend", "cpu"], code=1)
    assert "differs from the recorded" in line and "catalog.lock.yaml" in line


# --------------------------------------------------------------------------- case 8 and flags


@pytest.mark.parametrize("argv,text", [
    (["--tolerance", "inf"], "--tolerance: must be a finite number in [0, inf), got inf"),
    (["--tolerance", "nan"], "--tolerance: must be a finite number"),
    (["--prune-tolerance", "-1e-6"], "--prune-tolerance: must be a finite number in [0, inf), got -1e-6"),
    (["--alpha", "1"], "--alpha: must be a finite number in (0, 1)"),
    (["--max-iterations", "2.5"], "--max-iterations: expected an integer"),
])
def test_bad_pagerank_flags(tmp_path, capsys, argv, text):
    graph_file = tmp_path / "g.txt"
    graph_file.write_text("0 1\n1 2\n")
    assert text in one_error_line(capsys, ["pagerank", str(graph_file), *argv])


def test_options_refuse_infinite_tolerances():
    with pytest.raises(InputError, match="tolerance: must be a finite number"):
        pr.PageRankOptions(tolerance=float("inf"))
    with pytest.raises(InputError, match="max_iterations"):
        pr.PageRankOptions(max_iterations=2.5)


@pytest.mark.parametrize("argv,text", [
    (["--fraction", "inf"], "--fraction: must be a finite number in (0, 1]"),
    (["--fraction", "0.1", "--insert-share", "1.5"], "--insert-share: must be a finite number in [0, 1]"),
])
def test_bad_batch_flags(tmp_path, capsys, argv, text):
    graph_file = tmp_path / "g.txt"
    graph_file.write_text("0 1\n1 2\n")
    assert text in one_error_line(capsys, ["batch", str(graph_file), *argv, "--out", str(tmp_path / "b.npz")])


def test_out_is_a_folder(tmp_path, capsys):
    graph_file = tmp_path / "g.txt"
    graph_file.write_text("0 1\n1 2\n")
    line = one_error_line(capsys, ["batch", str(graph_file), "--fraction", "0.5", "--out", str(tmp_path)])
    assert f"--out {tmp_path}: is a folder" in line
    line = one_error_line(capsys, ["pagerank", str(graph_file), "--backend", "cpu", "--ranks-out", str(tmp_path)])
    assert f"{tmp_path}: is a folder" in line


def test_unwritable_output_names_the_output_not_the_temporary(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(ResourceError, match=f"{blocker}/sub/out.csv: cannot create its folder"):
        with atomic_path(blocker / "sub" / "out.csv") as tmp:
            tmp.write_text("never")


def test_non_breaking_space_is_named(tmp_path, capsys):
    path = tmp_path / "nbsp.txt"
    path.write_text("0 1 5\n1\u00a02 6\n")
    line = one_error_line(capsys, ["pagerank", str(path), "--backend", "cpu"])
    assert "line 2: unexpected character '\\xa0' (U+00A0) at column 2" in line


def _subclasses(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)


@pytest.mark.parametrize("error", sorted(set(_subclasses(DynprError)), key=lambda c: c.__name__),
                         ids=lambda c: c.__name__)
def test_every_dynpr_error_is_one_cli_line_with_its_exit_code(error, monkeypatch, capsys):
    # the environment's errors (and a run that hit max_iterations) exit 1, bad input 2
    from dynpr import cli
    from dynpr.errors import ConvergenceError

    environment = issubclass(error, (ResourceError, ConvergenceError))
    assert issubclass(error, RuntimeError if environment else ValueError)
    instance = error("boom", None) if issubclass(error, ConvergenceError) else error("boom")

    def fail(args):
        raise instance

    monkeypatch.setattr(cli, "_run_kahn", fail)
    line = one_error_line(capsys, ["kahn", "whatever.txt"], code=1 if environment else EXIT_INPUT)
    assert line == "dynpr: error: boom"


# --------------------------------------------------------------------------- signals and leftovers


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_sigterm_removes_the_temporary_file(tmp_path):
    out = tmp_path / "out.csv"
    script = textwrap.dedent(f"""
        import os, signal, time
        from dynpr.graph.atomic_files import atomic_path, exit_on_sigterm
        exit_on_sigterm()
        with atomic_path({str(out)!r}) as tmp:
            tmp.write_text("half")
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(10)
    """)
    proc = subprocess.run([sys.executable, "-c", script], timeout=30)
    assert proc.returncode == 128 + signal.SIGTERM
    assert list(tmp_path.iterdir()) == []


def test_leftovers_of_a_killed_run_are_swept(tmp_path):
    dead = _dead_pid()
    stale = tmp_path / f".out.csv.{dead}.tmp"
    stale.write_text("half")
    mine = tmp_path / f".out.csv.{os.getpid()}.tmp"  # a live process's file stays
    live = tmp_path / f".out.csv.{os.getppid()}.tmp"
    live.write_text("busy")
    with atomic_path(tmp_path / "out.csv") as tmp:
        assert tmp == mine
        tmp.write_text("done")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["out.csv", live.name])
    folder = tmp_path / f".out.csv.{dead}.d"  # nothing writes folders under a temporary name: left alone
    folder.mkdir()
    assert sweep_stale(tmp_path, ".out.csv") == [] and folder.is_dir()


def test_the_sweep_leaves_a_users_files_that_merely_start_alike(tmp_path):
    """Re-audit BAD case: ``--ranks-out r.csv`` deleted a user's ``.r.csv.20261128.bak``."""
    dead = _dead_pid()
    users = [f".r.csv.{dead}.bak", f".r.csv.{dead}", f".r.csv.{dead}.tmp.old", ".r.csv.20261128.bak",
             f".r.csv.{10**30}.tmp"]
    for name in users:
        (tmp_path / name).write_text("keep me")
    ours = tmp_path / f".r.csv.{dead}.tmp"
    ours.write_text("half")
    assert sweep_stale(tmp_path, ".r.csv") == [ours]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(users)


# --------------------------------------------------------------------------- config values the schema lets through


@pytest.mark.parametrize("section,key,value,text", [
    ("temporal", "num_batches", 2.0, "config: temporal.num_batches: must be an integer, got 2.0"),
    (None, "repeat", 1.0, "config: repeat: must be an integer, got 1.0"),
    ("random", "batch_fractions", [float("nan")], "config: random.batch_fractions[0]: must be a finite number, got nan"),
    ("pagerank", "reference_tolerance", float("inf"), "config: pagerank.reference_tolerance: must be a finite number"),
])
def test_config_values_the_schema_lets_through(section, key, value, text, repo_root):
    import jsonschema
    import yaml

    from dynpr.graph.validate import check_config_values

    schema = yaml.safe_load((repo_root / "workflow/schemas/config.schema.yaml").read_text())
    config = yaml.safe_load((repo_root / "config.yaml").read_text())
    check_config_values(config, schema)  # the shipped config passes
    (config[section] if section else config)[key] = value
    jsonschema.validate(config, schema)  # ... and so does the bad value, by the schema alone
    with pytest.raises(InputError, match=re.escape(text)):
        check_config_values(config, schema)


def test_graph_checks_agree_across_chunks(monkeypatch):
    """The checks run on chunks of whole rows; tiny chunks must find the same faults."""
    monkeypatch.setattr("dynpr.graph.csr_checks._CHUNK", 7)
    g = small_graph(50, 300, seed=4)
    assert check_graph(g, "g").num_edges == g.num_edges
    sources = g.sources.copy()
    sources[[0, -1]] = sources[[-1, 0]]  # same multiset of ids, other edges
    with pytest.raises(GraphError):
        check_graph(Graph(g.offsets, g.targets, g.in_offsets, sources), "g")
    wide = Graph(*(np.asarray(a, dtype=np.uint64) for a in (g.offsets, g.targets, g.in_offsets, g.sources)))
    assert check_graph(wide, "g").targets.dtype == np.int32  # any integer dtype, checked exactly, then narrowed
    missing_loop = Graph.from_edges([0, 1], [1, 0], 3, self_loops=False)
    with pytest.raises(GraphError, match="vertex 0 has no self-loop"):
        check_graph(missing_loop, "g")
    no_edges = np.zeros(4, dtype=np.int64), np.zeros(0, dtype=np.int32)  # three vertices, rows all empty
    with pytest.raises(GraphError, match="vertex 0 has no self-loop"):
        check_graph(Graph(*no_edges, *no_edges), "g")


def test_read_only_output_is_exit_1_naming_the_output(tmp_path, capsys, monkeypatch):
    graph_file = tmp_path / "g.txt"
    graph_file.write_text("0 1\n1 2\n")
    out = tmp_path / "b.npz"

    def read_only(src, dst):
        raise OSError(30, "Read-only file system", str(src))

    monkeypatch.setattr("dynpr.graph.atomic_files.os.replace", read_only)
    line = one_error_line(capsys, ["batch", str(graph_file), "--fraction", "0.5", "--out", str(out)], code=1)
    assert line == f"dynpr: error: {out}: cannot write (Read-only file system)"
    assert list(tmp_path.iterdir()) == [graph_file]  # the temporary file is gone too


def test_reference_tolerance_is_named():
    with pytest.raises(InputError, match="reference tolerance: must be a finite number"):
        pr.reference(small_graph(), tolerance=float("nan"))


def test_wrong_kind_of_file_says_what_it_is(tmp_path, capsys):
    g = small_graph()
    batch_file = tmp_path / "b.npz"
    write_batches(batch_file, [Batch.empty()], made_for=g)
    assert "b.npz: is a batch file, not a graph; give it with --batch" in one_error_line(
        capsys, ["pagerank", str(batch_file), "--backend", "cpu"])
    text = tmp_path / "g.txt"
    text.write_text("0 1\n")
    assert "g.txt: not a batch file: not an .npz (zip) file" in one_error_line(
        capsys, ["pagerank", str(text), "--batch", str(text), "--backend", "cpu"])
    binary = tmp_path / "junk.txt"
    binary.write_bytes(bytes(range(256)))
    assert "junk.txt: line 1: binary data, not a text edge list" in one_error_line(
        capsys, ["pagerank", str(binary), "--backend", "cpu"])


def test_prepare_rule_locks_a_verified_download(tiny_catalog, tmp_path):
    import yaml

    from dynpr.io.catalog import get_dataset
    from dynpr.errors import CountMismatchError
    from dynpr.io.prepare import prepare

    root, mirror, good = tiny_catalog
    raw = root / "datasets" / "raw"
    raw.mkdir(parents=True)
    _snap_gz(raw / "toy.txt.gz", 50, 300, seed=5)
    with pytest.raises(CountMismatchError):
        prepare(get_dataset("toy-temporal"), tmp_path / "g.npz", tmp_path / "g.json")
    assert not (root / "datasets" / "catalog.lock.yaml").exists()  # a wrong file is never locked
    (raw / "toy.txt.gz").write_bytes(good.read_bytes())
    prepare(get_dataset("toy-temporal"), tmp_path / "g.npz", tmp_path / "g.json")
    locked = yaml.safe_load((root / "datasets" / "catalog.lock.yaml").read_text())["files"]["toy.txt.gz"]
    assert get_dataset("toy-temporal").sha256 == locked["sha256"]  # the catalog now carries it
    assert get_dataset("toy-temporal").size == good.stat().st_size


def test_run_experiment_refuses_a_batch_file_of_another_graph(tmp_path, capsys, repo_root, monkeypatch):
    """The pipeline's case 3: a stale random-batch file that fits the graph is refused, no runs file written."""
    import runpy
    from types import SimpleNamespace

    monkeypatch.setattr("dynpr.io.prepare.check_prepared_file", lambda *args: None)  # toy is in no catalog

    graph, other = small_graph(seed=1), small_graph(seed=2)  # same vertex count
    graph.save(tmp_path / "graph.npz")
    batch_file = tmp_path / "random_0.01.npz"
    write_batches(batch_file, [Batch([], [], [0], [1])], made_for=other, experiment="random")
    out, log = tmp_path / "runs.csv", tmp_path / "run.log"
    snakemake = SimpleNamespace(
        rule="run_experiment", log=[str(log)], output=[str(out)], resources={},
        input=SimpleNamespace(graph=str(tmp_path / "graph.npz"), batches=[str(batch_file)]),
        wildcards=SimpleNamespace(dataset="toy"),
        params=SimpleNamespace(experiment="random", fractions=[0.01], approaches=["static", "df"], backend="cpu",
                               pagerank={}, repeat=1),
    )
    script = repo_root / "workflow" / "scripts" / "run_experiment.py"
    with pytest.raises(SystemExit):
        runpy.run_path(str(script), init_globals={"snakemake": snakemake})
    line = capsys.readouterr().err.strip()
    assert line.startswith("dynpr: run_experiment for toy: BatchError:") and "random_0.01.npz: made for a graph" in line
    assert not out.exists()


@pytest.mark.parametrize("text,where", [
    ("repeat: 3\npagerank: {}\nrepeat: 5\n", "line 3, column 1: key 'repeat' given twice (first on line 1)"),
    ("random:\n  batch_fractions: [0.001]\n  batch_fractions: [0.01]\n",
     "line 3, column 3: key 'batch_fractions' given twice (first on line 2)"),
])
def test_a_key_given_twice_in_a_yaml_file_is_refused_naming_key_and_lines(tmp_path, repo_root, text, where):
    """Re-audit WEAK case: a second ``repeat:`` silently overrode the first."""
    from dynpr.graph.validate import load_yaml

    assert load_yaml(repo_root / "config.yaml", "config")["repeat"]  # the shipped config has none
    path = tmp_path / "config.yaml"
    path.write_text(text)
    with pytest.raises(InputError, match=re.escape(f"{path}: config is not valid YAML: {where}")):
        load_yaml(path, "config")
