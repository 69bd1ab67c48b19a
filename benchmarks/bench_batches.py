"""Benchmark: make and apply random batches (fractions of |E|) on a static graph.

Writes one row per (fraction, repeat) to ``results/bench/batches.csv``: device,
git commit, parameters, seconds to make (``random_batch``) and to apply
(``apply_batch_with_report``) the batch, the peak RSS of each stage (``VmHWM``,
reset through ``/proc/self/clear_refs`` before the stage; NaN where Linux lacks it),
each stage's peak allocation (``tracemalloc``, NumPy's arrays included) over the
graph's bytes, and as a yardstick the time of one ``np.sort`` of |E| random int64 keys.
The graph is an R-MAT graph (``--rmat-scale``, generated on the host) or a
dataset: the prepared one (``results/graphs/{dataset}.npz``) when it exists,
else read as ``dynpr pagerank`` reads it (``dynpr.io.prepare.read_graph``).

    python benchmarks/bench_batches.py [--dataset web-NotreDame] [--fractions 0.1] [--repeats 3]
    python benchmarks/bench_batches.py --rmat-scale 22 --fractions 0.01 0.1 --repeats 1
"""

from __future__ import annotations

import argparse
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pandas as pd

from dynpr.graph.atomic_files import write_csv_atomic
from dynpr.backend import device_name
from dynpr.batches import apply_batch_with_report, batch_rng, random_batch
from dynpr.graph.hostmem import GIB, peak_rss_gib, reset_peak_rss
from dynpr.evaluation.results import git_commit, timestamp

ROOT = Path(__file__).resolve().parents[1]  # benchmarks run in a checkout: results/ and its commit


def _reset_peak_allocation() -> int:
    """Restart tracemalloc's peak; returns the bytes allocated now (a stage's peak is counted above them)."""
    tracemalloc.reset_peak()
    return tracemalloc.get_traced_memory()[0]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="web-NotreDame")
    parser.add_argument("--rmat-scale", type=int, help="an R-MAT graph of this scale (edge factor 16, seed 1) "
                        "instead of --dataset")
    parser.add_argument("--fractions", type=float, nargs="+", default=[0.1])
    parser.add_argument("--insert-share", type=float, default=0.8)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default=str(ROOT / "results" / "bench" / "batches.csv"))
    args = parser.parse_args(argv)

    start = time.perf_counter()
    if args.rmat_scale is not None:
        from dynpr.generate.rmat import rmat_graph

        name = f"rmat-{args.rmat_scale}"
        graph = rmat_graph(args.rmat_scale, 16, seed=1, backend="cpu")
    else:
        from dynpr.io.prepare import read_graph

        name = args.dataset
        graph, _ = read_graph(args.dataset, results=ROOT / "results" / "graphs")
    graph.self_loop_positions  # computed once per graph: not part of any batch's time
    print(f"{name}: {graph.num_vertices:,} vertices, {graph.num_edges:,} edges "
          f"({graph.nbytes / GIB:.2f} GiB), read in {time.perf_counter() - start:.1f} s", flush=True)
    device, commit = device_name("cpu"), git_commit(ROOT)
    keys = np.random.default_rng(0).integers(0, 1 << 62, graph.num_edges)
    start = time.perf_counter()
    keys.sort()
    sort_s = time.perf_counter() - start
    del keys
    print(f"one int64 sort of |E| keys: {sort_s:.2f} s", flush=True)
    tracemalloc.start()
    rows = []
    for fraction in args.fractions:
        for repeat in range(args.repeats):
            rng = batch_rng(args.seed, name, fraction, repeat)
            reset_peak_rss()
            base = _reset_peak_allocation()
            start = time.perf_counter()
            batch = random_batch(graph, fraction, args.insert_share, rng)
            make_s = time.perf_counter() - start
            make_rss, make_alloc = peak_rss_gib(), (tracemalloc.get_traced_memory()[1] - base) / graph.nbytes
            reset_peak_rss()
            base = _reset_peak_allocation()
            start = time.perf_counter()
            updated, report = apply_batch_with_report(graph, batch)
            apply_s = time.perf_counter() - start
            apply_rss, apply_alloc = peak_rss_gib(), (tracemalloc.get_traced_memory()[1] - base) / graph.nbytes
            if report.skipped:
                raise RuntimeError(f"random batch {repeat} had {report.skipped} no-op edges: {report}")
            rows.append(dict(
                benchmark="random_batch", dataset=name, vertices=graph.num_vertices, edges=graph.num_edges,
                graph_gib=graph.nbytes / GIB, fraction=fraction, insert_share=args.insert_share, seed=args.seed,
                repeat=repeat, insertions=batch.insertions, deletions=batch.deletions,
                edges_after=updated.num_edges, generate_s=make_s, generate_peak_rss_gib=make_rss,
                generate_peak_over_graph=make_alloc, apply_s=apply_s, apply_peak_rss_gib=apply_rss,
                apply_peak_over_graph=apply_alloc, sort_s=sort_s, device=device, numpy=np.__version__,
                git_commit=commit, timestamp=timestamp(),
            ))
            del updated
            print(f"{name} fraction {fraction:g} repeat {repeat}: {batch.insertions:,} insertions + "
                  f"{batch.deletions:,} deletions; make {make_s:.2f} s (peak RSS {make_rss:.2f} GiB, "
                  f"allocation {make_alloc:.2f}x the graph), apply {apply_s:.2f} s (peak RSS {apply_rss:.2f} "
                  f"GiB, allocation {apply_alloc:.2f}x)", flush=True)
    write_csv_atomic(pd.DataFrame(rows), args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
