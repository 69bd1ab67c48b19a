#!/usr/bin/env python3
"""A stand-in for the peer programs, standard library only: Gunrock's `pr` (`-m GRAPH.mtx -n RUNS
[--collect_metrics -d DIR -f FILE]`) or, given the graph alone, HornetsNest's PageRank test.

It reads the Matrix Market file, runs the push PageRank those programs run (alpha 0.85; Gunrock:
tolerance 1e-6 on the L-inf change, Hornet: 1e-3 on the summed change, at most 50 iterations) and
prints what they print, so the pipeline's parsing and bookkeeping are tested without a GPU.
"""

import json
import sys
import time


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
    return ranks, iteration


def main(argv):
    if "-m" in argv:  # Gunrock's pr
        flags = [a for a in argv if a == "--collect_metrics"]
        options = {}
        rest = [a for a in argv if a not in flags]
        for key, value in zip(rest[::2], rest[1::2]):
            options[key] = value
        n, edges = read_mtx(options["-m"])
        times = []
        for _ in range(int(options.get("-n", 1))):
            start = time.perf_counter()
            ranks, depth = pagerank(n, edges, 1e-6, 1 << 30, max)
            times.append((time.perf_counter() - start) * 1e3)
        print("GPU rank[:40] = " + " ".join(f"{r:g}" for r in ranks[:40]) + " ")
        print(f"GPU Elapsed Time : {times[-1]:g} (ms)")
        if flags:
            with open(f"{options.get('-d', '.')}/{options.get('-f', 'pr.json')}", "w") as fh:
                json.dump({"engine": "Essentials", "process_times": times, "search_depth": depth,
                           "git_commit_sha": "stand-in"}, fh)
        return 0
    n, edges = read_mtx(argv[0])  # HornetsNest's PageRankTest
    print("Init is false\nInit is false\nRun is false")
    start = time.perf_counter()
    _, depth = pagerank(n, edges, 1e-3, 50, sum)
    elapsed = (time.perf_counter() - start) * 1e3
    print("###" * (depth + 1) + f"\x1b[1;32m          PR---InputAsIS  {elapsed:.1f} ms\x1b[0m")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
