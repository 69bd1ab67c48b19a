"""GPU benchmark tables of issue 7: static kernel variants, the partition ablation and Kahn.

``python -m dynpr.bench --out-dir results/bench`` (or ``snakemake --cores 1 bench``) writes

- ``static_variants.csv``: Static PageRank per graph and kernel variant (``dynpr.gpu.VARIANTS``),
  median of ``--repeats`` runs, with ms per iteration, edges per second and the achieved
  bandwidth under :data:`MODEL` as a share of the device-to-device copy bandwidth measured in
  the same process;
- ``partition_ablation.csv``: every approach per partition level (seed 003 Fig. 1) for the
  baseline (``partitioned``) and the default variant, on temporal batches of a temporal graph
  and random batches of an R-MAT graph, with the L1 error against the reference and the time
  per phase (partition, marking, iterations);
- ``kahn.csv``: CPU Kahn and both GPU drivers on seed-002-style random DAGs
  (:func:`dynpr.random_dag.random_dag`), one wide and one deep.

It needs a CUDA device: without one it stops with one line saying so (the CPU engines have
their own benchmarks; a GPU table with CPU numbers in it would mislabel them).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from dynpr import APPROACHES

#: The bytes a Static iteration must move, whatever the kernel design.
MODEL = ("bytes/iteration = 8(n+1) in_offsets + 4m sources + 8m gathered contributions (one double "
         "per edge, counted as if no gather hit a cache) + 8n read R + 8n write Rnew")
# Every table also carries benchmark / dataset (= graph) / backend, the keys
# dynpr.plots.read_bench selects rows by.
STATIC_COLUMNS = ("graph", "variant", "device", "git_commit", "vertices", "edges", "iterations", "time_ms",
                  "ms_per_iteration", "edges_per_second", "bytes_per_iteration", "achieved_gbps", "copy_gbps",
                  "bandwidth_share", "model", "benchmark", "dataset", "backend")
ABLATION_COLUMNS = ("graph", "approach", "partition", "batch_fraction", "time_ms", "device", "git_commit",
                    "variant", "batch_index", "iterations", "l1_error", "affected", "partition_ms", "mark_ms",
                    "compute_ms", "benchmark", "dataset", "backend")
KAHN_COLUMNS = ("graph", "driver", "device", "git_commit", "vertices", "edges", "levels", "processed", "time_ms",
                "us_per_level", "speedup_vs_cpu", "benchmark", "dataset", "backend")
#: Graphs of ``static_variants.csv`` by default: the embedded SNAP graphs and R-MAT built on the device.
DEFAULT_GRAPHS = ("CollegeMsg", "sx-mathoverflow", "soc-Epinions1", "web-NotreDame", "rmat20-gpu", "rmat22-gpu")


def bytes_per_iteration(n: int, m: int) -> int:
    """Bytes a Static iteration over n vertices and m edges must move (see :data:`MODEL`)."""
    return 8 * (n + 1) + 12 * m + 16 * n


def static_row(graph: str, variant: str, n: int, m: int, iterations: int, time_ms: float, copy_gbps: float,
               device: str, commit: str) -> dict:
    """One ``static_variants.csv`` row from a measured run.

    Raises
    ------
    ValueError
        If the run reports no iterations or a non-positive time.
    """
    if iterations < 1 or not time_ms > 0:
        raise ValueError(f"{graph}/{variant}: iterations={iterations}, time_ms={time_ms} cannot be rated")
    seconds = time_ms * 1e-3
    per_iteration = bytes_per_iteration(n, m)
    achieved = per_iteration * iterations / seconds / 1e9
    return {"graph": graph, "variant": variant, "device": device, "git_commit": commit, "vertices": n, "edges": m,
            "iterations": iterations, "time_ms": time_ms, "ms_per_iteration": time_ms / iterations,
            "edges_per_second": m * iterations / seconds, "bytes_per_iteration": per_iteration,
            "achieved_gbps": achieved, "copy_gbps": copy_gbps, "bandwidth_share": achieved / copy_gbps,
            "model": MODEL, "benchmark": "static_comparison", "dataset": graph, "backend": "gpu"}


NO_GPU = ("bench needs a GPU: no CUDA device visible through CuPy here; run it on a GPU machine "
          "(the CPU engines are timed by benchmarks/bench_pagerank_cpu.py)")


def require_gpu() -> None:
    """Fail with one line when no CUDA device is usable.

    Raises
    ------
    RuntimeError
        With :data:`NO_GPU` as its message.
    """
    from dynpr.backend import gpu_available

    if not gpu_available():
        raise RuntimeError(NO_GPU)


def copy_gbps(nbytes: int = 1 << 30, repeats: int = 20) -> float:
    """Device-to-device copy bandwidth, bytes read plus bytes written per second / 1e9 (median)."""
    import cupy

    src = cupy.arange(nbytes // 8, dtype=cupy.float64)
    dst = cupy.empty_like(src)
    dst[...] = src  # warm-up
    start, end = cupy.cuda.Event(), cupy.cuda.Event()
    times = []
    for _ in range(repeats):
        start.record()
        dst[...] = src
        end.record()
        end.synchronize()
        times.append(cupy.cuda.get_elapsed_time(start, end) * 1e-3)
    return 2 * src.nbytes / statistics.median(times) / 1e9


def rmat_graph_gpu(scale: int, edge_factor: int = 16, seed: int = 1):
    """R-MAT graph built with CuPy (dynpr.rmat's Graph500 formulation, CuPy's random
    stream, so not the catalog's graph): ids permuted, self-loops and duplicates
    removed, a self-loop added on every vertex. Seconds on a GPU where NumPy
    needs about a minute at scale 22."""
    import cupy

    from dynpr.graph import Graph
    from dynpr.rmat import GRAPH500_ABC

    a, b, c = GRAPH500_ABC
    n, m = 1 << scale, edge_factor << scale
    rng = cupy.random.default_rng(seed)
    src = cupy.zeros(m, dtype=cupy.int64)
    dst = cupy.zeros(m, dtype=cupy.int64)
    for level in range(scale):
        row = rng.random(m, dtype=cupy.float32) >= (a + b)
        threshold = cupy.where(row, cupy.float32((1 - a - b - c) / (1 - a - b)), cupy.float32(b / (a + b)))
        col = rng.random(m, dtype=cupy.float32) < threshold
        src |= row.astype(cupy.int64) << level
        dst |= col.astype(cupy.int64) << level
    perm = cupy.argsort(rng.random(n))  # a uniform random permutation of the ids
    src, dst = perm[src], perm[dst]
    keep = src != dst
    loops = cupy.arange(n, dtype=cupy.int64)
    keys = cupy.unique(cupy.concatenate([src[keep] * n + dst[keep], loops * n + loops]))
    rows, cols = keys // n, keys % n
    transposed = cupy.sort(cols * n + rows)
    vertex = cupy.arange(n + 1, dtype=cupy.int64)
    offsets = cupy.searchsorted(rows, vertex)
    in_offsets = cupy.searchsorted(transposed // n, vertex)
    return Graph(offsets.get(), cols.astype(cupy.int32).get(), in_offsets.get(),
                 (transposed % n).astype(cupy.int32).get())


EMBEDDED = Path(__file__).resolve().parents[2] / "datasets" / "embedded"


def load_graph(name: str):
    """(graph, temporal or None) for an embedded SNAP file's name, ``rmat{S}-gpu`` (built by
    :func:`rmat_graph_gpu`) or any other catalog name (through ``dynpr.prepare.read_graph``).

    Embedded files are parsed directly and renumbered densely as ``dynpr.prepare.build_graph``
    does (vertices = distinct ids in ascending order, a self-loop on each, temporal edges in
    time order): importing ``dynpr.prepare`` loads the catalog's schema validation, which the
    GPU machines lack.
    """
    if name.startswith("rmat") and name.endswith("-gpu"):
        return rmat_graph_gpu(int(name[4:-4])), None
    embedded = EMBEDDED / f"{name}.txt.gz"
    if embedded.is_file():
        from dynpr.graph import Graph, unique_sorted
        from dynpr.io import read_edges

        edges = read_edges(embedded)
        vertex_ids = unique_sorted(np.concatenate([edges.src, edges.dst]).astype(np.int64, copy=False))
        src = np.searchsorted(vertex_ids, edges.src).astype(np.int32)
        dst = np.searchsorted(vertex_ids, edges.dst).astype(np.int32)
        temporal = None if edges.time is None else (src, dst, edges.time)
        return Graph.from_edges(src, dst, len(vertex_ids)), temporal
    from dynpr.prepare import read_graph

    return read_graph(name)


def static_variants(graphs, variants, repeats: int, device: str, commit: str, log=print) -> pd.DataFrame:
    """Static PageRank of every variant on every graph (median time of ``repeats`` runs)."""
    from dynpr.gpu import pagerank as engine
    from dynpr.pagerank.options import PageRankOptions

    bandwidth = copy_gbps()
    log(f"device-to-device copy: {bandwidth:.0f} GB/s (read + write)")
    rows = []
    for name in graphs:
        graph, _ = load_graph(name)
        n, m = graph.num_vertices, graph.num_edges
        for variant in variants:
            runs = [engine.update("static", None, graph, None, None, PageRankOptions(variant=variant))
                    for _ in range(repeats)]
            iterations = {r.iterations for r in runs}
            if len(iterations) != 1:
                raise RuntimeError(f"{name}/{variant}: iteration counts differ between runs: {sorted(iterations)}")
            row = static_row(name, variant, n, m, runs[0].iterations,
                             statistics.median(r.time_ms for r in runs), bandwidth, device, commit)
            rows.append(row)
            log(f"{name:16s} {variant:16s} it={row['iterations']:3d} {row['time_ms']:9.3f} ms "
                f"{row['ms_per_iteration'] * 1e3:8.1f} us/it {row['achieved_gbps']:7.0f} GB/s "
                f"share {row['bandwidth_share']:.2f}")
    return pd.DataFrame(rows, columns=STATIC_COLUMNS)


def _scenarios(name: str, fractions, batches: int, random_batches: int, seed: int):
    """Yield (fraction, index, old, new, batch, chained): ``batches`` temporal batches applied
    one after another for a temporal graph (``chained``), else ``random_batches`` random 80/20
    batches each applied to the full graph."""
    from dynpr.batches import apply_batch, random_batch, temporal_batches

    graph, temporal = load_graph(name)
    if temporal is not None:
        src, dst, _ = temporal
        for fraction in fractions:
            old, sequence, _ = temporal_batches(src, dst, graph.num_vertices, 0.9, fraction, batches)
            for index, batch in enumerate(sequence):
                new = apply_batch(old, batch)
                yield fraction, index, old, new, batch, True
                old = new
    else:
        rng = np.random.default_rng(seed)
        for fraction in fractions:
            for index in range(random_batches):
                batch = random_batch(graph, fraction, 0.8, rng)
                yield fraction, index, graph, apply_batch(graph, batch), batch, False


def partition_ablation(graphs, fractions, batches: int, random_batches: int, variants, device: str, commit: str,
                       seed: int = 42, log=print) -> pd.DataFrame:
    """Every approach per partition level and variant; previous ranks chain through temporal batches."""
    from dynpr.gpu import pagerank as engine
    from dynpr.pagerank import l1_error
    from dynpr.pagerank.options import PARTITIONS, PageRankOptions

    reference_options = PageRankOptions(tolerance=1e-100, max_iterations=500)
    rows = []
    for name in graphs:
        base_graph, carried = None, {}
        for fraction, index, old, new, batch, chained in _scenarios(name, fractions, batches, random_batches, seed):
            if index == 0 or not chained:
                if old is not base_graph:
                    base = engine.update("static", None, old, None, None, PageRankOptions()).ranks
                    base_graph = old
                carried = {}
            reference = engine.update("static", None, new, None, None, reference_options).ranks
            for variant in variants:
                for partition in PARTITIONS:
                    options = PageRankOptions(partition=partition, variant=variant)
                    for approach in APPROACHES:
                        key = (variant, partition, approach)
                        result = engine.update(approach, old, new, batch, carried.get(key, base), options)
                        if chained:
                            carried[key] = result.ranks
                        rows.append({"graph": name, "approach": approach, "partition": partition,
                                     "batch_fraction": fraction, "time_ms": result.time_ms, "device": device,
                                     "git_commit": commit, "variant": variant, "batch_index": index,
                                     "iterations": result.iterations,
                                     "l1_error": l1_error(result.ranks, reference), "affected": result.affected,
                                     **result.phases,
                                     "benchmark": "partition_ablation", "dataset": name, "backend": "gpu"})
        log(f"{name}: ablation rows so far {len(rows)}")
    return pd.DataFrame(rows, columns=ABLATION_COLUMNS)


def kahn_table(cases, device: str, commit: str, repeats: int = 3, log=print) -> pd.DataFrame:
    """CPU Kahn and the GPU drivers on DAGs from :func:`dynpr.random_dag.random_dag`.

    ``cases`` maps a name to ``(n, m, depth or None)``; GPU times are medians of ``repeats``.
    """
    from dynpr.random_dag import random_dag
    from dynpr.gpu.kahn import kahn as gpu_kahn
    from dynpr.kahn import kahn

    rows = []
    for name, (n, m, depth) in cases.items():
        graph = random_dag(n, m, depth=depth, seed=3)
        cpu = kahn(graph, backend="cpu")
        results = {"cpu": [cpu]}
        for driver in ("levels", "persistent"):
            results[driver] = [gpu_kahn(graph, driver=driver) for _ in range(repeats)]
        for driver, runs in results.items():
            first = runs[0]
            if (first.levels, first.processed) != (cpu.levels, cpu.processed):
                raise RuntimeError(f"{name}/{driver}: levels/processed {first.levels}/{first.processed} differ "
                                   f"from the CPU's {cpu.levels}/{cpu.processed}")
            t = statistics.median(r.time_ms for r in runs)
            rows.append({"graph": name, "driver": driver, "device": device if driver != "cpu" else cpu.device,
                         "git_commit": commit, "vertices": n, "edges": graph.num_edges, "levels": first.levels,
                         "processed": first.processed, "time_ms": t,
                         "us_per_level": t * 1e3 / max(first.levels, 1), "speedup_vs_cpu": cpu.time_ms / t,
                         "benchmark": "kahn", "dataset": name, "backend": "cpu" if driver == "cpu" else "gpu"})
            log(f"{name:12s} {driver:10s} levels={first.levels:6d} {t:10.3f} ms "
                f"{t * 1e3 / max(first.levels, 1):8.2f} us/level  x{cpu.time_ms / t:.1f} vs CPU")
    return pd.DataFrame(rows, columns=KAHN_COLUMNS)


def write_table(table: pd.DataFrame, path: Path) -> None:
    """Write a benchmark table as CSV through a temporary name (complete or absent)."""
    from dynpr.fileio import atomic_path

    with atomic_path(path) as tmp:
        table.to_csv(tmp, index=False)


def build_parser() -> argparse.ArgumentParser:
    """The command line of :func:`main` (the workflow script parses its params with it too)."""
    from dynpr.gpu import VARIANTS

    parser = argparse.ArgumentParser(prog="python -m dynpr.bench", description=__doc__.splitlines()[0])
    parser.add_argument("--out-dir", type=Path, default=Path("results/bench"))
    parser.add_argument("--tables", nargs="+", choices=("static", "ablation", "kahn"),
                        default=["static", "ablation", "kahn"])
    parser.add_argument("--graphs", nargs="+", default=list(DEFAULT_GRAPHS))
    parser.add_argument("--variants", nargs="+", choices=VARIANTS, default=list(VARIANTS))
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--ablation-graphs", nargs="+",
                        default=["sx-mathoverflow", "soc-Epinions1", "web-NotreDame", "rmat20-gpu"])
    parser.add_argument("--ablation-variants", nargs="+", choices=VARIANTS, default=["partitioned", "classes"])
    parser.add_argument("--fractions", type=float, nargs="+", default=[1e-5, 1e-4, 1e-3])
    parser.add_argument("--batches", type=int, default=20, help="temporal batches per fraction")
    parser.add_argument("--random-batches", type=int, default=3, help="random batches per fraction")
    parser.add_argument("--kahn-vertices", type=int, default=1 << 20)
    parser.add_argument("--kahn-edges", type=int, default=16 << 20)
    parser.add_argument("--kahn-depth", type=int, default=10_000)
    return parser


def main(argv=None) -> None:
    """Command line: see the module docstring."""
    args = build_parser().parse_args(argv)
    try:
        require_gpu()
    except RuntimeError as exc:
        raise SystemExit(str(exc)) from None
    run(args)


def _print(text: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {text}", flush=True)


def run(args, log=_print) -> None:
    """Write the tables ``args.tables`` (from :func:`build_parser`) under ``args.out_dir``."""
    from dynpr.backend import device_name
    from dynpr.results import git_commit

    require_gpu()
    commit = git_commit(Path(__file__).resolve().parents[2])
    device = device_name("gpu")

    log(f"{device}, commit {commit}")
    if "static" in args.tables:
        write_table(static_variants(args.graphs, args.variants, args.repeats, device, commit, log),
               args.out_dir / "static_variants.csv")
    if "kahn" in args.tables:
        cases = {"dag-random": (args.kahn_vertices, args.kahn_edges, None),
                 f"dag-depth{args.kahn_depth}": (args.kahn_vertices, args.kahn_edges, args.kahn_depth)}
        write_table(kahn_table(cases, device, commit, log=log), args.out_dir / "kahn.csv")
    if "ablation" in args.tables:
        write_table(partition_ablation(args.ablation_graphs, args.fractions, args.batches, args.random_batches,
                                  args.ablation_variants,
                                  device, commit, log=log), args.out_dir / "partition_ablation.csv")


if __name__ == "__main__":
    sys.exit(main())
