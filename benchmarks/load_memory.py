"""Host memory of each step of loading a prepared graph the way a GPU run job does, sampled every 10 ms.

A Snakemake benchmark row gives one max_rss per job; this names the step that sets it: the check of
each CSR side, the hash, the upload to the device, and ``Graph.load`` as a whole, each with its peak
resident set split into mapped file pages and the process's own memory.

    python benchmarks/load_memory.py [results/graphs/rmat-25.npz] [--workers 8]
"""

from __future__ import annotations

import argparse
import threading
import time
from pathlib import Path

import numpy as np

from dynpr.evaluation.bench import require_gpu, run_script
from dynpr.graph.hostmem import status_gib


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("graph", type=Path, nargs="?", default=Path("results/graphs/rmat-25.npz"),
                        help="a prepared graph (default: the pipeline's rmat-25)")
    parser.add_argument("--workers", type=int, help="checking threads (default: the library's)")
    args = parser.parse_args()
    require_gpu()
    import cupy

    cupy.zeros(1)  # a CUDA context first, as the run job has one
    import dynpr.graph.csr_checks as checks
    from dynpr.gpu.resident import to_resident
    from dynpr.graph.graph import Graph
    from dynpr.graph.npz_files import read_npz

    if args.workers:
        checks._WORKERS = args.workers
    step, peaks = ["start"], {}

    def sample():
        while step[0] != "end":
            now = status_gib()
            if now["VmRSS"] > peaks.get(step[0], {"VmRSS": 0.0})["VmRSS"]:
                peaks[step[0]] = now
            time.sleep(0.01)

    threading.Thread(target=sample, daemon=True).start()
    data = read_npz(args.graph, "graph file (.npz)")
    n = len(data["offsets"]) - 1
    for name, offsets, ids, transposed in (("check out-CSR", "offsets", "targets", False),
                                           ("check in-CSR", "in_offsets", "sources", True)):
        step[0] = name
        checks._check_csr(name, np.asarray(data[offsets]), np.asarray(data[ids]), n, transposed=transposed)
    step[0] = "sha256"
    graph = Graph(*(data[k] for k in ("offsets", "targets", "in_offsets", "sources")))
    graph.sha256
    step[0] = "upload"
    to_resident(graph)
    step[0] = "Graph.load, all steps"
    Graph.load(args.graph)
    time.sleep(0.05)
    step[0] = "end"
    time.sleep(0.05)
    print(f"{args.graph}, {checks._WORKERS} checking threads; peak resident set per step (GiB):")
    for name, peak in peaks.items():
        print(f"  {name:22s} {peak['VmRSS']:6.2f} (files {peak['RssFile']:.2f}, own {peak['RssAnon']:.2f})")


if __name__ == "__main__":
    raise SystemExit(run_script(main))
