"""Where a pipeline run's wall time went, from its jobs' logs (issue 45; docs/pipeline_time.md).

Every workflow job ends its log with ``<rule> for <target>: wall time T s: <phase> t, ...`` (and
``(GPU kernel builds t s of it)`` when it built CUDA modules; dynpr.pipeline.jobs.JobLog). This
sums those lines per rule and prints a Markdown table: jobs, wall seconds and each phase's seconds,
then the total. Give ``--snakemake-s`` the run's own wall time (``/usr/bin/time`` of the snakemake
command) for a last row with Snakemake's own share: start, DAG and the time between jobs.

Usage: ``python benchmarks/pipeline_time.py results/logs [--snakemake-s 233]``. The logs of one
run only: a job rerun later overwrites nothing (logs are appended to), so start from an empty
``results/logs`` or use ``--forceall`` on a fresh folder.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import defaultdict
from pathlib import Path

LINE = re.compile(r"^(?P<rule>\w+) for (?P<target>.+?): wall time (?P<wall>[\d.]+) s: (?P<phases>.*?)"
                  r"(?: \(GPU kernel builds (?P<builds>[\d.]+) s of it\))?$")
#: Table columns in order; a phase no job booked is left out.
PHASES = ("start and imports", "load and checks", "work", "writing", "other", "GPU kernel builds")


def job_times(logs: Path) -> list[dict]:
    """One dict per job log under ``logs`` with a wall-time line: rule, target, wall and phase seconds
    (the last such line of a log, the latest run of that job)."""
    jobs = []
    for path in sorted(logs.rglob("*.log")):
        matches = [m for m in map(LINE.match, path.read_text(errors="replace").splitlines()) if m]
        if not matches:
            continue
        m = matches[-1]
        phases = {name.strip(): float(seconds) for name, seconds in
                  (part.rsplit(" ", 1) for part in m["phases"].split(", "))}
        if m["builds"]:
            phases["GPU kernel builds"] = float(m["builds"])
        jobs.append({"rule": m["rule"], "target": m["target"], "wall": float(m["wall"]), **phases})
    return jobs


def table(jobs: list[dict], snakemake_s: float | None = None) -> str:
    """A Markdown table of ``jobs`` summed per rule (slowest first), a total, and with ``snakemake_s``
    Snakemake's own share (its wall time less the jobs')."""
    per_rule: dict[str, dict] = defaultdict(lambda: defaultdict(float))
    for job in jobs:
        row = per_rule[job["rule"]]
        row["jobs"] += 1
        for key, value in job.items():
            if key not in ("rule", "target"):
                row[key] += value
    phases = [p for p in PHASES if any(p in job for job in jobs)]
    lines = ["| rule | jobs | wall s | " + " | ".join(f"{p} s" for p in phases) + " |",
             "|---" * (3 + len(phases)) + "|"]
    for rule, row in sorted(per_rule.items(), key=lambda item: -item[1]["wall"]):
        lines.append(f"| {rule} | {row['jobs']:.0f} | {row['wall']:.1f} | "
                     + " | ".join(f"{row.get(p, 0.0):.1f}" for p in phases) + " |")
    total = sum(job["wall"] for job in jobs)
    lines.append(f"| all jobs | {len(jobs)} | {total:.1f} | "
                 + " | ".join(f"{sum(job.get(p, 0.0) for job in jobs):.1f}" for p in phases) + " |")
    if snakemake_s is not None:
        lines.append(f"| Snakemake itself (start, DAG, between jobs) | | {snakemake_s - total:.1f} |"
                     + " |" * len(phases))
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("logs", type=Path, help="a run's results/logs folder")
    parser.add_argument("--snakemake-s", type=float, help="the snakemake command's wall seconds")
    args = parser.parse_args(argv)
    jobs = job_times(args.logs)
    if not jobs:
        print(f"pipeline_time.py: error: no job log under {args.logs} ends with a wall-time line", file=sys.stderr)
        return 2
    print(table(jobs, args.snakemake_s))
    return 0


if __name__ == "__main__":
    sys.exit(main())
