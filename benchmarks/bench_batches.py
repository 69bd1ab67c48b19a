"""Benchmark: generate and apply one random batch of 0.1·|E| edges on a static graph.

Writes one row per repeat to ``results/bench/batches.csv`` (device, git commit,
parameters, seconds). The graph is the prepared one (``results/graphs/{dataset}.npz``)
when it exists, else the dataset read as ``dynpr pagerank`` reads it (``dynpr.prepare.read_graph``).

    python benchmarks/bench_batches.py [--dataset web-NotreDame] [--fraction 0.1] [--repeats 3]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

from dynpr.backend import device_name
from dynpr.batches import apply_batch_with_report, batch_rng, random_batch
from dynpr.atomic_files import write_csv_atomic
from dynpr.prepare import read_graph
from dynpr.results import git_commit, timestamp

ROOT = Path(__file__).resolve().parents[1]  # benchmarks run in a checkout: results/ and its commit


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="web-NotreDame")
    parser.add_argument("--fraction", type=float, default=0.1)
    parser.add_argument("--insert-share", type=float, default=0.8)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default=str(ROOT / "results" / "bench" / "batches.csv"))
    args = parser.parse_args()

    graph, _ = read_graph(args.dataset, results=ROOT / "results" / "graphs")
    device, commit = device_name("cpu"), git_commit(ROOT)
    rows = []
    for repeat in range(args.repeats):
        start = time.perf_counter()
        batch = random_batch(graph, args.fraction, args.insert_share, batch_rng(args.seed, args.dataset, args.fraction, repeat))
        generate_s = time.perf_counter() - start
        start = time.perf_counter()
        updated, report = apply_batch_with_report(graph, batch)
        apply_s = time.perf_counter() - start
        if report.skipped:
            raise RuntimeError(f"random batch {repeat} had {report.skipped} no-op edges: {report}")
        rows.append(dict(
            benchmark="random_batch", dataset=args.dataset, vertices=graph.num_vertices,
            edges=graph.num_edges, fraction=args.fraction, insert_share=args.insert_share, seed=args.seed,
            repeat=repeat, insertions=batch.insertions, deletions=batch.deletions, edges_after=updated.num_edges,
            generate_s=generate_s, apply_s=apply_s, device=device, numpy=np.__version__,
            git_commit=commit, timestamp=timestamp(),
        ))
        print(f"{args.dataset} repeat {repeat}: {batch.insertions} insertions + {batch.deletions} deletions; "
              f"generate {generate_s:.3f} s, apply {apply_s:.3f} s")
    write_csv_atomic(pd.DataFrame(rows), args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
