"""Static with CSR segmenting and float32 contributions against the default, in one GPU process (issue 35).

For each scale the catalog's R-MAT graph (edge factor 16, seed 1 unless ``--seed``; generated on
the GPU where it comes from the counter stream, kept resident) is run with

- ``classes``: the default engine (its hub-first relabelling is in ``time_ms``, and is its ``partition_ms``);
- each of ``--variants`` (``classes_c32`` by default: the default storing float32 contributions);
  these and the default also run ND and DF on a random batch of ``--fraction`` of the edges, from the
  default's Static ranks (rows by ``approach``; ``ms_per_iteration``: time per full-graph iteration);
- ``gather_only``: :func:`dynpr.bench.gather_ms`, one pass that only sums ``C[u]`` over every
  in-edge, ids hub-first (``time_ms`` is one pass, ``ms_per_iteration`` the same);
- ``segmented``: :mod:`dynpr.gpu.locality` for each ``--shares`` (a segment's contributions
  take that share of the device's L2) and ``--orders`` (``hub``: the default's hub-first ids,
  ``given``: the ids as generated); the layout is built once per graph (``layout_ms``, not in
  ``time_ms``, whose ``partition_ms`` maps the starting ranks into the layout's ids);
- ``blocking_c32`` and ``blocking_c64``: :mod:`dynpr.gpu.blocking` storing float32 or float64
  contributions (``--blocking``) for each of ``--bin-widths``, the layout built once per graph
  (``layout_ms``); ``expand_ms`` and ``accumulate_ms`` time each kernel of an iteration alone;
- ``shards_c32`` and ``shards_c64``: :mod:`dynpr.gpu.shards` (CuSha's G-Shards) storing float32 or
  float64 contributions (``--shards``) for each of ``--shard-widths``, built once per graph (``layout_ms``).

``--graph-orders given community`` runs all of these a second time on the graph relabelled once in
community order (:func:`dynpr.locality.community_ids`, label propagation on the GPU;
``graph_order_ms``), as a locality order done in ``prepare`` would hand it to the engines (the
default's own hub-first relabelling, a stable sort by in-degree, then keeps that order among
vertices of equal in-degree).

Each of ``--datasets`` (catalog graphs read as ``benchmarks/bench_gpu.py`` reads them, kept on the
host) gets the default's and ``--variants``' rows alone: the graphs of the bench that must not get
slower.

Times are medians of ``--repeats`` runs after one warm-up run (their least and greatest in
``time_ms_min`` and ``time_ms_max``), from CUDA events (the engines' phases). Every run is checked
against the float64 reference of its graph (Static at tau = 1e-100, at most 500 iterations, going
on from the default's Static run): ``l1_ratio`` is its L1 error over the default's for the same
approach, ``iterations_delta`` its iterations minus the default's (issue 35 asks for 0 or 1 and an L1
within 1%). Writes ``results/bench/locality.csv`` (or ``--out``) and prints a table last.

    python benchmarks/bench_locality.py                       # scales 22 and 25, two SNAP graphs
    python benchmarks/bench_locality.py --scales 22 25 26 --shares 0.25 0.5 1 --orders hub given
    python benchmarks/bench_locality.py --scales 22 25 --shares    # no segmented rows
"""

from __future__ import annotations

import argparse
import functools
import gc
import itertools
import statistics
import time
from pathlib import Path

import numpy as np
import pandas as pd

from dynpr.atomic_files import write_csv_atomic
from dynpr.backend import device_name
from dynpr.batches import apply_batch, random_batch
from dynpr.bench import gather_ms, require_gpu, run_script
from dynpr.blocking import blocking_device_bytes
from dynpr.designs import VARIANTS
from dynpr.locality import (ORDERS, SHORT_EDGES, community_ids, community_labels, layout_device_bytes,
                            relabelled_graph)
from dynpr.pagerank import l1_error, reference, static, update
from dynpr.pagerank.options import PageRankOptions
from dynpr.prepare import read_graph_with_ids
from dynpr.results import git_commit
from dynpr.rmat import rmat_graph
from dynpr.shards import sharded_device_bytes

