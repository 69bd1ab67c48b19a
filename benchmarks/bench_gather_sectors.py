"""Do a vertex order's gathers share sectors? R-MAT on the host, no timing (docs/locality.md).

A warp that pulls 32 consecutive in-edges gathers 32 contributions; each distinct 32-byte sector
among them is one L2 (or DRAM) transaction. For each order of the in-CSR (ids as generated,
hub-first, reverse Cuthill-McKee of the symmetrised graph, communities by label propagation:
:func:`dynpr.locality.community_labels`) this counts the mean distinct sectors
per 32 consecutive in-edges, for float64 and float32 contributions: 32 means no sharing, 4 (8 for
float32) means every sector fully used. Prepared graphs (``--graphs``, e.g. a SNAP graph's
``results/graphs/*.npz``, a SNAP file or a catalog name) show what the count reads where ids carry locality. Writes
``results/bench/gather_sectors.csv`` (or ``--out``).

    python benchmarks/bench_gather_sectors.py --scales 20 22 --graphs results/graphs/web-NotreDame.npz
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp
from scipy.sparse.csgraph import reverse_cuthill_mckee

from dynpr.atomic_files import write_csv_atomic
from dynpr.bench import run_script
from dynpr.graph import Graph
from dynpr.prepare import read_graph_with_ids
from dynpr.locality import community_ids, community_labels, hub_first_ids, relabelled_in_csr
from dynpr.results import git_commit
from dynpr.rmat import rmat_graph

ROOT = Path(__file__).resolve().parents[1]
LANES, SECTOR_BYTES = 32, 32


def sectors_per_warp(sources: np.ndarray, value_bytes: int) -> float:
    """Mean distinct sectors among each aligned group of :data:`LANES` consecutive entries."""
    whole = sources.size - sources.size % LANES
    sectors = np.sort((sources[:whole] // (SECTOR_BYTES // value_bytes)).reshape(-1, LANES), axis=1)
    return float(1 + (np.diff(sectors, axis=1) != 0).sum(axis=1).mean())


def rcm_ids(in_offsets: np.ndarray, sources: np.ndarray) -> np.ndarray:
    """New id of every vertex in reverse Cuthill-McKee order of the graph made symmetric."""
    n = in_offsets.size - 1
    pattern = sp.csr_matrix((np.ones(sources.size, dtype=np.int8), sources, in_offsets), shape=(n, n))
    order = reverse_cuthill_mckee((pattern + pattern.T).tocsr(), symmetric_mode=True)
    new_id = np.empty(n, dtype=np.int32)
    new_id[order] = np.arange(n, dtype=np.int32)
    return new_id


def order_rows(name: str, graph: Graph) -> list[dict]:
    """One row per order of ``graph``."""
    seconds = {}

    def timed(name, order, *arrays):
        started = time.perf_counter()
        new_id = order(*arrays)
        seconds[name] = time.perf_counter() - started
        return new_id

    labels = timed("community", community_labels, graph.in_offsets, graph.sources)
    communities = np.bincount(labels, minlength=graph.num_vertices)
    orders = {"given": None, "hub": hub_first_ids(graph.in_offsets),
              "rcm": timed("rcm", rcm_ids, graph.in_offsets, graph.sources),
              "community": community_ids(graph.in_offsets, labels)}
    rows = []
    for order, new_id in orders.items():
        sources = graph.sources if new_id is None else relabelled_in_csr(graph, new_id)[1]
        rows.append({"graph": name, "n": graph.num_vertices, "m": graph.num_edges, "order": order,
                     "sectors_per_32_float64": sectors_per_warp(sources, 8),
                     "sectors_per_32_float32": sectors_per_warp(sources, 4),
                     "order_seconds": seconds.get(order, np.nan),
                     "communities": int(np.count_nonzero(communities)) if order == "community" else np.nan,
                     "largest_community_share": communities.max() / graph.num_vertices if order == "community"
                     else np.nan,
                     "host": f"{os.cpu_count()}-core", "git_commit": git_commit(ROOT)})
    return rows


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scales", type=int, nargs="+", default=[20])
    parser.add_argument("--seed", type=int, default=1, help="R-MAT seed (the catalog's rmat-S use 1)")
    parser.add_argument("--graphs", nargs="*", default=[],
                        help="graphs as dynpr reads them: a file (edge list, .mtx, prepared .npz) or a catalog name")
    parser.add_argument("--out", type=Path, default=ROOT / "results" / "bench" / "gather_sectors.csv")
    args = parser.parse_args(argv)
    graphs = [(f"rmat-{scale}", lambda scale=scale: rmat_graph(scale, 16, seed=args.seed, backend="cpu"))
              for scale in args.scales]
    graphs += [(Path(path).name.split(".")[0], lambda path=path: read_graph_with_ids(path)[0]) for path in args.graphs]
    table = pd.DataFrame([row for name, make in graphs for row in order_rows(name, make())])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_csv_atomic(table, args.out)
    print(table.to_string(index=False, float_format=lambda x: f"{x:.3g}"))


if __name__ == "__main__":
    raise SystemExit(run_script(main))
