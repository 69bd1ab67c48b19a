"""The gather wall: how fast can one contribution per edge be gathered, from where (issue 35).

Every pull design gathers one contribution per in-edge at a scattered address; docs/locality.md
asks what rate the H100 allows for that, and whether a hub set held in shared memory beats it.
Two parts, in one GPU process, each a pass of :func:`dynpr.bench.gather_total` (ids streamed,
one gather per id, no per-vertex work):

- ``uniform``: ``--edges`` ids drawn uniformly from the first W contributions, for each W of
  ``--working-sets`` (from one that fits an SM's L1 to one that only DRAM holds), float64 and float32
  contributions: the rate of scattered gathers from each level of the memory hierarchy;
- ``rmat-S`` for each of ``--scales`` (the catalog's R-MAT graph, seed 1, generated on the GPU), its
  in-edges' sources renamed hub-first as the default engine relabels them (order ``hub``), float64
  and float32: ``plain`` with the default's block and with ``--hot-block`` threads, and ``hot``: each
  block first copies the most gathered sources (as many as a block's shared memory holds) into shared
  memory and gathers those there; ``hot_share`` is the share of gathers they serve. ``--orders``
  adds ``community``: the in-CSR relabelled, rows and sources, in the community order of
  :func:`dynpr.locality.community_ids` (label propagation, found on the GPU; ``order_ms``), the
  same three passes.

Columns: ``gathers_per_ns`` (ids per nanosecond of the pass) and ``sector_tb_s`` (32-byte sectors
at one per gather, TB/s). Times are medians of ``--repeats`` passes after a warm-up one (CUDA
events). Writes ``results/bench/gather_wall.csv`` (or ``--out``).

    python benchmarks/bench_gather_wall.py --scales 22 25 26
    python benchmarks/bench_gather_wall.py --scales 22 --working-sets --orders hub community
"""

from __future__ import annotations

import argparse
import gc
import time
from pathlib import Path

import pandas as pd

from dynpr.atomic_files import write_csv_atomic
from dynpr.backend import device_name
from dynpr.bench import gather_total, hub_first_sources, max_hot, require_gpu, run_script
from dynpr.designs import BLOCK
from dynpr.locality import community_ids, community_labels, relabelled_in_csr
from dynpr.results import git_commit
from dynpr.rmat import rmat_graph

ROOT = Path(__file__).resolve().parents[1]
DTYPES = ("float64", "float32")
SECTOR_BYTES = 32
COLUMNS = ("device", "git_commit", "source", "order", "order_ms", "communities", "largest_community_share", "n", "m",
           "dtype", "design", "block", "hot", "hot_share",
           "working_set_bytes", "time_ms", "gathers_per_ns", "sector_tb_s")


def pass_row(ids, n: int, dtype: str, design: str, block: int, repeats: int, hot: int = 0) -> dict:
    """One timed pass over ``ids`` into n contributions of ``dtype``."""
    import cupy

    contributions = cupy.full(n, 1.0 / n, dtype=dtype)
    total, ms = gather_total(ids, contributions, hot=hot, block=block, repeats=repeats)
    m = int(ids.size)
    if abs(total - m / n) > 1e-6 * m / n:  # every gathered value is 1/n (float32: rounded alike)
        raise RuntimeError(f"gather pass summed {total}, expected {m / n}")
    share = float(cupy.count_nonzero(ids < hot)) / m if hot else 0.0
    return {"n": n, "m": m, "dtype": dtype, "design": design, "block": block, "hot": hot, "hot_share": share,
            "working_set_bytes": n * contributions.dtype.itemsize, "time_ms": ms, "gathers_per_ns": m / ms / 1e6,
            "sector_tb_s": m * SECTOR_BYTES / ms / 1e9}


