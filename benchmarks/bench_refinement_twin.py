"""Float32 contributions refined in float64, measured with the CPU twin (issue 35; no GPU).

For each graph (an embedded SNAP graph by name, ``rmat14`` as the tests build it, or ``rmat-S``:
the catalog's R-MAT graph of seed 1) Static, and ND and DF on a random batch (1e-3 of the edges,
1e-4 above a million, ``default_rng(42)``) from the float64 Static ranks, run with float64
contributions, with ``classes_c32``'s float32 ones, and refined at each of ``--refine-at``
(``KernelVariant.refine_at``: float32 until the change is at most that many tau, then float64).
Prints per run the iterations, the L1 against the float64 reference, its ratio to float64's, and
how many iterations read float32 contributions (docs/locality.md, "Refinement")::

    python benchmarks/bench_refinement_twin.py CollegeMsg rmat14 rmat-20 --refine-at 30 100 300
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from dynpr import designs
from dynpr.batches import apply_batch, random_batch
from dynpr.graph import Graph
from dynpr.pagerank import cpu, l1_error, reference, static, update
from dynpr.pagerank.options import PageRankOptions
from dynpr.rmat import rmat_edges, rmat_graph

EMBEDDED = Path(__file__).resolve().parents[1] / "datasets" / "embedded"


class CountingContributions(cpu._Contributions):
    """The twin's contributions, logging the dtype each iteration read."""

    log: list[str] = []

    def __call__(self, ranks):
        self.log.append(self.reads)
        return super().__call__(ranks)


def load(name: str) -> Graph:
    """A graph by name, with a self-loop on every vertex (the tests' and the catalog's)."""
    if name == "rmat14":
        return Graph.from_edges(*rmat_edges(14, 16, seed=7))
    if name.startswith("rmat-"):
        return rmat_graph(int(name[5:]), 16, seed=1, backend="cpu")
    table = pd.read_csv(EMBEDDED / f"{name}.txt.gz", sep=r"\s+", comment="#", header=None, usecols=[0, 1],
                        dtype=np.int64)
    return Graph.from_edges(table[0].to_numpy(), table[1].to_numpy())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("graphs", nargs="+")
    parser.add_argument("--refine-at", type=float, nargs="+", default=[100.0])
    args = parser.parse_args()
    cpu._Contributions = CountingContributions
    variants = ["classes", "classes_c32"]
    for factor in args.refine_at:
        name = f"classes_c32_refined_{factor:g}"
        designs.VARIANTS[name] = replace(designs.VARIANTS["classes_c32"], name=name, refine_at=factor)
        variants.append(name)
    options = PageRankOptions()
    for name in args.graphs:
        graph = load(name)
        old = static(graph, options, backend="cpu")
        batch = random_batch(graph, 1e-4 if graph.num_edges > 1e6 else 1e-3, 0.8, np.random.default_rng(42))
        new = apply_batch(graph, batch)
        references = {"static": reference(graph, options, backend="cpu", static_result=old)}
        references["nd"] = references["df"] = reference(new, options, backend="cpu",
                                                        static_result=static(new, options, backend="cpu"))
        print(f"# {name}: n={graph.num_vertices} m={graph.num_edges} batch {batch.deletions}+{batch.insertions}")
        for approach in ("static", "nd", "df"):
            first = None
            for variant in variants:
                CountingContributions.log = []
                run_options = PageRankOptions(variant=variant)
                result = (static(graph, run_options, backend="cpu") if approach == "static" else
                          update(approach, graph, new, batch, old.ranks, run_options, backend="cpu"))
                l1 = l1_error(result.ranks, references[approach])
                first = first or (result.iterations, l1)
                narrow = sum(dtype == "float32" for dtype in CountingContributions.log)
                print(f"{name} {approach} {variant}: iterations {result.iterations} "
                      f"({result.iterations - first[0]:+d}) L1 {l1:.4e} ratio {l1 / first[1]:.4f} "
                      f"float32 reads {narrow}/{result.iterations}", flush=True)


if __name__ == "__main__":
    main()