ROOT = Path(__file__).resolve().parents[1]
COLUMNS = ("device", "git_commit", "graph", "graph_order", "graph_order_ms", "n", "m", "variant", "approach",
           "batch_fraction", "order", "l2_share", "short_edges", "segment_width", "segments", "sub_rows",
           "edges_per_sub_row", "bin_width", "tile_edges", "bins", "tiles", "shard_width", "shards", "expand_ms",
           "accumulate_ms", "layout_ms", "time_ms", "time_ms_min", "time_ms_max", "repeats", "partition_ms",
           "ms_per_iteration", "speedup_vs_default", "iterations", "iterations_delta", "converged",
           "l1_vs_reference", "l1_ratio", "l1_vs_default", "peak_pool_bytes", "layout_bytes_model")


def timed_runs(run, repeats: int):
    """One warm-up call of ``run``, then ``repeats`` timed ones: their times (median ``time_ms``, its
    spread ``time_ms_min`` and ``time_ms_max``, ``repeats``, median ``partition_ms``) and the last result."""
    run()
    results = [run() for _ in range(repeats)]
    iterations = {r.iterations for r in results}
    if len(iterations) != 1:
        raise RuntimeError(f"iteration counts differ between repeats: {sorted(iterations)}")
    times = [r.time_ms for r in results]
    return {"time_ms": statistics.median(times), "time_ms_min": min(times), "time_ms_max": max(times),
            "repeats": repeats,
            "partition_ms": statistics.median(r.phases["partition_ms"] for r in results)}, results[-1]


def engine_rows(graph, base: dict, args, pool, log=print):
    """The default's rows and each of ``args.variants``' on ``graph``: Static, then ND and DF on a
    random batch from the default's Static ranks; returns them, the default's Static result and the
    graph's (float64) reference."""
    options = PageRankOptions()
    old_static = static(graph, options, backend="gpu")
    batch = random_batch(graph, args.fraction, 0.8, np.random.default_rng(args.seed))
    new = apply_batch(graph, batch)
    references = {False: reference(graph, options, backend="gpu", static_result=old_static),
                  True: reference(new, options, backend="gpu", static_result=static(new, options, backend="gpu"))}
    rows, default, default_static = [], {}, None
    for variant, approach in itertools.product(["classes", *args.variants], ("static", "nd", "df")):
        variant_options = PageRankOptions(variant=variant)
        dynamic = approach != "static"

        def run():
            if dynamic:
                return update(approach, graph, new, batch, old_static.ranks, variant_options, backend="gpu")
            return static(graph, variant_options, backend="gpu")

        pool.reset()
        times, result = timed_runs(run, args.repeats)
        ms = times["time_ms"]
        ref = references[dynamic]
        l1 = l1_error(result.ranks, ref)
        first = default.setdefault(approach, (ms, result, l1))
        rows.append({**base, "variant": variant, "approach": approach,
                     "batch_fraction": args.fraction if dynamic else float("nan"), **times,
                     "ms_per_iteration": ms / result.iterations,
                     "speedup_vs_default": first[0] / ms, "iterations": result.iterations,
                     "iterations_delta": result.iterations - first[1].iterations, "converged": result.converged,
                     "l1_vs_reference": l1, "l1_ratio": l1 / first[2] if first[2] else float("nan"),
                     "l1_vs_default": l1_error(result.ranks, first[1].ranks), "peak_pool_bytes": pool.peak})
        log(f"{base['graph']} {variant} {approach}: {ms:.3f} ms, {result.iterations} iterations, "
            f"L1 {l1:.3e} ({rows[-1]['l1_ratio']:.4f} x the default's)")
        if approach == "static" and variant == "classes":
            default_static = result
        del result
    return rows, default_static, references[False]


def bench_dataset(name: str, args, pool, common: dict, log=print) -> list[dict]:
    """The engine rows of one catalog graph (on the host, as the pipeline runs it)."""
    graph, _, _ = read_graph_with_ids(name, results=ROOT / "results" / "graphs")
    log(f"{name}: {graph.num_vertices} vertices, {graph.num_edges} edges (self-loops included)")
    rows, _, _ = engine_rows(graph, {**common, "graph": name, "n": graph.num_vertices, "m": graph.num_edges}, args,
                             pool, log)
    return rows


