"""Benchmark the CPU PageRank engine and Kahn on one graph (default web-NotreDame).

Runs Static (tau = 1e-10) against a plain SciPy power iteration, the reference
(tau = 1e-100, 500 iterations), every approach on random batches (80% insertions,
20% deletions, from the base graph's Static ranks), and Kahn on the graph without
its self-loops. Writes one row per run to ``results/bench/pagerank_cpu.csv``.

Usage: ``python benchmarks/bench_pagerank_cpu.py [--graph web-NotreDame] [--fractions 1e-4] [--repeat 3]``
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp

from dynpr import pagerank as pr
from dynpr.backend import device_name
from dynpr.batches import apply_batch, batch_rng, random_batch
from dynpr.graph.atomic_files import write_csv_atomic
from dynpr.graph.graph import Graph
from dynpr.kahn import kahn
from dynpr.io.prepare import read_graph
from dynpr.evaluation.results import git_commit

ROOT = Path(__file__).resolve().parents[1]  # benchmarks run in a checkout: results/ and its commit


def scipy_power_iteration(graph: Graph, alpha=0.85, tol=1e-10, max_iter=500):
    """A plain SciPy power iteration with the same stopping rule, as the baseline."""
    n = graph.num_vertices
    t = time.perf_counter()
    inv = 1.0 / graph.out_degree
    a = sp.csr_array((inv[graph.sources], graph.sources, graph.in_offsets), shape=(n, n))
    r = np.full(n, 1.0 / n)
    for it in range(1, max_iter + 1):
        new = (1 - alpha) / n + alpha * (a @ r)
        delta = np.abs(new - r).max()
        r = new
        if delta <= tol:
            break
    return r, it, (time.perf_counter() - t) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graph", default="web-NotreDame")
    parser.add_argument("--fractions", type=float, nargs="+", default=[1e-4])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--out", default=str(ROOT / "results" / "bench" / "pagerank_cpu.csv"))
    args = parser.parse_args()

    graph, _ = read_graph(args.graph, results=ROOT / "results" / "graphs")
    common = {"dataset": args.graph, "vertices": graph.num_vertices, "edges": graph.num_edges,
              "device": device_name("cpu"), "git_commit": git_commit(ROOT)}
    rows = []

    def record(approach, fraction, repeat, result=None, wall_ms=None, error=None, **extra):
        row = {**common, "approach": approach, "batch_fraction": fraction, "repeat": repeat, "l1_error": error,
               "wall_ms": wall_ms, **extra}
        if result is not None:
            row.update(iterations=result.iterations, time_ms=result.time_ms, affected=result.affected,
                       mark_ms=result.phases["mark_ms"], compute_ms=result.phases["compute_ms"])
        rows.append(row)
        print({k: v for k, v in row.items() if k not in common})

    t = time.perf_counter()
    ref = pr.reference(graph)
    record("reference", 0.0, 0, wall_ms=(time.perf_counter() - t) * 1e3)
    for k in range(args.repeat):
        ranks, iterations, ms = scipy_power_iteration(graph)
        record("scipy_power", 0.0, k, error=pr.l1_error(ranks, ref), time_ms=ms, iterations=iterations)
    base = None
    for k in range(args.repeat):
        t = time.perf_counter()
        result = pr.static(graph)
        record("static", 0.0, k, result, (time.perf_counter() - t) * 1e3, pr.l1_error(result.ranks, ref))
        base = result.ranks

    for fraction in args.fractions:
        batch = random_batch(graph, fraction, 0.8, batch_rng(args.seed, args.graph, fraction, 0))
        updated = apply_batch(graph, batch)
        new_ref = pr.reference(updated)
        for approach in pr.APPROACHES:
            for k in range(args.repeat):
                t = time.perf_counter()
                result = pr.update(approach, graph, updated, batch, base)
                record(approach, fraction, k, result, (time.perf_counter() - t) * 1e3,
                       pr.l1_error(result.ranks, new_ref), deletions=batch.deletions, insertions=batch.insertions)

    plain = graph.without_self_loops()
    for k in range(args.repeat):
        result = kahn(plain)
        record("kahn", 0.0, k, time_ms=result.time_ms, is_dag=result.is_dag, processed=result.processed,
               levels=result.levels)

    out = Path(args.out)
    write_csv_atomic(pd.DataFrame(rows), out)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
