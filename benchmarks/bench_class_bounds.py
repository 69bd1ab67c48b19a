"""Time the default GPU variant's degree-class bounds (thread / 8 lanes / warp / block) on a few graphs.

Static PageRank through ``dynpr.gpu.pagerank.run_classes`` with the default's lanes and other
in-degree bounds (no relabelling); median of ``--repeats`` runs. Writes ``results/bench/class_bounds.csv`` (or
``--out``) with device and git commit, and prints ms per iteration per graph and bounds.

    PYTHONPATH=src python benchmarks/bench_class_bounds.py --graphs sx-mathoverflow rmat-22
"""

from __future__ import annotations

import argparse
import statistics
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from dynpr.backend import device_name
from dynpr.graph.atomic_files import write_csv_atomic
from dynpr.evaluation.bench import require_gpu, run_script
from dynpr.designs import VARIANTS
from dynpr.gpu import pagerank as engine
from dynpr.gpu.device_graph import to_device
from dynpr.pagerank.options import PageRankOptions
from dynpr.io.prepare import read_graph
from dynpr.evaluation.results import git_commit

ROOT = Path(__file__).resolve().parents[1]  # benchmarks run in a checkout: results/ and its commit

CANDIDATES = ((4, 32, 512), (8, 64, 512), (8, 64, 1024), (16, 128, 1024), (16, 128, 4096), (32, 256, 4096),
              (64, 512, 8192), (128, 1024, 16384))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graphs", nargs="+", default=["sx-mathoverflow", "web-NotreDame", "rmat-20", "rmat-22"],
                        help="catalog names (prepared results/graphs/{name}.npz when present) or graph files")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", type=Path, default=Path("results/bench/class_bounds.csv"))
    args = parser.parse_args(argv)
    require_gpu()
    commit = git_commit(ROOT)
    options = PageRankOptions()
    engine._update("static", None, read_graph("CollegeMsg")[0], None, None, options)  # compiles and warms up
    design = replace(VARIANTS["classes"], relabel=False)
    rows = []
    for name in args.graphs:
        graph, _ = read_graph(name)
        g = to_device(graph)
        start = np.full(graph.num_vertices, 1.0 / graph.num_vertices)
        for bounds in CANDIDATES:
            runs = [engine.run_classes("static", g, None, start, options, design, bounds)
                    for _ in range(args.repeats)]
            iterations = runs[0].iterations
            ms = statistics.median(sum(r.phases.values()) for r in runs)
            rows.append({"graph": name, "bounds": "/".join(map(str, bounds)), "iterations": iterations,
                         "time_ms": ms, "ms_per_iteration": ms / iterations, "device": device_name("gpu"),
                         "git_commit": commit})
            print(f"{name:16s} {rows[-1]['bounds']:14s} it={iterations} {ms:8.3f} ms "
                  f"{1e3 * ms / iterations:8.1f} us/it", flush=True)
    write_csv_atomic(pd.DataFrame(rows), args.out)


if __name__ == "__main__":
    raise SystemExit(run_script(main))