def layout_row(base: dict, against: tuple, variant: str, layout_ms: float, run, repeats: int, pool, log,
               **columns) -> dict:
    """Static on a prepared layout (``run()``), timed, against the default's Static: ``against`` is its
    (time_ms, result, L1 to the reference) and the reference."""
    default_ms, default, default_l1, ref = against
    times, result = timed_runs(run, repeats)
    ms = times["time_ms"]
    l1 = l1_error(result.ranks, ref)
    row = {**base, "variant": variant, "approach": "static", **columns, "layout_ms": layout_ms, **times,
           "ms_per_iteration": ms / result.iterations,
           "speedup_vs_default": default_ms / ms, "iterations": result.iterations,
           "iterations_delta": result.iterations - default.iterations, "converged": result.converged,
           "l1_vs_reference": l1, "l1_ratio": l1 / default_l1 if default_l1 else float("nan"),
           "l1_vs_default": l1_error(result.ranks, default.ranks), "peak_pool_bytes": pool.peak}
    log(f"{base['graph']} {variant}: layout {layout_ms:.1f} ms, Static {ms:.2f} ms, {result.iterations} iterations "
        f"({row['iterations_delta']:+d}), L1 ratio {row['l1_ratio']:.4f}")
    return row


def bench_graph(scale: int, args, pool, common: dict, log=print) -> list[dict]:
    """Every row of one R-MAT scale, for each of ``--graph-orders``."""
    import cupy

    name = f"rmat-{scale}"
    graph = rmat_graph(scale, 16, seed=args.seed, resident=True)
    log(f"{name}: {graph.num_vertices} vertices, {graph.num_edges} edges (self-loops included)")
    rows = []
    for graph_order in args.graph_orders:
        ordered, found = ordered_graph(graph, graph_order, log)
        rows += bench_ordered(ordered, {**common, "graph": name, **found}, args, pool, log)
        del ordered
        gc.collect()
        cupy.get_default_memory_pool().free_all_blocks()
    return rows


def ordered_graph(graph, graph_order: str, log=print):
    """``graph`` in ``graph_order`` and the columns that say so (with the order's wall time)."""
    import cupy

    if graph_order == "given":
        return graph, {"graph_order": graph_order}
    cupy.cuda.Device().synchronize()
    started = time.perf_counter()
    labels = community_labels(graph.in_offsets, graph.sources)
    ordered = relabelled_graph(graph, community_ids(graph.in_offsets, labels))
    cupy.cuda.Device().synchronize()
    ms = (time.perf_counter() - started) * 1e3
    log(f"community order and the relabelled graph: {ms:.0f} ms")
    return ordered, {"graph_order": graph_order, "graph_order_ms": ms}


