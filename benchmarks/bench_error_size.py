"""How DF-P's L1 error over Static's moves with graph size, on a ladder of R-MAT graphs.

The paper orders DF-P's error below Static's (5.3.1, 5.3.2, Figs. 3(b), 5) on graphs of 10^7
to 10^9 edges; on the embedded graphs (10^5 to 10^6 edges) DF-P's error is 16 to 27 times
Static's. Per R-MAT scale (edge factor 16, the catalog's seed) this runs the random-batch
experiment of the pipeline (:func:`dynpr.evaluation.experiments.run_batches`: random batches of the
claims' sizes, 80% insertions, both approaches from the same Static ranks, the L1 error
against the reference Static at tau = 1e-100) for Static and DF-P only, and writes one row per
scale, batch fraction and batch: both errors and their ratio. Each scale runs in a child process
of its own, so one graph's memory never counts against the next; the CSV is rewritten
atomically after every scale. It prints the geometric mean ratio per scale.

Usage::

    python benchmarks/bench_error_size.py --scales 20 21 22 23 24 --fractions 1e-6 1e-5 1e-4 --backend gpu \\
        --out docs/measurements/claims/error_size_h100.csv
    python benchmarks/bench_error_size.py --scales 12 13 14 --backend cpu   # on the CPU, small

The first line is the H100 run of docs/claims.md (about 3 minutes, most of it generating the graphs: R-MAT 20
to 22 come from the host's NumPy stream). It leaves out 1e-7 |E|, which is under 5 edges at R-MAT 20 and 21
(left out of the ratio there anyway): every scale's ratio then stands on the same 3 sizes x 2 batches.
Each scale prints its seconds; the CSV holds every scale finished, so a run cut short keeps them. The
last lines are the per-scale table in Markdown, for docs/claims.md.
"""

from __future__ import annotations

import argparse
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]  # benchmarks run in a checkout: results/ and its commit
SEED = 1  # the catalog's R-MAT seed
BATCH_SEED = 42  # the config's seed
#: The claims' random batch sizes (dynpr.evaluation.claims.RANDOM): 1e-7 to 1e-4 |E|
FRACTIONS = (1e-7, 1e-6, 1e-5, 1e-4)
MIX_EDGES = 5  # batches smaller than this are left out of the claims (dynpr.evaluation.claims.MIX_EDGES); marked here


def scale_rows(scale: int, fractions: list[float], batches: int, backend: str) -> list[dict]:
    """Static's and DF-P's L1 error on every batch of one R-MAT graph (run in a child process)."""
    from dynpr.batches import batch_rng, random_batch
    from dynpr.evaluation.experiments import run_batches
    from dynpr.generate.rmat import generation_backend, rmat_graph

    name = f"rmat-{scale}"
    graph = rmat_graph(scale, 16, seed=SEED, backend=generation_backend(scale, 16, backend))
    made = {f: [random_batch(graph, f, 0.8, batch_rng(BATCH_SEED, name, f, i)) for i in range(batches)]
            for f in fractions}
    rows = pd.DataFrame(run_batches("random", name, graph, made, ["static", "dfp"], backend=backend))
    error = rows.pivot_table(index=["batch_fraction", "batch_index"], columns="approach", values="l1_error",
                             aggfunc="median")
    size = rows.groupby(["batch_fraction", "batch_index"])[["insertions", "deletions"]].max().sum(axis=1)
    first = rows.iloc[0]
    return [{"scale": scale, "vertices": int(first["vertices"]), "edges": int(first["edges"]), "batch_fraction": f,
             "batch_index": int(i), "batch_edges": int(size[(f, i)]), "below_mix": bool(size[(f, i)] < MIX_EDGES),
             "static_l1": float(error.loc[(f, i), "static"]), "dfp_l1": float(error.loc[(f, i), "dfp"]),
             "dfp_over_static": float(error.loc[(f, i), "dfp"] / error.loc[(f, i), "static"]),
             "backend": first["backend"], "device": first["device"], "git_commit": first["git_commit"]}
            for f, i in error.index]


def summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per scale the geometric mean DF-P / Static error ratio over the batches of at least MIX_EDGES edges."""
    kept = table[~table["below_mix"] & (table["dfp_over_static"] > 0)]
    return kept.groupby(["scale", "edges"])["dfp_over_static"].agg(
        geometric_mean=lambda r: float(np.exp(np.log(r).mean())), batches="size").reset_index()


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scales", type=int, nargs="+", default=[20, 21, 22, 23, 24, 25, 26])
    parser.add_argument("--fractions", type=float, nargs="+", default=list(FRACTIONS))
    parser.add_argument("--batches", type=int, default=2, help="random batches per fraction (config random.repeats)")
    parser.add_argument("--backend", choices=["cpu", "gpu", "auto"], default="gpu")
    parser.add_argument("--out", type=Path, default=ROOT / "results" / "bench" / "error_size.csv")
    args = parser.parse_args(argv)
    from dynpr.graph.atomic_files import write_csv_atomic

    args.out.parent.mkdir(parents=True, exist_ok=True)
    rows: list[dict] = []
    for scale in args.scales:
        started = time.perf_counter()
        # a fresh process per graph: the pool and host memory of the last one are gone
        with ProcessPoolExecutor(1, mp_context=get_context("spawn")) as pool:
            rows += pool.submit(scale_rows, scale, args.fractions, args.batches, args.backend).result()
        table = pd.DataFrame(rows)
        write_csv_atomic(table, args.out)
        print(summary(table[table["scale"] == scale]).to_string(index=False, header=scale == args.scales[0]),
              f"  ({time.perf_counter() - started:.0f} s)", flush=True)
    print(f"wrote {args.out}\n\n{markdown(summary(table), table)}")


def markdown(per_scale: pd.DataFrame, table: pd.DataFrame) -> str:
    """The per-scale summary as the Markdown table of docs/claims.md (device and commit of the rows)."""
    first = table.iloc[0]
    lines = ["| R-MAT scale | edges | DF-P / Static L1 error (geometric mean) | batches |", "| --- | --- | --- | --- |"]
    lines += [f"| {r.scale} | {r.edges:,} | {r.geometric_mean:.3g} | {r.batches} |" for r in per_scale.itertuples()]
    return "\n".join(lines + ["", f"{first['device']} ({first['backend']}), commit {first['git_commit']}, "
                                  f"batch sizes {', '.join(f'{f:g}' for f in sorted(set(table['batch_fraction'])))} |E|"])


if __name__ == "__main__":
    main()
