"""Benchmark the GPU engines: every approach on temporal or random batches, per partition level.

Writes one row per run to ``results/bench/gpu_{dataset}_{mode}.csv`` (or ``--out``) with the
device, git commit, parameters, iterations, event-timed milliseconds per phase and per iteration,
L1 error against the reference (Static at tau=1e-100, 500 iterations, on the GPU), the affected
count and the time of the same batch's Static run (``static_ms``, so ``speedup_vs_static`` =
static_ms / time_ms); prints medians per approach and fraction. Datasets: a catalog name or graph
file, read as the CLI reads it (:func:`dynpr.io.prepare.read_graph`: ``results/graphs/{name}.npz``
when prepared, else the source, renumbered), or ``rmatS`` (R-MAT scale S, edge factor 16,
seeded by ``--seed``). ``--pull-shares`` runs DF and DF-P once per share of the edges at which
they turn from push to pull mode (:data:`dynpr.designs.PULL_SHARE`, and
:data:`dynpr.designs.KEPT_PULL_SHARE` where the blocks keep their units; ``inf``: never), the
sweep that sets those constants. Without it the default's choice runs.

    python benchmarks/bench_gpu.py --dataset sx-mathoverflow --mode temporal --batches 20
    python benchmarks/bench_gpu.py --dataset rmat20 --mode random --fractions 1e-7 1e-5 1e-3
    python benchmarks/bench_gpu.py --dataset web-NotreDame --mode random --partitions in_out \\
        --approaches static dfp --pull-shares 0 0.1 0.5 inf
    python benchmarks/bench_gpu.py --dataset CollegeMsg --mode temporal --variants classes_graphs \\
        classes_persistent   # a launch per iteration vs one per solve
    python benchmarks/bench_gpu.py --dataset rmat20 --mode kahn   # GPU vs CPU Kahn, graph and its DAG part
"""

from __future__ import annotations

import argparse
import itertools
import math
import time
from pathlib import Path

import numpy as np
import pandas as pd

from dynpr import APPROACHES
from dynpr.backend import device_name
from dynpr.batches import apply_batch, random_batch, temporal_batches
from dynpr.graph.atomic_files import write_csv_atomic
from dynpr.evaluation.bench import require_gpu, run_script
from dynpr.designs import DEFAULT_VARIANT, PARTITIONS, REFERENCE_TOLERANCE, VARIANTS
from dynpr.gpu import pagerank as engine
from dynpr.gpu.resident import to_resident
from dynpr.graph.graph import Graph
from dynpr.pagerank import l1_error
from dynpr.pagerank.options import PageRankOptions
from dynpr.io.prepare import read_graph_with_ids
from dynpr.evaluation.results import git_commit
from dynpr.generate.rmat import rmat_graph

ROOT = Path(__file__).resolve().parents[1]  # benchmarks run in a checkout: results/ and its commit
REFERENCE = PageRankOptions(tolerance=REFERENCE_TOLERANCE, max_iterations=500)


def read_input(args, *, self_loops: bool = True):
    """The benchmarked graph and its time-ordered temporal edges (``None`` if it has none).

    ``self_loops=False``: the input's edges as they are (for Kahn), else a self-loop on every vertex.
    """
    if args.dataset.startswith("rmat"):
        return rmat_graph(int(args.dataset[4:]), 16, seed=args.seed, self_loops=self_loops), None
    graph, temporal, _ = read_graph_with_ids(args.dataset, results=ROOT / "results" / "graphs",
                                             self_loops=self_loops)
    return graph, temporal


def scenarios(args):
    """Yield (fraction, batch_index, old_graph, new_graph, batch) in the order they are run."""
    full, temporal = read_input(args)
    if args.mode == "temporal":
        if temporal is None:
            raise SystemExit(f"{args.dataset} has no timestamps; use --mode random")
        src, dst, _ = temporal
        for fraction in args.fractions:
            graph, batches, _ = temporal_batches(src, dst, full.num_vertices, 0.9, fraction, args.batches)
            for index, batch in enumerate(batches):
                new = apply_batch(graph, batch)
                yield fraction, index, graph, new, batch
                graph = new  # temporal batches apply one after another
    else:
        # batches are drawn on the host and applied where the experiment applies them: on the
        # resident graph (R-MAT 25 at fraction 0.1: 55 s on the host)
        resident = to_resident(full)
        rng = np.random.default_rng(args.seed)
        for fraction in args.fractions:
            for index in range(args.batches):
                batch = random_batch(full, fraction, 0.8, rng)
                yield fraction, index, resident, apply_batch(resident, batch), batch


def bench_kahn(args) -> list[dict]:
    """GPU and CPU Kahn on the graph without self-loops and on its DAG part (edges u < v)."""
    from dynpr.kahn import kahn

    full, _ = read_input(args, self_loops=False)
    src, dst = full.edges()
    n = full.num_vertices
    keep = src < dst
    rows = []
    for case, graph in (("graph", full),
                        ("dag", Graph.from_edges(src[keep], dst[keep], n, self_loops=False))):
        for backend in ("gpu", "cpu"):
            for repeat in range(args.batches if backend == "gpu" else 1):
                result = kahn(graph, backend=backend)
                rows.append({"dataset": args.dataset, "case": case, "backend": backend, "repeat": repeat,
                             "vertices": n, "edges": graph.num_edges, "is_dag": result.is_dag,
                             "processed": result.processed, "levels": result.levels, "time_ms": result.time_ms})
    return rows


