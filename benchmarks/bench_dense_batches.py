"""DF-P on batches that touch nearly every vertex: iterations and L1 error of the candidate switches.

Issue 45 asked whether DF-P, once its affected set covers nearly every vertex, should go on as
Static-style iterations (no marking, no pruning). The CPU engine is the GPU engine's twin (the
same iterations and ranks), so it answers what such a switch does to iterations and error;
what an iteration costs on the GPU is in the runs' ``compute_ms`` (docs/dynamic.md, "DF-P on
batches that touch every vertex"). Per fraction, one random batch (80% insertions) from the base
graph's Static ranks, every run scored against the reference (Static at tau = 1e-100):

- ``static nd df dfp``: the approaches as they are;
- ``dfp, no pruning``: DF-P with tau_p = 0, every vertex it marks stays affected (its closed
  form kept): what DF-P switched to every vertex from the first iteration does;
- ``dfp K, then static-style``: K DF-P iterations, then ND's iterations (every vertex,
  Static's update rule, from DF-P's ranks) to the same tau: the switch the issue proposed.

R-MAT graphs (``--rmat SCALE EDGE_FACTOR``) run at the tolerance that makes tau * n that of the
paper's tau = 1e-10 at 2^26 vertices (``--tolerance-per-vertex``), so that a small graph's
vertices converge as rmat-26-ef32's do. Prints one line per run; writes nothing.

    python benchmarks/bench_dense_batches.py --dataset web-NotreDame --fractions 0.01 0.1
    python benchmarks/bench_dense_batches.py --rmat 18 32 --fractions 0.1
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

from dynpr import pagerank as pr
from dynpr.batches import apply_batch, batch_rng, random_batch
from dynpr.generate.rmat import rmat_graph
from dynpr.io.prepare import read_graph
from dynpr.pagerank.options import PageRankOptions

ROOT = Path(__file__).resolve().parents[1]

# tau * n of the paper's tau = 1e-10 at rmat-26-ef32's 2^26 vertices
RMAT_26_TOLERANCE_PER_VERTEX = 1e-10 * 2**26


def runs(graph, new, batch, base_ranks, options: PageRankOptions, switch_after: list[int]):
    """(label, iterations, ranks) of every run on ``batch``, ``new`` the graph it makes (see the module's
    docstring)."""

    def run(approach, previous, opts=options):
        return pr.update(approach, graph, new, batch, previous, opts, backend="cpu")

    for approach in ("static", "nd", "df", "dfp"):
        result = run(approach, None if approach == "static" else base_ranks)
        yield approach, result.iterations, result.ranks
    result = run("dfp", base_ranks, replace(options, prune_tolerance=0.0))
    yield "dfp, no pruning", result.iterations, result.ranks
    for k in switch_after:
        first = run("dfp", base_ranks, replace(options, max_iterations=k))
        rest = run("nd", first.ranks)
        yield f"dfp {k}, then static-style", k + rest.iterations, rest.ranks


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--dataset", default="web-NotreDame", help="catalog name or graph file")
    source.add_argument("--rmat", type=int, nargs=2, metavar=("SCALE", "EDGE_FACTOR"))
    parser.add_argument("--fractions", type=float, nargs="+", default=[0.01, 0.1])
    parser.add_argument("--switch-after", type=int, nargs="+", default=[1, 2, 4],
                        help="DF-P iterations before the static-style ones")
    parser.add_argument("--tolerance-per-vertex", type=float, default=RMAT_26_TOLERANCE_PER_VERTEX,
                        help="R-MAT: tau = this / n (default: rmat-26-ef32's at the paper's tau)")
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args(argv)
    if args.rmat:
        graph = rmat_graph(*args.rmat, seed=args.seed)
        name = f"rmat-{args.rmat[0]}-ef{args.rmat[1]}"
        options = PageRankOptions(tolerance=args.tolerance_per_vertex / graph.num_vertices)
    else:
        graph, _ = read_graph(args.dataset, results=ROOT / "results" / "graphs")
        name, options = args.dataset, PageRankOptions()
    base_ranks = pr.static(graph, options, backend="cpu").ranks
    print(f"{name}: {graph.num_vertices:,} vertices, {graph.num_edges:,} edges, tau {options.tolerance:g}")
    for fraction in args.fractions:
        batch = random_batch(graph, fraction, 0.8, batch_rng(args.seed, name, fraction, 0))
        new = apply_batch(graph, batch)
        reference = pr.reference(new, options, backend="cpu")
        for label, iterations, ranks in runs(graph, new, batch, base_ranks, options, args.switch_after):
            print(f"{fraction:g}  {label:28s} {iterations:4d} iterations  L1 error {pr.l1_error(ranks, reference):.3e}",
                  flush=True)


if __name__ == "__main__":
    main()
