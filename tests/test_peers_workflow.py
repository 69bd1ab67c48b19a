"""Peers through the pipeline on a machine without a GPU: a `peers` section naming a stand-in for Gunrock's
`pr` (tests/peers/standin.py, which prints what `pr` prints) puts rule peers, the peers_static figure and a
measured 5.2-gunrock claim into `snakemake results/claims.csv --configfile config.yaml PEERS.yaml`; a broken
program, or one that runs past `peers.timeout_s`, fails that job in one line and leaves no table."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
STANDIN = REPO / "tests" / "peers" / "standin.py"

pytestmark = pytest.mark.skipif(shutil.which("snakemake") is None and not (Path(sys.executable).parent / "snakemake").exists(),
                                reason="snakemake is not installed")


def snakemake(workdir: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    exe = shutil.which("snakemake") or str(Path(sys.executable).parent / "snakemake")
    return subprocess.run([exe, "--cores", "1", *args], cwd=workdir, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "MPLBACKEND": "Agg", **(env or {})})


@pytest.fixture(scope="module")
def workflow(tmp_path_factory):
    wd = tmp_path_factory.mktemp("peers")
    shutil.copy(REPO / "Snakefile", wd)
    shutil.copytree(REPO / "workflow", wd / "workflow")
    (wd / "datasets" / "embedded").mkdir(parents=True)
    shutil.copy(REPO / "datasets" / "catalog.yaml", wd / "datasets")
    shutil.copy(REPO / "datasets" / "embedded" / "CollegeMsg.txt.gz", wd / "datasets" / "embedded")
    config = yaml.safe_load((REPO / "config.yaml").read_text())  # the main job's, on one small graph
    config.update(datasets=["CollegeMsg"], repeat=1)
    config["temporal"].update(batch_fractions=[1e-3], num_batches=2)
    (wd / "config.yaml").write_text(yaml.safe_dump(config))
    shutil.copy2(STANDIN, wd / "pr-metrics")  # as Gunrock built with metrics collection: it counts iterations
    gunrock = {"program": str(STANDIN), "iterations_program": str(wd / "pr-metrics")}
    (wd / "PEERS.yaml").write_text(yaml.safe_dump({"peers": {"gunrock": gunrock,
                                                             "libraries": ["scipy", "cusparse", "torch"]}}))
    proc = snakemake(wd, "results/claims.csv", "figures/peers_static.png", "--configfile", "config.yaml",
                     "PEERS.yaml")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return wd


def test_gunrock_claim_is_measured_through_the_pipeline(workflow):
    peers = pd.read_csv(workflow / "results" / "peers" / "CollegeMsg.csv")
    assert {"dynpr", "scipy", "gunrock"} <= set(peers["peer"]) and "cusparse" not in set(peers["peer"])
    gunrock = peers[peers["peer"] == "gunrock"]
    assert len(gunrock) == 1 and (gunrock["time_ms"] > 0).all() and (gunrock["iterations"] >= 1).all()
    assert gunrock["settings"].str.contains("iterations counted by iterations_program sha256:").all()
    claims = pd.read_csv(workflow / "results" / "claims.csv").set_index("claim_id")
    row = claims.loc["5.2-gunrock"]
    assert row["measured"] > 0 and row["graphs"] == "CollegeMsg"
    assert row["verdict"] == "not comparable" and row["backend"] == "cpu"  # dynpr ran on the CPU here
    assert claims.loc["5.2-hornet", "verdict"] == "not measured"
    assert (workflow / "figures" / "peers_static.png").stat().st_size > 1000
    log = (workflow / "results" / "logs" / "peers" / "CollegeMsg.log").read_text()
    assert "GPU Elapsed Time" in log and "cusparse: skipped" in log
    assert (workflow / "results" / "benchmarks" / "peers_CollegeMsg.tsv").exists()


def test_a_broken_program_fails_the_job_in_one_line_and_keeps_no_table(workflow):
    broken = workflow / "pr"
    broken.write_text("#!/bin/sh\necho 'terminate called: cudaErrorNoDevice' >&2\nexit 134\n")
    broken.chmod(0o755)
    (workflow / "BROKEN.yaml").write_text(yaml.safe_dump({"peers": {"gunrock": {"program": str(broken)}}}))
    proc = snakemake(workflow, "results/peers/CollegeMsg.csv", "--configfile", "config.yaml", "BROKEN.yaml")
    assert proc.returncode != 0
    lines = [line for line in proc.stderr.splitlines() if line.startswith("dynpr: peers")]
    assert lines == [f"dynpr: peers for CollegeMsg: PeerError: peer gunrock ({broken}) on CollegeMsg: exited with "
                     "status 134: terminate called: cudaErrorNoDevice"], proc.stderr[-3000:]
    assert not (workflow / "results" / "peers" / "CollegeMsg.csv").exists()
    folder = workflow / "results" / "peers"  # Snakemake removes it when the failed job's output was all it held
    assert not folder.exists() or not [p for p in folder.iterdir() if p.name.startswith(".")]


def test_a_program_that_never_stops_fails_the_job_at_the_limit_and_keeps_no_table(workflow):
    (workflow / "HANG.yaml").write_text(yaml.safe_dump({"peers": {"gunrock": {"program": str(STANDIN)},
                                                                  "libraries": [], "timeout_s": 2}}))
    proc = snakemake(workflow, "results/peers/CollegeMsg.csv", "--configfile", "config.yaml", "HANG.yaml",
                     env={"DYNPR_STANDIN_HANG": "1"})
    assert proc.returncode != 0
    lines = [line for line in proc.stderr.splitlines() if line.startswith("dynpr: peers")]
    assert lines == [f"dynpr: peers for CollegeMsg: PeerError: peer gunrock ({STANDIN}) on CollegeMsg: did not finish "
                     "within peers.timeout_s = 2 s and was killed"], proc.stderr[-3000:]
    assert not (workflow / "results" / "peers" / "CollegeMsg.csv").exists()
    folder = workflow / "results" / "peers"
    assert not folder.exists() or not [p for p in folder.iterdir() if p.name.startswith(".")]


def test_without_a_peers_section_no_peers_job_is_planned(workflow):
    proc = snakemake(workflow, "--dry-run", "--forceall", "results/claims.csv")
    assert proc.returncode == 0 and "rule peers:" not in proc.stdout, proc.stdout[-2000:]
