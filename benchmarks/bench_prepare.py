"""Benchmark preparing graphs: parse (or generate) + dedup + CSR/transpose + stats + write.

Targets on the 2-core dev machine: web-NotreDame (1.5M edges) < 15 s, R-MAT scale 20
(16M edges drawn) < 30 s. Each run writes to a temporary folder; one row per
(graph, repeat) goes to ``results/bench/prepare.csv`` with the phase times.

Usage: ``python benchmarks/bench_prepare.py [--graphs web-NotreDame rmat-20] [--repeat 1]``
"""

from __future__ import annotations

import argparse
import logging
import tempfile
import time
from pathlib import Path

import pandas as pd

from dynpr.backend import device_name
from dynpr.graph.atomic_files import write_csv_atomic
from dynpr.io.catalog import get_dataset
from dynpr.io.prepare import prepare
from dynpr.evaluation.results import git_commit, timestamp

ROOT = Path(__file__).resolve().parents[1]  # benchmarks run in a checkout: results/ and its commit
TARGET_S = {"web-NotreDame": 15.0, "rmat-20": 30.0}


class _PhaseTimes(logging.Handler):
    """Collects prepare's phase timings from its log lines ("... in X s")."""

    def __init__(self):
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record):
        self.lines.append(record.getMessage())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graphs", nargs="+", default=["web-NotreDame", "rmat-20"])
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--out", default=str(ROOT / "results" / "bench" / "prepare.csv"))
    args = parser.parse_args()
    phases = _PhaseTimes()
    logger = logging.getLogger("dynpr.io.prepare")
    logger.addHandler(phases)
    logger.setLevel(logging.INFO)
    rows = []
    for name in args.graphs:
        ds = get_dataset(name)
        for rep in range(args.repeat):
            phases.lines.clear()
            with tempfile.TemporaryDirectory() as tmp:
                t0 = time.perf_counter()
                stats = prepare(ds, Path(tmp) / "g.npz", Path(tmp) / "g.json")
                seconds = time.perf_counter() - t0
            # "read ... in X s" and "built ... in X s" for files; one "generated ... in X s" for R-MAT
            timed = [float(line.rsplit(" in ", 1)[1].split()[0]) for line in phases.lines
                     if " in " in line and line.endswith(" s")]
            read_s, build_s = (timed + [float("nan")])[:2]
            target = TARGET_S.get(name)
            rows.append({
                "graph": name, "repeat": rep, "seconds": round(seconds, 3), "read_s": read_s, "build_s": build_s,
                "input_records": stats["input_records"], "vertices": stats["vertices"], "edges": stats["edges"],
                "edges_with_self_loops": stats["edges_with_self_loops"], "target_s": target,
                "meets_target": None if target is None else seconds < target,
                "device": device_name("cpu"), "git_commit": git_commit(ROOT),
                "timestamp": timestamp(),
            })
            print(f"{name} #{rep}: {seconds:.2f} s (read {read_s:.2f} s, build {build_s:.2f} s), "
                  f"{stats['input_records']:,} records -> {stats['edges_with_self_loops']:,} edges"
                  + ("" if target is None else f"; target < {target:.0f} s"))
    out = Path(args.out)
    write_csv_atomic(pd.DataFrame(rows), out)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
