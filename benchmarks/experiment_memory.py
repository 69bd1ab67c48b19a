"""The run jobs' device memory against their plan, and two trees' Static and DF-P times side by side.

Reads what the pipeline recorded: each ``results/logs/run/{dataset}.log`` (per batch, the GPU pool's
peak by phase and the plan's peak, :class:`dynpr.gpu.memory.PoolPeak`) and ``results/runs/{dataset}.csv``.

    python benchmarks/experiment_memory.py NEW_RESULTS [--old OLD_RESULTS] [--datasets rmat-24 rmat-26]

prints per dataset and batch the pool's peak of each phase, the largest, the plan and peak / plan
(the plan must bound the peak: at most 1.0, and at least 0.95 to be within 5%); with ``--old``, the
median Static and DF-P ms per fraction of both trees, their ratio, and whether iterations and L1
errors are identical.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pandas as pd

_BATCH = re.compile(r"(?P<dataset>\S+) fraction=(?P<fraction>\S+) batch (?P<batch>\d+)/\d+: .*GPU pool peak "
                    r"(?P<peak>[\d.]+) GiB \(by phase: (?P<phases>[^)]*)\).*; plan (?P<plan>[\d.]+) GiB")


def pool_rows(log_text: str) -> list[dict]:
    """One row per batch line of a run log: dataset, fraction, batch, each phase's peak, peak, plan (GiB)."""
    rows = []
    for match in _BATCH.finditer(log_text):
        phases = dict(item.rsplit(" ", 1) for item in match["phases"].split(", "))
        rows.append({"dataset": match["dataset"], "fraction": match["fraction"], "batch": int(match["batch"]),
                     **{name: float(gib) for name, gib in phases.items()},
                     "peak": float(match["peak"]), "plan": float(match["plan"]),
                     "peak/plan": float(match["peak"]) / float(match["plan"])})
    return rows


def times(results: Path, dataset: str) -> pd.DataFrame:
    """Median ms, iterations and L1 error of Static and DF-P per fraction in a tree's run CSV."""
    df = pd.read_csv(results / "runs" / f"{dataset}.csv")
    df = df[df.approach.isin(["static", "dfp"])]
    return df.groupby(["approach", "batch_fraction"]).agg(
        ms=("time_ms", "median"), iterations=("iterations", "first"), l1=("l1_error", "first"))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", type=Path, help="the new tree's results/ folder")
    parser.add_argument("--old", type=Path, help="the old tree's results/ folder, for Static and DF-P times")
    parser.add_argument("--datasets", nargs="+", default=["rmat-24", "rmat-26"])
    args = parser.parse_args(argv)
    pd.set_option("display.width", 200)
    for dataset in args.datasets:
        log = args.results / "logs" / "run" / f"{dataset}.log"
        pool = pd.DataFrame(pool_rows(log.read_text()))
        print(f"== {dataset}: GPU pool peak by phase (GiB) against the plan ({log})")
        print(pool.to_string(index=False) if len(pool) else "no batch lines with a plan in the log")
        if args.old:
            new, old = times(args.results, dataset), times(args.old, dataset)
            both = new.join(old, lsuffix="_new", rsuffix="_old")
            both["new/old"] = both["ms_new"] / both["ms_old"]
            both["identical"] = (both.iterations_new == both.iterations_old) & (both.l1_new == both.l1_old)
            print(f"== {dataset}: Static and DF-P, median ms, new against old")
            print(both[["ms_old", "ms_new", "new/old", "iterations_new", "identical"]].to_string())


if __name__ == "__main__":
    main()