def runs(args):
    """(approach, pull share or NaN for the default) in the order they run; Static first, so
    every later row of a batch carries its time."""
    approaches = ["static"] + [a for a in args.approaches if a != "static"]
    for approach in approaches:
        if args.pull_shares and approach in ("df", "dfp"):
            yield from ((approach, share) for share in args.pull_shares)
        else:
            yield approach, math.nan


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="sx-mathoverflow")
    parser.add_argument("--mode", choices=("temporal", "random", "kahn"), default="temporal")
    parser.add_argument("--fractions", type=float, nargs="+", default=[1e-5, 1e-4, 1e-3])
    parser.add_argument("--batches", type=int, default=10, help="batches per fraction (temporal) or repeats (random)")
    parser.add_argument("--partitions", nargs="+", choices=PARTITIONS, default=list(PARTITIONS))
    parser.add_argument("--approaches", nargs="+", choices=APPROACHES, default=list(APPROACHES))
    parser.add_argument("--variants", nargs="+", choices=list(VARIANTS), default=[DEFAULT_VARIANT],
                        help="GPU kernel designs to run side by side (each with its own Static)")
    parser.add_argument("--pull-shares", type=float, nargs="+",
                        help="DF/DF-P: run once per share of the edges at which they turn to pull mode")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    require_gpu()
    out = args.out or ROOT / "results" / "bench" / f"gpu_{args.dataset}_{args.mode}.csv"
    commit = git_commit(ROOT)
    device = device_name("gpu")
    if args.mode == "kahn":
        table = pd.DataFrame(bench_kahn(args)).assign(device=device, git_commit=commit)
        write_csv_atomic(table, out)
        summary = table.groupby(["case", "backend"], sort=False).agg(
            runs=("time_ms", "size"), median_ms=("time_ms", "median"), levels=("levels", "first"),
            processed=("processed", "first"), edges=("edges", "first"))
        print(f"Kahn on {args.dataset}, {device}, commit {commit}; rows in {out}")
        print(summary.to_string(float_format=lambda x: f"{x:.4g}"))
        return

    rows = []
    carried: dict[tuple, np.ndarray] = {}  # ranks each (approach, partition) carries between batches
    previous_graph = None
    for fraction, index, old, new, batch in scenarios(args):
        if old is not previous_graph:  # a new base: every approach starts from its converged ranks
            base = engine._update("static", None, old, None, None, PageRankOptions()).ranks
            carried = {}
        previous_graph = new if args.mode == "temporal" else old
        reference = engine._update("static", None, new, None, None, REFERENCE).ranks
        for variant, partition in itertools.product(args.variants, args.partitions):
            options = PageRankOptions(partition=partition, variant=variant)
            static_ms = math.nan
            for approach, share in runs(args):
                key = (variant, approach, partition, share)
                start = carried.get(key, base) if args.mode == "temporal" else base
                tuning = {} if math.isnan(share) else {"pull_share": share}
                result = engine._update(approach, old, new, batch, start, options, **tuning)
                carried[key] = result.ranks
                if approach == "static":
                    static_ms = result.time_ms
                rows.append({
                    "dataset": args.dataset, "mode": args.mode, "approach": approach, "partition": partition,
                    "variant": result.variant, "pull_share": share, "batch_fraction": fraction, "batch_index": index,
                    "deletions": batch.deletions, "insertions": batch.insertions, "vertices": new.num_vertices,
                    "edges": new.num_edges, "iterations": result.iterations, "time_ms": result.time_ms,
                    "ms_per_iteration": result.time_ms / result.iterations, "static_ms": static_ms,
                    "speedup_vs_static": static_ms / result.time_ms,
                    "l1_error": l1_error(result.ranks, reference), "affected": result.affected,
                    **result.phases, "device": device, "git_commit": commit,
                    "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S"),
                })
    table = pd.DataFrame(rows)
    write_csv_atomic(table, out)
    summary = table.groupby(["variant", "partition", "batch_fraction", "approach", "pull_share"], sort=False,
                            dropna=False).agg(
        runs=("time_ms", "size"), median_ms=("time_ms", "median"), per_iteration_ms=("ms_per_iteration", "median"),
        vs_static=("speedup_vs_static", "median"), mark_ms=("mark_ms", "median"),
        iterations=("iterations", "median"), mean_l1=("l1_error", "mean"), affected=("affected", "median"))
    with pd.option_context("display.width", 200, "display.max_rows", 500):
        print(f"{args.dataset} ({args.mode}) on {device}, commit {commit}; rows in {out}")
        print(summary.to_string(float_format=lambda x: f"{x:.4g}"))


if __name__ == "__main__":
    raise SystemExit(run_script(main))
