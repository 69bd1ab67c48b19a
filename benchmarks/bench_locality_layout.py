"""The segmented layout's structure on R-MAT graphs, on the host (no timing): what decides its traffic.

For each scale and segment count, in hub-first ids and in the ids as generated, the sub-rows per
vertex, the edges per sub-row (docs/locality.md: segmenting pays per sub-row), the first segment's
share of the edges and the long rows and pieces. Writes ``results/bench/locality_layout.csv`` (or
``--out``) and prints it.

    python benchmarks/bench_locality_layout.py --scales 20 22 --segments 1 2 3 6 11 21
"""

from __future__ import annotations

import argparse
import itertools
from pathlib import Path

import numpy as np
import pandas as pd

from dynpr.atomic_files import write_csv_atomic
from dynpr.bench import run_script
from dynpr.locality import ORDERS, build_layout, hub_first_ids, relabelled_in_csr
from dynpr.rmat import rmat_graph

ROOT = Path(__file__).resolve().parents[1]


def layout_rows(scale: int, segment_counts, seed: int) -> list[dict]:
    """One row per order and segment count of R-MAT ``scale`` (edge factor 16)."""
    graph = rmat_graph(scale, 16, seed=seed, backend="cpu")
    n, m = graph.num_vertices, graph.num_edges
    csr = {"hub": relabelled_in_csr(graph, hub_first_ids(graph.in_offsets)),
           "given": (graph.in_offsets, graph.sources)}
    rows = []
    for order, segments in itertools.product(ORDERS, segment_counts):
        layout = build_layout(*csr[order], -(-n // segments))
        segment_edges = np.diff(layout.row_offsets[layout.segment_rows])
        rows.append({"graph": f"rmat-{scale}", "n": n, "m": m, "order": order, "segments": layout.segments,
                     "sub_rows_per_vertex": layout.rows.size / n, "edges_per_sub_row": m / layout.rows.size,
                     "first_segment_edge_share": segment_edges[0] / m, "long_rows": int(layout.long_rows.size),
                     "pieces": int(layout.piece_row.size)})
    return rows


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scales", type=int, nargs="+", default=[20])
    parser.add_argument("--segments", type=int, nargs="+", default=[1, 2, 3, 6, 11, 21])
    parser.add_argument("--seed", type=int, default=1, help="R-MAT seed (the catalog's rmat-S use 1)")
    parser.add_argument("--out", type=Path, default=ROOT / "results" / "bench" / "locality_layout.csv")
    args = parser.parse_args(argv)
    table = pd.DataFrame([row for scale in args.scales for row in layout_rows(scale, args.segments, args.seed)])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_csv_atomic(table, args.out)
    print(table.to_string(index=False, float_format=lambda x: f"{x:.3g}"))


if __name__ == "__main__":
    raise SystemExit(run_script(main))
