#!/usr/bin/env python3
"""A stand-in for the peer programs, standard library only: Gunrock's `pr` (`-m GRAPH.mtx -n RUNS
[--export_metrics -d DIR -f FILE]`) or, given the graph alone, HornetsNest's PageRank test.

It reads the Matrix Market file, runs the push PageRank those programs run (alpha 0.85; Gunrock:
tolerance 1e-6 on the L-inf change, Hornet: 1e-3 on the summed change, at most 50 iterations) and
prints what they print, so the pipeline's parsing and bookkeeping are tested without a GPU. As
Gunrock's option parser, it aborts on a flag it does not know; as its Matrix Market reader
(include/gunrock/io/matrix_market.hxx), it takes only a `coordinate` banner of five words, reads a
value after both 1-based ids unless the field is `pattern` and aborts on an entry it cannot read;
started under a name ending in `-metrics` it writes what Gunrock built with metrics collection
writes: each run's iterations too. With DYNPR_STANDIN_HANG set it never stops, as Gunrock's `pr`
at 01f125c8 on contended graphs: it starts a child that sleeps, writes both process ids to
`standin.pid` in its working folder and sleeps.
"""

import json
import os
import subprocess
import sys
import time

GUNROCK_OPTIONS = {"-m", "--market", "-n", "--num_runs", "-d", "--json_dir", "-f", "--json_file"}


def fail(message):  # as Gunrock's error::throw_if_exception: an uncaught exception
    print(f"terminate called after throwing an instance of 'gunrock::error::exception_t'\n  what():  {message}",
          file=sys.stderr, flush=True)
    os.abort()


def read_mtx(path):
    with open(path) as fh:
        banner = fh.readline().lower().split()
        if len(banner) != 5 or banner[:3] != ["%%matrixmarket", "matrix", "coordinate"]:
            print("Could not process Matrix Market banner", file=sys.stderr)
            sys.exit(1)
        fields = {"pattern": 2, "real": 3, "integer": 3}.get(banner[3])
        if fields is None:
            print("Unrecognized matrix market format type", file=sys.stderr)
            sys.exit(1)
        lines = (line for line in fh if not line.startswith("%"))
        rows, _, count = map(int, next(lines).split())
        entries = [line.split() for line in lines if line.strip()]
    if len(entries) < count or any(len(entry) < fields for entry in entries):
        fail("Could not read weighted edge from market file" if fields == 3 else "Could not read edge from market file")
    edges = [(int(entry[0]) - 1, int(entry[1]) - 1) for entry in entries]
    if any(min(edge) < 0 for edge in edges):
        fail("Market file is zero-indexed")
    return rows, edges


def hang():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
    with open("standin.pid", "w") as fh:
        fh.write(f"{os.getpid()} {child.pid}\n")
    while True:
        time.sleep(1)


def pagerank(n, edges, tolerance, max_iterations, norm):
    degree = [0] * n
    for u, _ in edges:
        degree[u] += 1
    ranks = [1.0 / n] * n
    for iteration in range(max_iterations):
        new = [0.15 / n] * n
        for u, v in edges:
            new[v] += 0.85 * ranks[u] / degree[u]
        diffs = [abs(a - b) for a, b in zip(new, ranks)]
        ranks = new
        if norm(diffs) < tolerance:
            break
    return ranks, iteration + 1


def main(argv):
    if "-m" in argv:  # Gunrock's pr
        options, export, rest = {}, False, list(argv)
        while rest:
            flag = rest.pop(0)
            if flag == "--export_metrics":
                export = True
            elif flag in GUNROCK_OPTIONS and rest:
                options[flag.lstrip("-")[0]] = rest.pop(0)
            else:  # as cxxopts does: an uncaught exception
                print("terminate called after throwing an instance of 'cxxopts::option_not_exists_exception'\n"
                      f"  what():  Option \u2018{flag.lstrip('-')}\u2019 does not exist", file=sys.stderr, flush=True)
                os.abort()
        n, edges = read_mtx(options["m"])
        if os.environ.get("DYNPR_STANDIN_HANG"):
            hang()
        times, depths = [], []
        for _ in range(int(options.get("n", 1))):
            start = time.perf_counter()
            ranks, iterations = pagerank(n, edges, 1e-6, 1 << 30, max)
            times.append((time.perf_counter() - start) * 1e3)
            depths.append(iterations)
        if export:
            metrics = {"engine": "Essentials", "process_times": times, "git_commit_sha": "stand-in"}
            if sys.argv[0].endswith("-metrics"):
                metrics["search_depths"] = depths
            with open(f"{options.get('d', '.')}/{options.get('f', 'pr.json')}", "w") as fh:
                json.dump(metrics, fh)
        print("GPU rank[:40] = " + " ".join(f"{r:g}" for r in ranks[:40]) + " ")
        print(f"GPU Elapsed Time : {times[-1]:g} (ms)")
        return 0
    n, edges = read_mtx(argv[0])  # HornetsNest's PageRankTest
    print("Init is false\nInit is false\nRun is false")
    start = time.perf_counter()
    _, iterations = pagerank(n, edges, 1e-3, 50, sum)
    elapsed = (time.perf_counter() - start) * 1e3
    print("###" * iterations + f"\x1b[1;32m          PR---InputAsIS  {elapsed:.1f} ms\x1b[0m")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
