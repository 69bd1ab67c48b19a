"""Snakemake profiles under workflow/profiles: they parse, plan jobs with their resources, and
several GPU jobs on one host run at once on distinct (fake) devices."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
PROFILES = ROOT / "workflow" / "profiles"
SNAKEMAKE = [sys.executable, "-m", "snakemake"]
HAVE_SLURM_PLUGIN = importlib.util.find_spec("snakemake_executor_plugin_slurm") is not None
GPU_RULES = ("run_experiment", "bench")


def load_profile(name: str) -> dict:
    return yaml.safe_load((PROFILES / name / "config.yaml").read_text())


def planned_jobs(dry_run_output: str) -> list[tuple[str, dict[str, str]]]:
    """(rule, resources) of every job in `snakemake -n` output."""
    jobs: list[tuple[str, dict[str, str]]] = []
    for line in dry_run_output.splitlines():
        rule = re.match(r"^(?:local)?rule (\w+):$", line)
        if rule:
            jobs.append((rule.group(1), {}))
        res = re.match(r"^\s+resources: (.*)$", line)
        if res and jobs:
            jobs[-1][1].update(item.split("=", 1) for item in res.group(1).split(", "))
    return jobs


def run_snakemake(args: list[str], cwd: Path, env: dict | None = None, timeout: int = 240) -> str:
    done = subprocess.run(
        SNAKEMAKE + args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert done.returncode == 0, f"snakemake {' '.join(args)} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout + done.stderr


# A stand-in for the workflow with the real rule names, so the profiles are checked even
# while the workflow's own rule files change. The run step claims a device like the real run
# script and records (device, start, end) so the test can check who ran where and when.
TOY_SNAKEFILE = textwrap.dedent(
    """
    DATASETS = ["a", "b", "c", "d"]

    rule all:
        input: expand("results/runs/{d}.csv", d=DATASETS)

    rule download:
        output: "raw/{d}.txt"
        shell: "echo {wildcards.d} > {output}"

    rule prepare:
        input: "raw/{d}.txt"
        output: "results/graphs/{d}.npz"
        shell: "cp {input} {output}"

    rule run_experiment:
        input: "results/graphs/{d}.npz"
        output: "results/runs/{d}.csv"
        resources: gpu=1
        shell: "{PYTHON} worker.py {output}"
    """
)

TOY_WORKER = textwrap.dedent(
    """
    import sys, time
    from dynpr.pipeline.device_claims import claim_device

    with claim_device(timeout=60, poll_interval=0.05) as dev:
        start = time.time()
        time.sleep(1.5)
        end = time.time()
    with open(sys.argv[1], "w") as f:
        f.write(f"{dev},{start},{end}\\n")
    """
)


@pytest.fixture
def toy(tmp_path):
    (tmp_path / "Snakefile").write_text(f"PYTHON = {sys.executable!r}\n" + TOY_SNAKEFILE)
    (tmp_path / "worker.py").write_text(TOY_WORKER)
    return tmp_path


def test_profiles_parse_with_expected_keys():
    slurm = load_profile("slurm")
    assert slurm["executor"] == "slurm"
    assert isinstance(slurm["jobs"], int) and slurm["jobs"] > 0
    assert {"slurm_partition", "runtime", "mem_mb"} <= set(slurm["default-resources"])
    per_rule = slurm["set-resources"]
    assert {"download", "prepare", "run_experiment"} <= set(per_rule)
    for rule in GPU_RULES:
        assert per_rule[rule]["gpu"] == 1
        # The plugin refuses gpu together with a gres GPU request.
        assert "gpu" not in str(per_rule[rule].get("gres", ""))
        assert {"runtime", "mem_mb"} <= set(per_rule[rule])

    local = load_profile("local-gpus")
    assert local["cores"] >= 1
    assert local["resources"]["gpu"] >= 2
    assert all(local["set-resources"][rule]["gpu"] == 1 for rule in GPU_RULES)


@pytest.mark.skipif(not HAVE_SLURM_PLUGIN, reason="snakemake-executor-plugin-slurm not installed (pip install -e '.[slurm]')")
def test_slurm_profile_dry_run_plans_resources(toy):
    out = run_snakemake(["-n", "--profile", str(PROFILES / "slurm")], cwd=toy)
    jobs = planned_jobs(out)
    by_rule = {}
    for rule, res in jobs:
        by_rule.setdefault(rule, []).append(res)
    assert len(by_rule["run_experiment"]) == 4
    for res in by_rule["run_experiment"]:
        assert (res["gpu"], res["slurm_partition"], res["runtime"], res["mem_mb"]) == ("1", "gpu", "240", "64000")
    for res in by_rule["prepare"]:
        assert res["mem_mb"] == "64000" and "gpu" not in res
    for res in by_rule["download"]:
        assert res["slurm_partition"] == "cpu" and res["runtime"] == "120"


def test_local_gpus_profile_runs_two_jobs_at_once_on_distinct_devices(toy):
    env = dict(os.environ, DYNPR_DEVICES="0,1", DYNPR_LOCK_DIR=str(toy / "locks"))
    env.pop("CUDA_VISIBLE_DEVICES", None)
    env.pop("SLURM_JOB_ID", None)
    run_snakemake(["--profile", str(PROFILES / "local-gpus"), "--cores", "4"], cwd=toy, env=env)

    runs = []
    for path in sorted((toy / "results" / "runs").glob("*.csv")):
        dev, start, end = path.read_text().strip().split(",")
        runs.append((dev, float(start), float(end)))
    assert len(runs) == 4
    assert {dev for dev, _, _ in runs} == {"0", "1"}
    overlaps = [
        (a, b) for i, a in enumerate(runs) for b in runs[i + 1:] if a[1] < b[2] and b[1] < a[2]
    ]
    # Concurrency happened, never on one device, and never more than gpu=2 jobs at once.
    assert overlaps, f"no two GPU jobs ran at the same time: {runs}"
    assert all(a[0] != b[0] for a, b in overlaps), f"two jobs shared a device: {overlaps}"
    for t in sorted(start for _, start, _ in runs):
        assert sum(s <= t < e for _, s, e in runs) <= 2


def test_workflow_dry_run_gives_every_gpu_job_one_gpu():
    profile = "slurm" if HAVE_SLURM_PLUGIN else "local-gpus"
    # --forceall plans every job even where results already exist.
    out = run_snakemake(["-n", "--forceall", "--profile", str(PROFILES / profile), "figures"], cwd=ROOT)
    jobs = planned_jobs(out)
    runs = [res for rule, res in jobs if rule == "run_experiment"]
    config = yaml.safe_load((ROOT / "config.yaml").read_text())
    assert len(runs) == len(config["datasets"])
    assert all(res.get("gpu") == "1" for res in runs), runs
    # Only GPU rules hold a GPU slot.
    others = [(rule, res) for rule, res in jobs if rule not in GPU_RULES]
    assert others and all(res.get("gpu", "0") == "0" for _, res in others)
    # The benchmark tables (a separate target) take one GPU too.
    bench = planned_jobs(run_snakemake(["-n", "--forceall", "--profile", str(PROFILES / profile), "bench"], cwd=ROOT))
    assert [res.get("gpu") for rule, res in bench if rule == "bench"] == ["1"], bench


def test_scale_dry_run_declares_the_memory_of_every_graph_holding_job():
    """`snakemake -n` on config/scale.yaml: every job holding a graph states mem_mb from the model
    (dynpr.pipeline.footprint), the GPU runs their device plan as gpu_mem_mb, all from the catalog alone."""
    from dynpr.io.catalog import get_dataset
    from dynpr.pipeline.footprint import job_bytes, mem_mb

    # rmat-27-ef28 as the README's H200 command adds it (--config datasets=[...])
    out = run_snakemake(["-n", "--forceall", "figures", "--configfile", "config/scale.yaml", "--config",
                         "datasets=[rmat-24,rmat-25,rmat-26,rmat-26-ef32,rmat-28-ef3,rmat-27-ef28]"], cwd=ROOT)
    jobs = [(rule, res) for rule, res in planned_jobs(out)
            if rule in ("prepare", "random_batches", "temporal_base", "temporal_batches", "run_experiment")]
    assert {rule for rule, _ in jobs} >= {"prepare", "random_batches", "run_experiment"}
    assert all("mem_mb" in res for _, res in jobs)
    runs = []
    for block in re.split(r"^(?=(?:local)?rule \w+:$)", out, flags=re.M):
        if re.match(r"(?:local)?rule run_experiment:", block):
            dataset = re.search(r"wildcards: dataset=(\S+)", block)[1]
            resources = dict(item.split("=", 1) for item in re.search(r"resources: (.*)", block)[1].split(", "))
            runs.append((dataset, resources))
    assert len(runs) == 6
    for dataset, res in runs:
        assert int(res["mem_mb"]) == mem_mb(job_bytes("run_experiment", get_dataset(dataset), fraction=0.1, gpu=True))
        assert int(res["gpu_mem_mb"]) > int(res["mem_mb"])  # the graph, a batch and the run's buffers
    # the device plan against the prepared graph (tests/test_memory.py holds the ratios; here the
    # declaration the scheduler sees): one graph on the device, batches applied in place
    declared = {dataset: int(res["gpu_mem_mb"]) for dataset, res in runs}
    assert declared["rmat-26"] < 2.65 * 10.2e3 and declared["rmat-27-ef28"] < 87_000


def test_a_cpu_run_at_paper_scale_says_how_long_when_planned():
    out = run_snakemake(["-n", "figures", "--configfile", "config/scale.yaml", "--config", "backend=cpu"], cwd=ROOT)
    line = next(line for line in out.splitlines() if line.startswith("dynpr: on the CPU engine"))
    assert "rmat-26-ef32 (" in line and " h)" in line and "GPU backend" in line
    assert "dynpr: on the CPU engine" not in run_snakemake(["-n", "figures"], cwd=ROOT)  # the embedded graphs
