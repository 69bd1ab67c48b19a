"""Benchmark: generate and apply one random batch of 0.1·|E| edges on a static graph.

Writes one row per repeat to ``results/bench/batches.csv`` (device, git commit,
parameters, seconds). The graph is the prepared one (``results/graphs/{dataset}.npz``)
when it exists, else the embedded SNAP file parsed directly.

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
from dynpr.fileio import atomic_path
from dynpr.graph import Graph
from dynpr.results import git_commit, timestamp

ROOT = Path(__file__).resolve().parents[1]


def load_graph(dataset: str) -> tuple[Graph, str]:
    """The prepared graph if present, else the embedded SNAP edge list (tab-separated, '#' comments)."""
    prepared = ROOT / "results" / "graphs" / f"{dataset}.npz"
    if prepared.exists():
        return Graph.load(prepared), str(prepared.relative_to(ROOT))
    embedded = ROOT / "datasets" / "embedded" / f"{dataset}.txt.gz"
    edges = pd.read_csv(embedded, sep="\t", comment="#", header=None, names=["src", "dst"], dtype=np.int64)
    return Graph.from_edges(edges["src"].to_numpy(), edges["dst"].to_numpy()), str(embedded.relative_to(ROOT))


def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo (Linux), else the platform's name."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return device_name("cpu")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="web-NotreDame")
    parser.add_argument("--fraction", type=float, default=0.1)
    parser.add_argument("--insert-share", type=float, default=0.8)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default=str(ROOT / "results" / "bench" / "batches.csv"))
    args = parser.parse_args()

    graph, source = load_graph(args.dataset)
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
            benchmark="random_batch", dataset=args.dataset, source=source, vertices=graph.num_vertices,
            edges=graph.num_edges, fraction=args.fraction, insert_share=args.insert_share, seed=args.seed,
            repeat=repeat, insertions=batch.insertions, deletions=batch.deletions, edges_after=updated.num_edges,
            generate_s=generate_s, apply_s=apply_s, device=cpu_model(), numpy=np.__version__,
            git_commit=git_commit(ROOT), timestamp=timestamp(),
        ))
        print(f"{args.dataset} repeat {repeat}: {batch.insertions} insertions + {batch.deletions} deletions; "
              f"generate {generate_s:.3f} s, apply {apply_s:.3f} s")
    with atomic_path(args.out) as tmp:
        pd.DataFrame(rows).to_csv(tmp, index=False)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
