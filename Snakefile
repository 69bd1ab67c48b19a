# dynpr: the evaluation of "Efficient GPU Implementation of Static and Incrementally Expanding
# DF-P PageRank for Dynamic Graphs" (Sahu 2024) from public graph data to figures.
# `snakemake --cores 1 figures` is the main job; see README.md and docs/config.md.

import os
import sys

from snakemake.utils import min_version

min_version("9.0")


# This process runs the checkout's code (src/) too, also where dynpr is installed without -e:
# the code the rules track (plots, claims) is then the code the jobs run.
if os.path.isdir(os.path.join(workflow.basedir, "src", "dynpr")):
    sys.path.insert(0, os.path.join(workflow.basedir, "src"))

if os.path.isfile("config.yaml"):  # Snakemake's own parse error names neither the file nor the line
    from dynpr.graph.validate import load_yaml

    load_yaml("config.yaml", "config")


configfile: "config.yaml"


# Jobs import dynpr from this checkout, also inside the per-rule conda environments
# (--use-conda; workflow/envs/*.yaml hold its dependencies, not dynpr itself).
os.environ.update(
    PYTHONPATH=os.pathsep.join(p for p in (os.path.join(workflow.basedir, "src"), os.environ.get("PYTHONPATH")) if p)
)


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/datasets.smk"
include: "workflow/rules/batches.smk"
include: "workflow/rules/experiments.smk"
include: "workflow/rules/figures.smk"
include: "workflow/rules/bench.smk"
include: "workflow/rules/peers.smk"


# Said when the plan is made (dry runs too): hours of CPU work are a choice to make knowingly.
if _slow := slow_cpu_runs():
    print(
        f"dynpr: on the CPU engine these experiments take at least {', '.join(_slow)} (one Static solve "
        "costs ~1.4 ns per edge and iteration there); the GPU backend runs them in minutes (docs/scaling.md)",
        file=sys.stderr,
    )


# Cheap rules run in the main Snakemake process, never as cluster jobs; download too,
# since cluster nodes often have no internet access.
localrules:
    figures,
    compare_backends,
    all_batches,
    summary,
    claims,
    plot_summary,
    plot_bench,
    plot_temporal_per_batch,
    plot_peers,
    all_peers,
    download,


# Timed jobs (the experiment runs, the benchmarks) take the one unit of `timing`: none of them
# shares the CPU or a device with another. `--resources timing=K` lifts that knowingly.
if "timing" not in workflow.global_resources:
    workflow.register_resource("timing", 1)


onstart:
    # GPU-only work of this run: the config's, or rule bench asked for by name (`snakemake bench` with
    # backend: auto); refused here, after the DAG and before any job (no graph built for nothing)
    _gpu_work = GPU_WORK or (
        "rule bench" if any(j.rule.name == "bench" for j in workflow.dag.needrun_jobs()) else ""
    )
    if _gpu_work:
        from dynpr.pipeline.jobs import gpu_machine_missing

        if missing := gpu_machine_missing(_gpu_work):
            print(missing, file=sys.stderr)
            raise SystemExit(1)
    if SKIPPED_FIGURES:
        print(f"dynpr: figures skipped: {SKIPPED_FIGURES}", file=sys.stderr)


rule figures:
    default_target: True
    input:
        default_targets(),