def uniform_rows(working_sets, edges: int, repeats: int, log=print) -> list[dict]:
    """Scattered gathers from the first W contributions, for each W."""
    import cupy

    rows = []
    for n in working_sets:
        ids = cupy.random.RandomState(1).randint(0, n, size=edges, dtype=cupy.int32)
        for dtype in DTYPES:
            rows.append({"source": "uniform", **pass_row(ids, n, dtype, "plain", BLOCK, repeats)})
            log(f"uniform over {n} {dtype}: {rows[-1]['gathers_per_ns']:.1f} gathers/ns")
        del ids
    return rows


def ordered_sources(graph, order: str) -> tuple[object, dict]:
    """The ids one pass streams for ``order`` and what finding the order took: ``hub``, the sources
    renamed hub-first in the given rows; ``community``, the in-CSR relabelled in community order."""
    import cupy

    if order == "hub":
        return hub_first_sources(graph.in_offsets, graph.sources), {}
    cupy.cuda.Device().synchronize()
    started = time.perf_counter()
    labels = community_labels(graph.in_offsets, graph.sources)
    new_id = community_ids(graph.in_offsets, labels)
    cupy.cuda.Device().synchronize()
    ms = (time.perf_counter() - started) * 1e3
    sizes = cupy.bincount(labels, minlength=graph.num_vertices)
    found = {"order_ms": ms, "communities": int(cupy.count_nonzero(sizes)),
             "largest_community_share": int(sizes.max()) / graph.num_vertices}
    return relabelled_in_csr(graph, new_id)[1], found


def rmat_rows(scale: int, orders, hot_block: int, repeats: int, log=print) -> list[dict]:
    """Plain and hot-set passes over one R-MAT graph's in-edges in each of ``orders``."""
    graph = rmat_graph(scale, 16, seed=1, resident=True)
    n = graph.num_vertices
    rows = []
    for order in orders:
        ids, found = ordered_sources(graph, order)
        for dtype in DTYPES:
            passes = [("plain", BLOCK, 0), ("plain", hot_block, 0), ("hot", hot_block, min(n, max_hot(dtype)))]
            for design, block, hot in passes:
                rows.append({"source": f"rmat-{scale}", "order": order, **found,
                             **pass_row(ids, n, dtype, design, block, repeats, hot)})
                log(f"rmat-{scale} {order} {dtype} {design} block {block}: {rows[-1]['time_ms']:.3f} ms "
                    f"(hot share {rows[-1]['hot_share']:.3f})")
        del ids
        gc.collect()
    return rows


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scales", type=int, nargs="*", default=[22])
    parser.add_argument("--working-sets", type=int, nargs="*",
                        default=[1 << 14, 1 << 18, 1 << 21, 1 << 22, 1 << 23, 1 << 26],
                        help="contributions the uniform ids are drawn from")
    parser.add_argument("--edges", type=int, default=1 << 27, help="ids per uniform pass")
    parser.add_argument("--orders", nargs="+", choices=["hub", "community"], default=["hub"],
                        help="orders of the R-MAT graphs' in-edges, passes for each")
    parser.add_argument("--hot-block", type=int, default=1024, help="threads per block of the hot-set pass")
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--out", type=Path, default=ROOT / "results" / "bench" / "gather_wall.csv")
    args = parser.parse_args(argv)
    require_gpu()
    common = {"device": device_name("gpu"), "git_commit": git_commit(ROOT)}
    print(f"{common['device']}, commit {common['git_commit']}", flush=True)
    log = lambda line: print(line, flush=True)  # noqa: E731
    rows = uniform_rows(args.working_sets, args.edges, args.repeats, log)
    for scale in args.scales:
        rows += rmat_rows(scale, args.orders, args.hot_block, args.repeats, log)
    table = pd.DataFrame([{**common, **row} for row in rows], columns=COLUMNS)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_csv_atomic(table, args.out)
    print(f"\n{args.out}")
    print(table.drop(columns=["device", "git_commit"]).to_string(index=False, float_format=lambda x: f"{x:.4g}"))


if __name__ == "__main__":
    raise SystemExit(run_script(main))
