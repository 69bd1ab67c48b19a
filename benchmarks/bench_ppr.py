"""Benchmark: DF-P's speedup over Static for personalized PageRank (issue 48, item 2).

For each graph, batch fraction and repeat: a random 80/20 batch (``batch_rng``, as the
pipeline's) updates the graph, Static recomputes the new graph's ranks from ``1/n`` and the
dynamic approaches update the old graph's converged ranks; each run's L1 error is taken
against the personalized reference (Static at tau 1e-100). Two teleports: ``concentrated``,
equal weights on a random ``--share`` of the vertices (1%: the question of the issue), and
``uniform`` (plain PageRank, the paper's setting) for comparison. One row per run to
``results/bench/ppr.csv``: device, git commit, parameters, time (event-timed on the GPU:
partitioning, marking and iterations, as the paper's 5.1.5), iterations, affected vertices,
error, and each run's speedup over Static on the same batch.

    python benchmarks/bench_ppr.py                     # web-NotreDame and rmat-22 on the GPU
    python benchmarks/bench_ppr.py --graphs rmat-12 --backend cpu --fractions 1e-3 --repeats 1
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

from dynpr import pagerank
from dynpr.graph.atomic_files import write_csv_atomic
from dynpr.backend import device_name, resolve_backend
from dynpr.batches import apply_batch, batch_rng, random_batch
from dynpr.pagerank.options import PageRankOptions
from dynpr.evaluation.results import git_commit, timestamp

ROOT = Path(__file__).resolve().parents[1]  # benchmarks run in a checkout: results/ and its commit


def read(name: str, backend: str):
    """An R-MAT graph for ``rmat-<scale>`` (edge factor 16, seed 1), else a dataset (prepared
    ``results/graphs/<name>.npz`` when present)."""
    if name.startswith("rmat-"):
        from dynpr.generate.rmat import rmat_graph

        return rmat_graph(int(name.removeprefix("rmat-")), 16, seed=1, backend=backend)
    from dynpr.io.prepare import read_graph

    return read_graph(name, results=ROOT / "results" / "graphs")[0]


def concentrated(n: int, share: float, seed: int) -> np.ndarray:
    """Equal teleport weights on a random ``share`` of the n vertices (at least one), 0 elsewhere."""
    weights = np.zeros(n)
    weights[np.random.default_rng(seed).choice(n, max(1, round(share * n)), replace=False)] = 1.0
    return weights


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graphs", nargs="+", default=["web-NotreDame", "rmat-22"])
    parser.add_argument("--backend", default="gpu", choices=("cpu", "gpu", "auto"))
    parser.add_argument("--approaches", nargs="+", default=["static", "nd", "dt", "df", "dfp"])
    parser.add_argument("--fractions", type=float, nargs="+", default=[1e-5, 1e-4, 1e-3])
    parser.add_argument("--share", type=float, default=0.01, help="share of vertices the teleport weighs (0.01)")
    parser.add_argument("--teleports", nargs="+", default=["concentrated", "uniform"],
                        choices=("concentrated", "uniform"))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--out", default=str(ROOT / "results" / "bench" / "ppr.csv"))
    args = parser.parse_args(argv)
    if "static" not in args.approaches:
        raise SystemExit("--approaches must include static (the speedups are over it)")
    backend = resolve_backend(args.backend)
    device, commit = device_name(backend), git_commit(ROOT)
    rows = []
    for name in args.graphs:
        start = time.perf_counter()
        graph = read(name, backend)
        print(f"{name}: {graph.num_vertices:,} vertices, {graph.num_edges:,} edges, read in "
              f"{time.perf_counter() - start:.1f} s", flush=True)
        for teleport in args.teleports:
            weights = concentrated(graph.num_vertices, args.share, args.seed) if teleport == "concentrated" else None
            options = PageRankOptions(personalization=weights)
            # the old graph's converged ranks, where every batch's dynamic runs start
            previous = pagerank.reference(graph, options, backend=backend)
            for fraction in args.fractions:
                for repeat in range(args.repeats):
                    batch = random_batch(graph, fraction, 0.8, batch_rng(args.seed, name, fraction, repeat))
                    new = apply_batch(graph, batch)
                    static = pagerank.static(new, options, backend=backend)
                    ref = pagerank.reference(new, options, backend=backend, static_result=static)
                    results = {a: static if a == "static" else
                               pagerank.update(a, graph, new, batch, previous, options, backend=backend)
                               for a in args.approaches}
                    for approach, result in results.items():
                        rows.append(dict(
                            benchmark="ppr", dataset=name, vertices=new.num_vertices, edges=new.num_edges,
                            teleport=teleport, share=args.share if weights is not None else 1.0,
                            fraction=fraction, insertions=batch.insertions, deletions=batch.deletions,
                            repeat=repeat, seed=args.seed, approach=approach, time_ms=result.time_ms,
                            iterations=result.iterations, converged=result.converged, affected=result.affected,
                            l1_error=pagerank.l1_error(result.ranks, ref),
                            speedup_over_static=static.time_ms / result.time_ms, backend=result.backend,
                            variant=result.variant, device=device, git_commit=commit, timestamp=timestamp(),
                        ))
                    dfp = results.get("dfp")
                    print(f"{name} {teleport} fraction {fraction:g} repeat {repeat}: static "
                          f"{static.time_ms:.2f} ms ({static.iterations} it)"
                          + (f", dfp {dfp.time_ms:.2f} ms ({dfp.iterations} it, {dfp.affected:,} affected, "
                             f"L1 {pagerank.l1_error(dfp.ranks, ref):.1e}): {static.time_ms / dfp.time_ms:.1f}x"
                             if dfp else ""), flush=True)
                    del new
    frame = pd.DataFrame(rows)
    write_csv_atomic(frame, args.out)
    summary = (frame.groupby(["dataset", "teleport", "fraction", "approach"])["speedup_over_static"]
               .apply(lambda s: float(np.exp(np.log(s).mean()))).unstack("approach"))
    print("geometric-mean speedup over Static:\n" + summary.to_string(float_format=lambda x: f"{x:.2f}"))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
