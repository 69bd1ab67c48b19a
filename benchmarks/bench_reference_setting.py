"""DF-P's L1 error on sx-mathoverflow measured the way the reference implementation measures it.

The paper's reference code (puzzlef/pagerank-cuda-dynamic) runs its temporal
experiment with the edges in file order, a graph of 248,180 rows (10 x |V|: the
extra rows are isolated vertices with a self-loop, which hold 90% of the rank
mass and so scale every real vertex's rank and every L1 error by 1/10), batch 0
starting from the base graph's reference ranks (tau = 1e-100), and 100 chained
batches per fraction. This benchmark runs DF-P (and Static, for its time) in
that setting and, side by side, in the pipeline's own (``--pad 1``: |V| rows),
and writes one row per batch to ``results/bench/reference_setting.csv``.

    python benchmarks/bench_reference_setting.py [--backend auto] [--batches 100] [--pads 1 10]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from dynpr import pagerank as pr
from dynpr.backend import device_name, resolve_backend
from dynpr.batches import apply_batch, temporal_batches
from dynpr.graph.atomic_files import write_csv_atomic
from dynpr.graph.graph import renumber
from dynpr.evaluation.results import geometric_mean, git_commit, timestamp

ROOT = Path(__file__).resolve().parents[1]  # benchmarks run in a checkout: results/ and its commit
DATASET = "sx-mathoverflow"
# DF-P's mean L1 error over 100 batches as the reference code gives it in this setting (H100, one
# significant digit): the targets the rows are compared with.
REFERENCE_L1 = {1e-5: 5e-8, 1e-4: 6e-8, 1e-3: 1e-7}


def file_order_edges(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """Temporal edges in file order (as the reference reads them), ids renumbered densely."""
    # read here, not by dynpr.io.prepare.read_graph, whose temporal edges are sorted by time
    edges = pd.read_csv(path, sep=r"\s+", header=None, comment="#", usecols=[0, 1], dtype=np.int64)
    _, src, dst = renumber(edges[0].to_numpy(), edges[1].to_numpy())
    return src.astype(np.int32), dst.astype(np.int32)


def run(src, dst, rows: int, fraction: float, num_batches: int, backend: str, log=print) -> list[dict]:
    """DF-P and Static over ``num_batches`` chained batches on a graph of ``rows`` vertices."""
    base, batches, _ = temporal_batches(src, dst, rows, 0.9, fraction, num_batches)
    graph, dfp_ranks = base, pr.reference(base, backend=backend)
    out = []
    for index, batch in enumerate(batches):
        updated = apply_batch(graph, batch)
        ref = pr.reference(updated, backend=backend)
        results = {approach: pr.update(approach, graph, updated, batch, dfp_ranks, backend=backend)
                   for approach in ("static", "dfp")}
        for approach, result in results.items():
            out.append({"approach": approach, "batch_index": index, "insertions": batch.insertions,
                        "iterations": result.iterations, "time_ms": result.time_ms,
                        "l1_error": pr.l1_error(result.ranks, ref), "variant": result.variant,
                        "device": result.device})
        graph, dfp_ranks = updated, results["dfp"].ranks
        if (index + 1) % 25 == 0:
            log(f"  rows {rows}, fraction {fraction:g}: {index + 1}/{num_batches} batches")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="auto", choices=["auto", "cpu", "gpu"])
    parser.add_argument("--fractions", type=float, nargs="+", default=sorted(REFERENCE_L1))
    parser.add_argument("--batches", type=int, default=100)
    parser.add_argument("--pads", type=int, nargs="+", default=[1, 10], help="rows = pad x |V|")
    parser.add_argument("--out", default=str(ROOT / "results" / "bench" / "reference_setting.csv"))
    args = parser.parse_args()

    backend = resolve_backend(args.backend)
    commit = git_commit(ROOT)
    src, dst = file_order_edges(ROOT / "datasets" / "embedded" / f"{DATASET}.txt.gz")
    vertices = int(max(src.max(), dst.max())) + 1
    rows = []
    for pad in args.pads:
        for fraction in args.fractions:
            for row in run(src, dst, pad * vertices, fraction, args.batches, backend):
                rows.append({"dataset": DATASET, "rows": pad * vertices, "pad": pad, "batch_fraction": fraction,
                             "order": "file", "num_batches": args.batches, "backend": backend, **row,
                             "git_commit": commit, "timestamp": timestamp()})
    table = pd.DataFrame(rows)
    out = Path(args.out)
    write_csv_atomic(table, out)

    dfp = table[table.approach == "dfp"]
    static_ms = table[table.approach == "static"].groupby(["pad", "batch_fraction"])["time_ms"].mean()
    summary = dfp.groupby(["pad", "batch_fraction"]).agg(
        l1_mean=("l1_error", "mean"), l1_geomean=("l1_error", geometric_mean), dfp_ms=("time_ms", "mean"),
        iterations=("iterations", "mean"))
    summary["static_ms"] = static_ms
    summary["reference_l1"] = [REFERENCE_L1.get(f, np.nan) for f in summary.index.get_level_values(1)]
    print(f"{device_name(backend)}, commit {commit}, DF-P over {args.batches} chained batches:")
    print(summary.to_string(float_format=lambda v: f"{v:.3g}"))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
