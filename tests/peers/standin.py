#!/usr/bin/env python3
"""A stand-in for the peer programs, standard library only: Gunrock's `pr` (`-m GRAPH.mtx -n RUNS
[--export_metrics -d DIR -f FILE]`) or, given the graph alone, HornetsNest's PageRank test.

It reads the Matrix Market file, runs the push PageRank those programs run (alpha 0.85; Gunrock:
tolerance 1e-6 on the L-inf change, Hornet: 1e-3 on the summed change, at most 50 iterations) and
prints what they print, so the pipeline's parsing and bookkeeping are tested without a GPU. As
Gunrock's option parser, it aborts on a flag it does not know; started under a name ending in
`-metrics` it writes what Gunrock built with metrics collection writes: each run's iterations too.
"""

import json
import os
import sys
import time

GUNROCK_OPTIONS = {"-m", "--market", "-n", "--num_runs", "-d", "--json_dir", "-f", "--json_file"}


def read_mtx(path):
    with open(path) as fh:
        lines = (line for line in fh if not line.startswith("%"))
        rows, _, _ = map(int, next(lines).split())
        edges = [tuple(int(x) - 1 for x in line.split()[:2]) for line in lines if line.strip()]
    return rows, edges


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
