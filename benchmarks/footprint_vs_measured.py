"""The memory model (dynpr.pipeline.footprint) against every peak the pipeline measured at scale.

Reads the committed Snakemake benchmark rows (``docs/measurements/scale/pipeline_509db18*/*.tsv``: job,
machine, commit, then Snakemake's columns) and prints, per job, its peak, the model's declaration
for the same job and their ratio, flagging ratios outside 0.75-1.25 (issue 31's bound). The peak is
``peak_rss_mib`` where the row has it (the exact high-water mark the job's log ends with), else
Snakemake's max_rss, which samples every 30 s after the first 15 s and can miss a later peak. The model
is what ``snakemake -n`` declares as ``mem_mb`` on the host that ran the job (its cores, from the
``machine`` column, set how many chunks a graph check holds); it uses the catalog's counts only.

    python benchmarks/footprint_vs_measured.py [TSV ...]   # default: the runs with exact peaks
"""

from __future__ import annotations

import argparse
import csv
import re
from pathlib import Path

from dynpr.pipeline import footprint
from dynpr.io.catalog import get_dataset
from dynpr.pipeline.footprint import job_bytes

ROOT = Path(__file__).resolve().parents[1]
#: the largest batch's share of the edges, for run_experiment (config/scale.yaml's fractions)
LARGEST_FRACTION = 0.1
BOUND = (0.75, 1.25)


def rule_of(job: str) -> tuple[str, str, float] | None:
    """(rule, dataset, fraction) of a benchmark file's name, e.g. ``random_batches_rmat-26_0.1`` (a job per
    fraction, before issue 45) or ``random_batches_rmat-26`` (a job of every fraction, modelled at the
    largest); None for a job of several datasets (``bench``, modelled by :func:`dynpr.pipeline.footprint.bench_bytes`)."""
    for rule in ("random_batches", "temporal_batches"):
        if job.startswith(rule + "_"):
            dataset, _, fraction = job.removeprefix(rule + "_").rpartition("_")
            try:
                return rule, dataset, float(fraction)
            except ValueError:
                return rule, job.removeprefix(rule + "_"), LARGEST_FRACTION
    for prefix, rule in (("prepare_", "prepare"), ("temporal_base_", "temporal_base")):
        if job.startswith(prefix):
            return rule, job.removeprefix(prefix), 0.0
    if job.startswith("run_"):
        return "run_experiment", job.removeprefix("run_"), LARGEST_FRACTION
    if job == "bench":
        return None
    raise ValueError(f"no rule for benchmark {job!r}")


def model_and_peak(path: Path) -> list[tuple[dict, float, float]]:
    """(row, model MiB, measured MiB) of each job of a TSV that has a per-dataset model: the model
    for the host that ran it (its cores, from the ``machine`` column, set the checking threads)."""
    catalog = ROOT / "datasets" / "catalog.yaml"
    out = []
    for row in csv.DictReader(path.open(), delimiter="\t"):
        if (rule_fraction := rule_of(row["job"])) is None:
            continue
        rule, dataset, fraction = rule_fraction
        cores = re.search(r"(\d+)-core", row["machine"])
        saved = footprint.CHECK_CHUNKS_AT_PEAK
        footprint.CHECK_CHUNKS_AT_PEAK = min(8, int(cores.group(1))) if cores else saved
        try:
            model = job_bytes(rule, get_dataset(dataset, catalog), fraction=fraction, gpu=True) / 2**20
        finally:
            footprint.CHECK_CHUNKS_AT_PEAK = saved
        out.append((row, model, float(row.get("peak_rss_mib") or row["max_rss_mib"])))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tsv", nargs="*", type=Path, help="default: the runs whose rows hold exact peaks")
    args = parser.parse_args()
    if not args.tsv:
        args.tsv = [path for path in sorted((ROOT / "docs" / "measurements").glob("scale_pipeline*/*.tsv"))
                    if "peak_rss_mib" in path.open().readline().split("\t")]
    outside = total = 0
    for path in args.tsv:
        for row, model, measured in model_and_peak(path):
            ratio = model / measured
            flag = "" if BOUND[0] <= ratio <= BOUND[1] else "  outside"
            outside += bool(flag)
            total += 1
            print(f"{path.parent.name}/{path.name} {row['commit']} {row['job']:36s} measured {measured:8.0f} MiB "
                  f"model {model:8.0f} MiB  {ratio:.2f}{flag}")
    print(f"{outside} of {total} jobs outside {BOUND[0]}-{BOUND[1]}")


if __name__ == "__main__":
    main()
