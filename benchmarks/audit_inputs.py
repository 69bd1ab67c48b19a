"""Audit dynpr's input handling as an attacker and a careless user would (issue 33).

Every case builds its own input in a scratch folder, runs one command (the ``dynpr``
CLI, a Python API snippet, or ``snakemake -n``) under a memory cap and a time limit,
and is judged by what came back:

* GOOD: accepted as expected, or refused in one ``dynpr: error:`` line naming the file,
  line, flag or value, with exit status 2 for bad input and 1 for the environment;
* WEAK: refused, but the line is vague (names none of what it should), the exit
  status is the other one, or the error is not one of dynpr's classes (API); or the
  behaviour is another tool's, before any dynpr code runs (marked "upstream");
* BAD: a traceback, a valid input refused, a bad input accepted, a wrong result, a
  hang past the limit, a crash, a file other than the output changed, or a temporary
  file left behind.

The inputs are built by benchmarks/audit_cases.py (the files) and :func:`use_cases` here
(flags, paths, outputs, the API, Snakemake).

Usage: ``python benchmarks/audit_inputs.py --out docs/measurements/audit/audit.csv``
(a few minutes on 2 cores; ``--only SUBSTRING`` runs the matching cases). Not part of
the test suite: the regression tests of the cases it found live in tests/.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import textwrap
import time
from pathlib import Path

from audit_cases import (CASES, REPO, Base, Case, build_base, case, edge_text, file_cases, vertices_are,
                         write)

MEMORY_CAP = 6 << 30
TIME_LIMIT_S = 60


# --------------------------------------------------------------------------- cases of use


def use_cases(b: Base, workflow_rev: str) -> None:
    """Flags, paths, outputs over inputs, the Python API, and snakemake -n with bad configs and lock files."""
    work, dynpr, edges, base, distinct = b.work, b.dynpr, b.edges, b.text, b.distinct
    prepared, batch_file, pagerank = b.prepared, b.batch_file, b.pagerank

    # ---- CLI flags
    for flag, value in (("--alpha", "0"), ("--alpha", "1"), ("--alpha", "1.5"), ("--alpha", "nan"), ("--alpha", "-1"),
                        ("--alpha", "abc"), ("--tolerance", "nan"), ("--tolerance", "inf"), ("--tolerance", "-1"),
                        ("--tolerance", "0x10"), ("--max-iterations", "0"), ("--max-iterations", "-1"),
                        ("--max-iterations", "1.5"), ("--max-iterations", "1e3"), ("--repeat", "0"),
                        ("--repeat", "99999999999999999999"), ("--approach", "foo"), ("--approach", "static,,dfp"),
                        ("--approach", ""), ("--backend", "tpu"), ("--frontier-tolerance", "nan"),
                        ("--prune-tolerance", "-1e-6"), ("--top", "0"), ("--top", "-1")):
        pagerank(prepared, flag, value, expect="input", names=(flag, value or "approach"),
                 name=f"flag/{flag}={value}")
    pagerank(prepared, "--top", "5", expect="input", names=("--top", "--ranks-out"), name="flag/top-without-ranks-out")
    pagerank(prepared, "--max-iterations", "1", "--fail-unconverged", expect="resource", names=("max",),
             name="flag/fail-unconverged")
    pagerank(prepared, "--approach", "dfp", expect="any", name="flag/dfp-without-batch")
    pagerank(prepared, "--max-iterations", "99999999999999999999", "--tolerance", "1e-300", expect="any",
             name="flag/max-iterations-huge-tolerance-tiny")
    case("batch-flag/seed-huge", [*dynpr, "batch", prepared, "--fraction", "0.01", "--seed", "9" * 40, "--out",
                                  work / "base" / "seed-huge.npz"], "any", ("--seed",),
         outputs=(str(work / "base" / "seed-huge.npz"),))
    case("flag/backend-gpu-without-gpu", [*dynpr, "pagerank", prepared, "--backend", "gpu"], "resource", ("GPU", "gpu"))
    case("flag/kahn-backend-gpu", [*dynpr, "kahn", prepared, "--backend", "gpu"], "resource", ("GPU", "gpu"))
    for flag, value in (("--fraction", "0"), ("--fraction", "1.5"), ("--fraction", "nan"), ("--fraction", "-1e-4"),
                        ("--count", "0"), ("--count", "-2"), ("--insert-share", "1.1"), ("--insert-share", "-0.1"),
                        ("--seed", "-1"), ("--seed", "1.5"), ("--count", "1e9"), ("--count", "100000000")):
        case(f"batch-flag/{flag}={value}", [*dynpr, "batch", prepared, "--fraction", "0.01", flag, value, "--out",
                                            work / "base" / f"never{flag}{value}.npz"], "input", (flag,))
    case("batch-flag/no-out", [*dynpr, "batch", prepared, "--fraction", "0.01"], "input", ("--out",))
    case("cli/no-arguments", dynpr, "usage")
    case("cli/help", [*dynpr, "--help"], "ok")
    case("cli/version", [*dynpr, "--version"], "ok")
    for sub in ("pagerank", "batch", "kahn"):
        case(f"cli/{sub}-help", [*dynpr, sub, "--help"], "ok", check=lambda p: None if "usage" in p.stdout and
             len(p.stdout.split("\n\n")) > 2 else "no description")
    case("cli/unknown-subcommand", [*dynpr, "prepare", base], "input", ("prepare",))
    case("cli/missing-file", [*dynpr, "pagerank", work / "nowhere.txt"], "input", ("nowhere.txt",))
    case("cli/directory-as-graph", [*dynpr, "pagerank", work / "base"], "input", ("base",))
    case("cli/catalog-typo", [*dynpr, "pagerank", "CollegeMgs"], "input", ("CollegeMsg",), cwd=REPO)
    case("cli/catalog-name-lowercase", [*dynpr, "pagerank", "collegemsg"], "input", ("CollegeMsg",), cwd=REPO)
    case("cli/kahn-ok", [*dynpr, "kahn", base, "--backend", "cpu"], "ok")
    case("cli/kahn-bad-file", [*dynpr, "kahn", work / "snap-bad-float-id-txt" / "e.txt"], "input", ("line 2",))
    case("cli/batch-ok", [*dynpr, "batch", base, "--fraction", "0.01", "--out", work / "base" / "new-b.npz"], "ok",
         outputs=(str(work / "base" / "new-b.npz"),))
    spaced = write(work / "path with spaces" / "my graph.txt", edge_text(edges))
    pagerank(spaced, "--ranks-out", work / "path with spaces" / "my ranks.csv", name="path/spaces", check=vertices_are(
        distinct), outputs=(str(work / "path with spaces" / "my ranks.csv"),))
    unicode_dir = write(work / "ünïcødé ☃" / "g.txt", edge_text(edges))
    pagerank(unicode_dir, name="path/unicode", check=vertices_are(distinct))
    (work / "links").mkdir()
    os.symlink(base, work / "links" / "link.txt")
    pagerank(work / "links" / "link.txt", name="path/symlink-to-graph", check=vertices_are(distinct))
    os.symlink(work / "links" / "nowhere.txt", work / "links" / "dangling.txt")
    pagerank(work / "links" / "dangling.txt", expect="input", names=("dangling.txt",), name="path/dangling-symlink")
    os.symlink(work / "links" / "loop-b.txt", work / "links" / "loop-a.txt")
    os.symlink(work / "links" / "loop-a.txt", work / "links" / "loop-b.txt")
    pagerank(work / "links" / "loop-a.txt", expect="input", names=("loop-a.txt",), name="path/symlink-loop")
    pagerank("/dev/null", expect="input", names=("/dev/null",), name="path/dev-null")
    fifo = work / "links" / "fifo.txt"
    os.mkfifo(fifo)
    pagerank(fifo, expect="refuse", names=("fifo.txt",), name="path/fifo")

    # ---- outputs
    def out_case(key, graph_path, flags, expect, names, outputs=()):
        pagerank(graph_path, *flags, expect=expect, names=names, outputs=outputs, name=f"out/{key}")

    folder = work / "out"
    folder.mkdir()
    g_txt, g_npz, b_npz = (shutil.copy(p, folder / p.name) for p in (base, prepared, batch_file))
    g_csv = shutil.copy(base, folder / "g.csv")  # an edge list named .csv: a ranks table's suffix too
    out_case("ranks-over-graph-txt", g_txt, ["--ranks-out", g_txt], "input", ("g.txt",))
    out_case("ranks-over-graph-csv", g_csv, ["--ranks-out", g_csv], "input", ("g.csv",))
    out_case("ranks-over-graph-npz", g_npz, ["--ranks-out", g_npz], "input", ("g.npz",))
    out_case("ranks-over-batch", g_npz, ["--batch", b_npz, "--ranks-out", b_npz], "input", ("b.npz",))
    out_case("ranks-over-graph-dotted", g_csv, ["--ranks-out", f"{folder}/./../out/g.csv"], "input", ("g.csv",))
    os.symlink(g_csv, folder / "alias.csv")
    out_case("ranks-over-symlink-to-graph", g_csv, ["--ranks-out", folder / "alias.csv"], "input", ("alias.csv",))
    os.link(g_csv, folder / "hard.csv")
    out_case("ranks-over-hardlink-to-graph", g_csv, ["--ranks-out", folder / "hard.csv"], "input", ("hard.csv",))
    out_case("ranks-over-graph-via-symlinked-graph", folder / "alias.csv", ["--ranks-out", g_csv], "input",
             ("g.csv",))
    case("out/batch-over-graph", [*dynpr, "batch", g_npz, "--fraction", "0.01", "--out", g_npz], "input", ("g.npz",))
    case("out/batch-over-graph-txt", [*dynpr, "batch", g_txt, "--fraction", "0.01", "--out", g_txt], "input", ("g.txt",))
    out_case("ranks-into-directory", g_txt, ["--ranks-out", folder], "input", ("out",))
    out_case("ranks-missing-folder", g_txt, ["--ranks-out", folder / "no" / "such" / "r.csv"], "ok", (),
             outputs=(str(folder / "no" / "such" / "r.csv"),))
    out_case("ranks-parent-is-file", g_txt, ["--ranks-out", folder / "g.txt" / "r.csv"], "refuse", ("r.csv",))
    out_case("ranks-in-proc", g_txt, ["--ranks-out", "/proc/r.csv"], "refuse", ("r.csv", "/proc"))
    out_case("ranks-unknown-suffix", g_txt, ["--ranks-out", folder / "r.xlsx"], "input", ("r.xlsx", ".xlsx"))
    out_case("ranks-no-suffix", g_txt, ["--ranks-out", folder / "ranks"], "input", ("ranks",))
    out_case("ranks-parquet", g_txt, ["--ranks-out", folder / "r.parquet"], "any", ("parquet", "pyarrow"),
             outputs=(str(folder / "r.parquet"),))
    write(folder / "existing.csv", "keep me?\n")
    out_case("ranks-over-existing-output", g_txt, ["--ranks-out", folder / "existing.csv"], "ok", (),
             outputs=(str(folder / "existing.csv"),))
    out_case("ranks-csv-gz", g_txt, ["--ranks-out", folder / "r.csv.gz", "--top", "3"], "ok", (),
             outputs=(str(folder / "r.csv.gz"),))
    case("out/batch-into-directory", [*dynpr, "batch", g_npz, "--fraction", "0.01", "--out", folder], "input", ("out",))
    case("out/batch-missing-folder", [*dynpr, "batch", g_npz, "--fraction", "0.01", "--out", folder / "x" / "b.npz"],
         "ok", outputs=(str(folder / "x" / "b.npz"),))
    case("out/batch-suffix-txt", [*dynpr, "batch", g_npz, "--fraction", "0.01", "--out", folder / "b.txt"], "any",
         ("b.txt",), outputs=(str(folder / "b.txt"),))

    # ---- Python API
    api = work / "api"
    api.mkdir()
    prelude = textwrap.dedent(f"""
        import sys, numpy as np
        from dynpr.errors import DynprError
        from dynpr.graph.graph import Graph
        from dynpr.batches import Batch
        from dynpr import pagerank as pr
        from dynpr.pagerank.dynamic import DynamicPageRank
        from dynpr.io.prepare import load_prepared
        g, _ = load_prepared({str(prepared)!r})
        n = g.num_vertices
        """)
    snippets = {
        "static-ok": ("r = pr.static(g); assert abs(r.ranks.sum() - 1) < 1e-6", "ok"),
        "static-graph-none": ("pr.static(None)", "input"),
        "static-bad-backend": ("pr.static(g, backend='tpu')", "input"),
        "static-options-nan": ("pr.static(g, pr.PageRankOptions(alpha=float('nan')))", "input"),
        "static-options-alpha-2": ("pr.static(g, pr.PageRankOptions(alpha=2.0))", "input"),
        "static-options-maxit-float": ("pr.static(g, pr.PageRankOptions(max_iterations=2.5))", "input"),
        "dfp-ranks-nan": ("b = Batch(*[np.zeros(0, np.int32)] * 4); r = np.full(n, np.nan); "
                          "pr.dynamic_frontier_pruned(g, g, b, r)", "input"),
        "dfp-ranks-short": ("b = Batch(*[np.zeros(0, np.int32)] * 4); pr.dynamic_frontier_pruned(g, g, b, np.ones(3))",
                            "input"),
        "dfp-batch-out-of-range": ("b = Batch(np.zeros(0,np.int32), np.zeros(0,np.int32), np.array([n+3],np.int32), "
                                   "np.array([0],np.int32)); pr.dynamic_frontier_pruned(g, g, b, np.full(n, 1/n))",
                                   "input"),
        "dynamic-ok": ("d = DynamicPageRank(g, backend='cpu'); from dynpr.batches import read_batches; "
                       f"d.update(read_batches({str(batch_file)!r})[0])", "ok"),
        "dynamic-none": ("DynamicPageRank(g, backend='cpu').update(None)", "input"),
        "dynamic-graph-none": ("DynamicPageRank(None, backend='cpu')", "input"),
        "dynamic-approach": ("DynamicPageRank(g, approach='pagerank', backend='cpu')", "input"),
        "dynamic-swap-graph": ("d = DynamicPageRank(g, backend='cpu'); d.graph = g", "input"),
        "dynamic-foreign-batch": ("d = DynamicPageRank(g, backend='cpu'); "
                                  "d.update(Batch(np.array([0],np.int32), np.array([n-1],np.int32), "
                                  "np.zeros(0,np.int32), np.zeros(0,np.int32)))", "input"),
        "dynamic-batch-tuple": ("DynamicPageRank(g, backend='cpu').update((1, 2))", "input"),
        "dynamic-batch-id-negative": ("DynamicPageRank(g, backend='cpu').update(Batch(np.zeros(0,np.int32), "
                                      "np.zeros(0,np.int32), np.array([-1],np.int32), np.array([0],np.int32)))", "input"),
        "from-edges-negative": ("Graph.from_edges(np.array([-1, 2]), np.array([1, 2]), 3)", "input"),
        "from-edges-float": ("Graph.from_edges(np.array([0.5, 2]), np.array([1, 2]), 3)", "input"),
        "from-edges-n-too-small": ("Graph.from_edges(np.array([0, 7]), np.array([1, 2]), 3)", "input"),
        "from-edges-lengths": ("Graph.from_edges(np.array([0, 1, 2]), np.array([1, 2]), 3)", "input"),
        "batch-lengths": ("Batch(np.array([0, 1], np.int32), np.array([1], np.int32), np.zeros(0, np.int32), "
                          "np.zeros(0, np.int32))", "input"),
        "random-batch-fraction-nan": ("from dynpr.batches import random_batch, batch_rng; "
                                      "random_batch(g, float('nan'), 0.8, batch_rng(1, 'g', 0.1, 0))", "input"),
        "random-batch-fraction-2": ("from dynpr.batches import random_batch, batch_rng; "
                                    "random_batch(g, 2.0, 0.8, batch_rng(1, 'g', 2.0, 0))", "input"),
        "read-edges-missing": ("from dynpr.io.readers import read_edges; read_edges('/nonexistent/e.txt')", "input"),
        "kahn-none": ("from dynpr.kahn import kahn; kahn(None)", "input"),
        "l1-error-shapes": ("pr.l1_error(np.ones(3), np.ones(4))", "input"),
    }
    wrapper = write(api / "run_snippet.py", textwrap.dedent("""
        import sys
        from dynpr.errors import DynprError
        code = open(sys.argv[1]).read()
        try:
            exec(compile(code, sys.argv[1], "exec"), {})
        except DynprError as err:
            print(f"dynpr: error: {err}", file=sys.stderr)
            sys.exit(err.exit_code)
        except Exception as err:
            print(f"not a dynpr error: {type(err).__name__}: {err}".replace("\\n", " | "), file=sys.stderr)
            sys.exit(3)
        """))
    for key, (code, expect) in snippets.items():
        script = write(api / f"{key}.py", prelude + code + "\n")
        case(f"api/{key}", [sys.executable, wrapper, script], expect)

    # ---- snakemake configs, catalog and lock file (a scratch copy of the workflow)
    flow = work / "workflow-copy"
    flow.mkdir()
    archive = subprocess.run(["git", "-C", REPO, "archive", workflow_rev, "Snakefile", "workflow", "config.yaml", "config",
                              "datasets"], check=True, capture_output=True).stdout
    tarfile.open(fileobj=io.BytesIO(archive)).extractall(flow, filter="data")
    snake = [shutil.which("snakemake") or "snakemake", "figures", "-n", "--cores", "1"]
    configs = {
        "unknown-key": ("colour: blue\n", ("colour",)),
        "wrong-type": ("seed: forty-two\n", ("seed",)),
        "nan": ("pagerank: {alpha: .nan}\n", ("alpha",)),
        "float-for-int": ("repeat: 2.0\n", ("repeat",)),
        "negative-fraction": ("random: {batch_fractions: [-1.0e-4]}\n", ("batch_fractions",)),
        "fraction-above-one": ("temporal: {batch_fractions: [1.5]}\n", ("batch_fractions",)),
        "base-fraction": ("temporal: {base_fraction: 1.5}\n", ("base_fraction",)),
        "max-iterations-zero": ("pagerank: {max_iterations: 0}\n", ("max_iterations",)),
        "unknown-dataset-typo": ("datasets: [CollegeMgs]\n", ("CollegeMgs",)),
        "unknown-approach": ("approaches: [static, pagerank]\n", ("approaches", "pagerank")),
        "backend-bogus": ("backend: tpu\n", ("backend", "tpu")),
        "not-yaml": ("datasets: [a, b\nseed: 1\n", ("bad.yaml", "line")),
        "tabs-yaml": ("seed:\t1\n\tfoo: 2\n", ("bad.yaml", "line")),
        "empty-datasets": ("datasets: []\n", ("datasets",)),
        "inf-tolerance": ("pagerank: {tolerance: .inf}\n", ("tolerance",)),
        "string-list": ("datasets: CollegeMsg\n", ("datasets",)),
        "bool-for-int": ("seed: true\n", ("seed",)),
        "huge-repeat": ("repeat: 100000000000000000000000\n", ("repeat",)),
    }
    # Snakemake reads --configfile files while parsing its arguments, before the Snakefile runs
    upstream = "Snakemake loads --configfile before the Snakefile (no dynpr code runs)"
    for key, (text, names) in configs.items():
        cfg = write(work / f"config-{key}" / "bad.yaml", text)
        case(f"snakemake/config-{key}", [*snake, "--configfile", cfg], "refuse", names, cwd=flow,
             upstream=upstream if key in ("not-yaml", "tabs-yaml") else "")
    case("snakemake/config-ok", [*snake], "ok", cwd=flow)
    empty_cfg = write(work / "config-empty" / "bad.yaml", "")
    case("snakemake/config-empty-file", [*snake, "--configfile", empty_cfg], "any", cwd=flow)
    missing_cfg = work / "config-missing" / "bad.yaml"
    case("snakemake/config-missing-file", [*snake, "--configfile", missing_cfg], "refuse", ("bad.yaml",), cwd=flow,
         upstream=upstream)
    for key, text, names in (("lock-not-yaml", "CollegeMsg.txt.gz: {sha256: [\n", ("catalog.lock.yaml",)),
                             ("lock-wrong-shape", "- just\n- a list\n", ("catalog.lock.yaml",)),
                             ("lock-bad-sha", "files:\n  CollegeMsg.txt.gz: {sha256: xyz, size: -4}\n",
                              ("catalog.lock.yaml",))):
        copy = work / f"flow-{key}"
        shutil.copytree(flow, copy, symlinks=True)
        write(copy / "datasets" / "catalog.lock.yaml", text)
        case(f"snakemake/{key}", [*snake], "refuse", names, cwd=copy)
        case(f"cli/{key}", [*dynpr, "pagerank", "CollegeMsg", "--backend", "cpu"], "refuse", names, cwd=copy)
    copy = work / "flow-catalog-not-yaml"
    shutil.copytree(flow, copy, symlinks=True)
    write(copy / "datasets" / "catalog.yaml", "datasets:\n  - [unclosed\n")
    case("snakemake/catalog-not-yaml", [*snake], "refuse", ("catalog.yaml",), cwd=copy)


# --------------------------------------------------------------------------- running and judging


def snapshot(folder: Path) -> dict[str, str]:
    digests = {}
    for path in folder.rglob("*"):
        if path.is_file() and not path.is_symlink() and ".snakemake" not in path.parts:
            digests[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest() if path.stat().st_size < (64 << 20) \
                else str(path.stat().st_size)
    return digests


def messages(c: Case, proc: subprocess.CompletedProcess) -> str:
    """What a case said about its input: stderr, and stdout too for Snakemake (which prints errors there)."""
    return proc.stderr + (proc.stdout if "snakemake" in c.name else "")


def first_line(c: Case, proc: subprocess.CompletedProcess) -> str:
    lines = [line for line in messages(c, proc).splitlines() if line.strip()]
    pointed = [line for line in lines if line.startswith("dynpr:") or "error" in line.lower()]
    return (pointed or lines or [""])[0]


def verdict(c: Case, proc: subprocess.CompletedProcess, elapsed: float, changed: list[str],
            leftovers: list[str]) -> tuple[str, str]:
    err = messages(c, proc)
    lines = [line for line in err.splitlines() if line.strip()]
    code = proc.returncode
    if code in (124, 137, -9) or elapsed >= TIME_LIMIT_S:
        return "BAD", f"hung or killed (exit {code}, {elapsed:.0f} s)"
    if "Traceback" in err or "MemoryError" in err or code < 0:
        return "BAD", "traceback or crash"
    if changed:
        return "BAD", f"changed {changed[:2]}"
    if leftovers:
        return "BAD", f"left {leftovers[:2]}"
    if c.expect == "usage":
        return ("GOOD", "usage") if "usage:" in proc.stdout + err and code in (0, 2) else ("BAD", "no usage")
    if code == 0:
        if c.expect in ("input", "resource", "refuse"):
            return "BAD", "accepted"
        problem = c.check(proc) if c.check else None
        return ("BAD", problem) if problem else ("GOOD", "accepted")
    if c.expect == "ok":
        return "BAD", "refused a valid input"
    if code not in (1, 2, 3):
        return "BAD", f"exit {code}"
    snakemake = "snakemake" in c.name
    named = not c.names or any(token.lower() in err.lower() for token in c.names)
    if code == 3:
        return "WEAK", "not a dynpr error class"
    if not snakemake and (len(lines) != 1 or not lines[0].startswith("dynpr: error: ")):
        return "WEAK", f"{len(lines)} stderr lines"
    if not named:
        return "WEAK", f"names none of {c.names}"
    wanted = {"input": 2, "resource": 1}.get(c.expect)
    if wanted is not None and code != wanted and not snakemake:
        return "WEAK", f"exit {code}, expected {wanted}"
    return "GOOD", "refused"


def run_case(c: Case, work: Path) -> dict:
    involved = {Path(p) for p in c.command if isinstance(p, str) and os.path.sep in p}
    folders = {p.parent for p in involved if p.parent != work and work in p.parents}
    before = {}
    for folder in folders | {work / "base"}:
        before |= snapshot(folder)
    command = ["prlimit", f"--as={MEMORY_CAP}", "timeout", "-s", "KILL", str(TIME_LIMIT_S), *c.command]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    start = time.perf_counter()
    proc = subprocess.run(command, capture_output=True, text=True, errors="replace", cwd=c.cwd or work, env=env)
    elapsed = time.perf_counter() - start
    after = {}
    for folder in folders | {work / "base"}:
        after |= snapshot(folder)
    changed = [p for p, digest in before.items() if after.get(p) != digest and p not in c.outputs]
    leftovers = [p for p in after if Path(p).name.endswith(".tmp") or Path(p).name.endswith(".part")]
    judged, why = verdict(c, proc, elapsed, changed, leftovers)
    if c.upstream and judged != "GOOD":
        judged, why = "WEAK", f"{why}; upstream: {c.upstream}"
    return {"case": c.name, "command": " ".join(str(x).replace(str(work), "$W") for x in c.command).replace(
                sys.executable, "python"),
            "exit_code": proc.returncode, "seconds": f"{elapsed:.1f}",
            "first_stderr_line": first_line(c, proc).replace(str(work), "$W")[:300],
            "verdict": judged, "why": why}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="CSV of the cases and their verdicts")
    parser.add_argument("--only", default="", help="run only the cases whose name contains one of these "
                        "comma-separated strings")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder")
    parser.add_argument("--workflow-rev", default="HEAD", help="git revision of the workflow the snakemake cases run "
                        "(with PYTHONPATH=<that revision's src> to audit an older tree)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="dynpr-audit-"))
    try:
        base = build_base(work)
        file_cases(base)
        use_cases(base, args.workflow_rev)
        rows = []
        selected = [c for c in CASES if any(part in c.name for part in args.only.split(","))]
        for number, c in enumerate(selected, start=1):
            row = run_case(c, work)
            rows.append(row)
            print(f"[{number}/{len(selected)}] {row['verdict']:4} {c.name}: {row['why']} | {row['first_stderr_line'][:150]}",
                  flush=True)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        with open(args.out, "w", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
        totals = {v: sum(r["verdict"] == v for r in rows) for v in ("GOOD", "WEAK", "BAD")}
        print(f"{len(rows)} cases: {totals}")
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
