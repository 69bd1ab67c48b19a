"""The memory model (dynpr.footprint) against every peak the pipeline measured at scale.

Reads the committed Snakemake benchmark rows (``docs/measurements/scale_pipeline*/*.tsv``: job,
machine, commit, then Snakemake's columns) and prints, per job, max_rss, the model's declaration
for the same job and their ratio, flagging ratios outside 0.75-1.25 (issue 31's bound). The model
is what ``snakemake -n`` declares as ``mem_mb`` on the host that ran the job (its cores, from the
``machine`` column, set how many chunks a graph check holds); it uses the catalog's counts only.

    python benchmarks/footprint_vs_measured.py [TSV ...]
"""

from __future__ import annotations

import argparse
import csv
import re
from pathlib import Path

from dynpr import footprint
from dynpr.catalog import get_dataset
from dynpr.footprint import job_bytes

ROOT = Path(__file__).resolve().parents[1]
#: the largest batch's share of the edges, for run_experiment (config/scale.yaml's fractions)
LARGEST_FRACTION = 0.1
BOUND = (0.75, 1.25)


def rule_of(job: str) -> tuple[str, str, float]:
    """(rule, dataset, fraction) of a benchmark file's name, e.g. ``random_batches_rmat-26_0.1``."""
    if job.startswith("prepare_"):
        return "prepare", job.removeprefix("prepare_"), 0.0
    if job.startswith("random_batches_"):
        dataset, fraction = job.removeprefix("random_batches_").rsplit("_", 1)
        return "random_batches", dataset, float(fraction)
    if job.startswith("run_"):
        return "run_experiment", job.removeprefix("run_"), LARGEST_FRACTION
    raise ValueError(f"no rule for benchmark {job!r}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tsv", nargs="*", type=Path,
                        default=sorted((ROOT / "docs" / "measurements").glob("scale_pipeline*/*.tsv")))
    args = parser.parse_args()
    catalog = ROOT / "datasets" / "catalog.yaml"
    outside = total = 0
    for path in args.tsv:
        for row in csv.DictReader(path.open(), delimiter="\t"):
            rule, dataset, fraction = rule_of(row["job"])
            cores = re.search(r"(\d+)-core", row["machine"])
            footprint.CHECK_CHUNKS_AT_PEAK = min(8, int(cores.group(1))) if cores else footprint.CHECK_CHUNKS_AT_PEAK
            model = job_bytes(rule, get_dataset(dataset, catalog), fraction=fraction, gpu=True) / 2**20
            measured = float(row["max_rss_mib"])
            ratio = model / measured
            flag = "" if BOUND[0] <= ratio <= BOUND[1] else "  outside"
            outside += bool(flag)
            total += 1
            print(f"{path.parent.name}/{path.name} {row['commit']} {row['job']:36s} measured {measured:8.0f} MiB "
                  f"model {model:8.0f} MiB  {ratio:.2f}{flag}")
    print(f"{outside} of {total} jobs outside {BOUND[0]}-{BOUND[1]}")


if __name__ == "__main__":
    main()