def bench_ordered(graph, common: dict, args, pool, log=print) -> list[dict]:
    """Every row of one graph in one order."""
    import cupy

    from dynpr.gpu import blocking, locality, shards

    n, m = graph.num_vertices, graph.num_edges
    base = {**common, "n": n, "m": m}
    rows, default, ref = engine_rows(graph, base, args, pool, log)
    default_ms, default_l1 = rows[0]["time_ms"], rows[0]["l1_vs_reference"]

    pool.reset()
    gather = gather_ms(graph.in_offsets, graph.sources, args.repeats)
    rows.append({**base, "variant": "gather_only", "approach": "gather", "time_ms": gather, "ms_per_iteration": gather,
                 "peak_pool_bytes": pool.peak})

    against = (default_ms, default, default_l1, ref)
    for order, short_edges, share in itertools.product(args.orders, args.short_edges, args.shares):
        pool.reset()
        dl = locality.prepare(graph, l2_share=share, order=order, short_edges=short_edges)
        rows.append(layout_row(base, against, "segmented", dl.layout_ms,
                               functools.partial(locality.pagerank, "static", graph, layout=dl), args.repeats, pool, log,
                               order=order, l2_share=share, short_edges=short_edges, segment_width=dl.layout.width,
                               segments=dl.segments, sub_rows=dl.sub_rows, edges_per_sub_row=m / dl.sub_rows,
                               layout_bytes_model=layout_device_bytes(n, m, dl.segments, dl.sub_rows, short_edges)))
        del dl
        gc.collect()
    for dtype, bin_width in itertools.product(args.blocking, args.bin_widths):
        pool.reset()
        db = blocking.prepare(graph, dtype=dtype, bin_width=bin_width)
        lay = db.layout
        phases = blocking.BlockedLoop(db, PageRankOptions()).phase_ms(args.repeats)
        rows.append(layout_row(base, against, f"blocking_{'c32' if dtype == 'float32' else 'c64'}", db.layout_ms,
                               functools.partial(blocking.pagerank, "static", graph, layout=db), args.repeats, pool,
                               log, **phases, bin_width=lay.bin_width,
                               tile_edges=lay.tile_edges, bins=lay.bins, tiles=lay.tiles,
                               layout_bytes_model=blocking_device_bytes(n, m, lay.bin_width, lay.tile_edges, dtype)))
        del db, lay
        gc.collect()
    for dtype, width in itertools.product(args.shards, args.shard_widths):
        pool.reset()
        ds = shards.prepare(graph, dtype=dtype, width=width)
        lay = ds.layout
        rows.append(layout_row(base, against, f"shards_{'c32' if dtype == 'float32' else 'c64'}", ds.layout_ms,
                               functools.partial(shards.pagerank, "static", graph, layout=ds), args.repeats, pool,
                               log, shard_width=lay.width, shards=lay.shards,
                               layout_bytes_model=sharded_device_bytes(n, m, lay.width, dtype)))
        del ds, lay
        gc.collect()
    del graph, default, ref, against
    gc.collect()
    cupy.get_default_memory_pool().free_all_blocks()
    return rows


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scales", type=int, nargs="+", default=[22, 25])
    parser.add_argument("--shares", type=float, nargs="*", default=[0.25, 0.5, 1.0],
                        help="share of the L2 one segment's contributions take (none: no segmented rows)")
    parser.add_argument("--variants", nargs="*", choices=[v for v, d in VARIANTS.items() if d.fused],
                        default=["classes_c32"], help="the default engine's variants run beside it")
    parser.add_argument("--fraction", type=float, default=1e-4, help="ND and DF's random batch, a share of |E|")
    parser.add_argument("--datasets", nargs="*", default=["web-NotreDame", "sx-mathoverflow"],
                        help="catalog graphs run with the default and --variants alone")
    parser.add_argument("--orders", nargs="+", choices=ORDERS, default=["hub"])
    parser.add_argument("--graph-orders", nargs="+", choices=["given", "community"], default=["given"],
                        help="the R-MAT graphs as generated, or relabelled once in community order "
                             "(dynpr.locality.community_ids) before all their rows, or both")
    parser.add_argument("--short-edges", type=int, nargs="+", default=[SHORT_EDGES],
                        help="sub-rows of more edges are summed by a warp per piece, shorter ones by a thread")
    parser.add_argument("--blocking", nargs="*", choices=["float32", "float64"], default=["float32", "float64"],
                        help="propagation blocking's stored contributions, a row each (none: no such rows)")
    parser.add_argument("--bin-widths", type=int, nargs="+", default=[None],
                        help="propagation blocking's destinations per bin, a row each (default: by the graph's "
                             "size, dynpr.blocking.bin_width_for)")
    parser.add_argument("--shards", nargs="*", choices=["float32", "float64"], default=["float32", "float64"],
                        help="G-Shards' stored contributions, a row each (none: no such rows)")
    parser.add_argument("--shard-widths", type=int, nargs="+", default=[None],
                        help="G-Shards' vertices per shard, a row each (default: as propagation blocking's bins)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1, help="R-MAT seed (the catalog's rmat-S use 1)")
    parser.add_argument("--out", type=Path, default=ROOT / "results" / "bench" / "locality.csv")
    args = parser.parse_args(argv)
    require_gpu()
    from dynpr.gpu.memory import PoolPeak

    pool = PoolPeak()
    common = {"device": device_name("gpu"), "git_commit": git_commit(ROOT)}
    print(f"{common['device']}, commit {common['git_commit']}", flush=True)
    rows = []
    benches = [(bench_dataset, name) for name in args.datasets] + [(bench_graph, scale) for scale in args.scales]
    for bench, graph in benches:
        rows += bench(graph, args, pool, common, log=lambda line: print(line, flush=True))
        args.out.parent.mkdir(parents=True, exist_ok=True)
        table = pd.DataFrame(rows, columns=COLUMNS)
        write_csv_atomic(table, args.out)  # after every graph: a later one running out of time keeps these
    shown = table[["graph", "graph_order", "variant", "approach", "order", "l2_share", "segments", "edges_per_sub_row",
                   "bin_width", "shard_width", "expand_ms", "accumulate_ms", "layout_ms",
                   "time_ms", "ms_per_iteration", "speedup_vs_default", "iterations_delta", "l1_ratio",
                   "peak_pool_bytes"]].copy()
    shown["peak_pool_gib"] = shown.pop("peak_pool_bytes") / 2**30
    print(f"\n{args.out}")
    print(shown.to_string(index=False, float_format=lambda x: f"{x:.4g}"))


if __name__ == "__main__":
    raise SystemExit(run_script(main))
