"""dynpr.pipeline.device_claims: per-device locks give concurrent jobs distinct GPUs (fake device list, CPU only)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from dynpr.pipeline import device_claims as devices

# A worker process: claims a device, reports it on stdout, then holds it until
# the release file appears (or is killed). Lines: "CLAIMED <id> <CUDA_VISIBLE_DEVICES>".
WORKER = textwrap.dedent(
    """
    import os, sys, time
    from pathlib import Path
    from dynpr.pipeline.device_claims import claim_device

    release = Path(sys.argv[1])
    with claim_device(timeout=float(sys.argv[2]), poll_interval=0.05) as dev:
        print("CLAIMED", dev, os.environ["CUDA_VISIBLE_DEVICES"], flush=True)
        while not release.exists():
            time.sleep(0.02)
    print("RELEASED", dev, flush=True)
    """
)


@pytest.fixture
def fake_env(tmp_path, monkeypatch):
    """Environment with two fake devices and a private lock dir, for this process and children."""
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    monkeypatch.setenv("DYNPR_DEVICES", "0,1")
    monkeypatch.setenv("DYNPR_LOCK_DIR", str(tmp_path / "locks"))
    return dict(os.environ)


def start_worker(env: dict, tmp_path: Path, name: str, timeout: float = 30.0):
    release = tmp_path / f"release-{name}"
    proc = subprocess.Popen(
        [sys.executable, "-c", WORKER, str(release), str(timeout)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    return proc, release


def read_claim(proc: subprocess.Popen) -> tuple[str, str]:
    line = proc.stdout.readline().split()
    assert line and line[0] == "CLAIMED", f"worker failed: {line} {proc.stderr.read()}"
    return line[1], line[2]


def wait_until_claimed_or_timeout(proc: subprocess.Popen, seconds: float) -> bool:
    """True when the worker printed its claim line within ``seconds`` (it is still waiting otherwise)."""
    import selectors

    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    return bool(sel.select(timeout=seconds))


def test_visible_devices_precedence(monkeypatch):
    monkeypatch.setenv("DYNPR_DEVICES", "0,1,2")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3, GPU-abc")
    assert devices.visible_devices() == ["3", "GPU-abc"]
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES")
    assert devices.visible_devices() == ["0", "1", "2"]
    # An empty CUDA_VISIBLE_DEVICES hides every GPU, as it does for CUDA itself.
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    assert devices.visible_devices() == []


def test_claim_sets_and_restores_cuda_visible_devices(fake_env):
    assert "CUDA_VISIBLE_DEVICES" not in os.environ
    lines = []
    with devices.claim_device(report=lines.append) as dev:
        assert dev == "0"
        assert os.environ["CUDA_VISIBLE_DEVICES"] == "0"
        assert len(lines) == 1 and "claimed GPU 0 (pid" in lines[0]
        # A second claim in the same process needs another lock; it sees only the claimed device now
        # (CUDA_VISIBLE_DEVICES wins over DYNPR_DEVICES), which is held, so it times out.
        with pytest.raises(TimeoutError, match="locks"):
            with devices.claim_device(timeout=0.2, poll_interval=0.05):
                pass
    assert "CUDA_VISIBLE_DEVICES" not in os.environ
    assert len(lines) == 2 and "released GPU 0" in lines[1]
    # Released: the same device is free again.
    with devices.claim_device(timeout=0) as dev:
        assert dev == "0"


def test_no_devices_yields_none(monkeypatch, tmp_path):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    monkeypatch.setenv("DYNPR_LOCK_DIR", str(tmp_path / "locks"))
    with devices.claim_device() as dev:
        assert dev is None
        assert os.environ["CUDA_VISIBLE_DEVICES"] == ""
    assert not (tmp_path / "locks").exists()


def test_concurrent_processes_get_distinct_devices_and_third_waits(fake_env, tmp_path):
    a, rel_a = start_worker(fake_env, tmp_path, "a")
    b, rel_b = start_worker(fake_env, tmp_path, "b")
    try:
        dev_a, cvd_a = read_claim(a)
        dev_b, cvd_b = read_claim(b)
        assert {dev_a, dev_b} == {"0", "1"}
        assert (cvd_a, cvd_b) == (dev_a, dev_b)

        c, rel_c = start_worker(fake_env, tmp_path, "c")
        try:
            # Both devices are held: the third must still be waiting after a while.
            assert not wait_until_claimed_or_timeout(c, 1.5), "third job claimed a device that was held"
            rel_b.touch()
            assert b.wait(timeout=10) == 0
            assert wait_until_claimed_or_timeout(c, 10), "third job did not get the released device"
            dev_c, _ = read_claim(c)
            assert dev_c == dev_b
            rel_c.touch()
            assert c.wait(timeout=10) == 0
        finally:
            c.kill()
        rel_a.touch()
        assert a.wait(timeout=10) == 0
    finally:
        a.kill()
        b.kill()


def test_killed_holder_frees_its_device(fake_env, tmp_path, monkeypatch):
    monkeypatch.setenv("DYNPR_DEVICES", "7")
    env = dict(os.environ)
    holder, _ = start_worker(env, tmp_path, "holder")
    try:
        dev, _ = read_claim(holder)
        assert dev == "7"
        with pytest.raises(TimeoutError, match=str(tmp_path / "locks")):
            with devices.claim_device(timeout=0.3, poll_interval=0.05):
                pass
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=10)
        start = time.monotonic()
        with devices.claim_device(timeout=5, poll_interval=0.05) as again:
            assert again == "7"
        assert time.monotonic() - start < 5
    finally:
        holder.kill()


def test_lock_names_separate_hosts_and_slurm_jobs(monkeypatch):
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    plain = devices._lock_name("0")
    monkeypatch.setenv("SLURM_JOB_ID", "123")
    job_a = devices._lock_name("0")
    monkeypatch.setenv("SLURM_JOB_ID", "124")
    job_b = devices._lock_name("0")
    assert len({plain, job_a, job_b}) == 3
    assert devices._lock_name("GPU-a/b").count("/") == 0
