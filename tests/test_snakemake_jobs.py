"""Workflow script helpers: one-line failures, a flushed progress log, readable input errors."""

import re
import sys
import time

import pytest

from dynpr.pipeline import jobs


def test_script_errors_give_one_line_and_exit_1(tmp_path, capsys):
    log = tmp_path / "x.log"
    with pytest.raises(SystemExit) as exc:
        with jobs.script_errors("run_experiment", "CollegeMsg", log) as write:
            write("started")
            raise FileNotFoundError("results/graphs/CollegeMsg.npz: no such file")
    assert exc.value.code == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["dynpr: run_experiment for CollegeMsg: FileNotFoundError: results/graphs/CollegeMsg.npz: "
                   "no such file"]
    text = log.read_text()
    assert text.startswith("started\n") and "Traceback" in text and text.rstrip().endswith(err[0])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
def test_a_job_that_succeeds_ends_its_log_with_its_peak_memory(tmp_path):
    from dynpr.graph.hostmem import peak_rss_gib

    log = tmp_path / "ok.log"
    with jobs.script_errors("random_batches", "rmat-20", log) as write:
        write("started")
    lines = log.read_text().splitlines()
    assert lines[0] == "started" and len(lines) == 3
    peak = float(re.fullmatch(r"random_batches for rmat-20: peak host RSS ([\d.]+) GiB \(high-water mark\)",
                              lines[1]).group(1))
    assert 0 < peak <= peak_rss_gib() + 0.01


def test_the_log_ends_with_where_the_wall_time_went(tmp_path, monkeypatch):
    monkeypatch.delitem(sys.modules, "dynpr.gpu.loader", raising=False)  # as in a job that never used the GPU
    log = tmp_path / "job.log"
    with jobs.script_errors("summary", "all datasets", log) as write:
        write.lap("start and imports")
        time.sleep(0.2)
        write.lap("work")
        time.sleep(0.1)
        write.lap("writing")
        time.sleep(0.05)
        write.lap("work")  # a phase that recurs adds up
    last = log.read_text().splitlines()[-1]
    match = re.fullmatch(r"summary for all datasets: wall time ([\d.]+) s: start and imports ([\d.]+), "
                         r"work ([\d.]+), writing ([\d.]+), other ([\d.]+)", last)
    total, imports, work, writing, other = map(float, match.groups())
    assert 0.24 <= work < 1.0 and 0.09 <= writing < 0.5 and other < 0.5
    # counted from the process's start, so the interpreter's own start and this test session are in it
    assert imports > 0.1 and abs(total - (imports + work + writing + other)) < 0.05
    assert total == pytest.approx(time.time() - jobs.process_start(), abs=1.0)


def test_a_job_that_built_gpu_kernels_says_how_long(tmp_path, monkeypatch):
    from types import SimpleNamespace

    log = tmp_path / "job.log"
    for built, suffix in ((0.0, ""), (2.5, " (GPU kernel builds 2.50 s of it)")):
        monkeypatch.setitem(sys.modules, "dynpr.gpu.loader", SimpleNamespace(build_seconds=lambda: built))
        with jobs.script_errors("run_experiment", "CollegeMsg", log) as write:
            write.lap("work")
        last = log.read_text().splitlines()[-1]
        assert last.startswith("run_experiment for CollegeMsg: wall time ") and last.endswith(suffix)
        assert ("GPU kernel builds" in last) == bool(built)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_process_start_is_when_the_interpreter_started():
    import subprocess

    before = time.time()
    out = subprocess.run([sys.executable, "-c", "import time; from dynpr.pipeline.jobs import process_start; "
                          "print(process_start(), time.time())"], capture_output=True, text=True, check=True).stdout
    start, now = map(float, out.split())
    assert before - 0.05 <= start <= now and now - start < 30


def test_read_input_names_the_file_and_the_fix(tmp_path):
    from dynpr.batches import read_batches

    bad = tmp_path / "temporal_0.001.npz"
    bad.write_text("garbage")
    with pytest.raises(ValueError, match=r"temporal_0.001.npz: cannot be read .*delete it and rerun snakemake"):
        jobs.read_input(bad, read_batches)


def test_cupy_out_of_memory_becomes_one_line_saying_what_to_change(tmp_path, capsys):
    OutOfMemoryError = type("OutOfMemoryError", (MemoryError,), {"__module__": "cupy.cuda.memory"})
    log = tmp_path / "job.log"
    with pytest.raises(SystemExit):
        with jobs.script_errors("run_experiment", "rmat-26", log):
            raise OutOfMemoryError("Out of memory allocating 1,346,458,112 bytes\n(allocated so far: 83 GB)")
    line = capsys.readouterr().err.strip()
    assert "\n" not in line and line.startswith("dynpr: run_experiment for rmat-26: the GPU ran out of memory (")
    assert "1,346,458,112 bytes (allocated so far: 83 GB)" in line and "largest batch fractions" in line
    assert "Traceback" in log.read_text()  # the traceback goes to the job's log only


def test_memory_error_without_a_message_still_says_what(tmp_path, capsys):
    with pytest.raises(SystemExit):
        with jobs.script_errors("prepare", "CollegeMsg", tmp_path / "x.log"):
            raise MemoryError()
    assert capsys.readouterr().err.strip() == "dynpr: prepare for CollegeMsg: MemoryError: not enough memory"


def _running(pid: int) -> bool:
    """Whether ``pid`` runs (not gone, not a zombie waiting for a parent that does not reap it)."""
    try:
        return open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_job_stops_when_its_snakemake_is_killed(tmp_path):
    """kill -9 of Snakemake: its job notices within a few seconds and exits through SIGTERM."""
    import os
    import signal
    import subprocess
    import sys
    import time

    job = tmp_path / "job.py"
    job.write_text("import time\nfrom dynpr.pipeline import jobs\njobs.WATCH_PARENT_S = 0.1\n"
                   "with jobs.script_errors('run', 'x', None):\n    time.sleep(60)\n")
    parent = tmp_path / "snakemake_stand_in.py"  # its command line names snakemake, as Snakemake's does
    parent.write_text(f"import subprocess, sys\np = subprocess.Popen([sys.executable, {str(job)!r}])\n"
                      "print(p.pid, flush=True)\np.wait()\n")
    proc = subprocess.Popen([sys.executable, str(parent)], stdout=subprocess.PIPE, text=True)
    child = int(proc.stdout.readline())
    time.sleep(1.0)  # the job runs
    assert _running(child)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 10
    while _running(child) and time.monotonic() < deadline:
        time.sleep(0.1)
    stopped = not _running(child)
    if not stopped:
        os.kill(child, signal.SIGKILL)
    assert stopped, "the job kept running after its Snakemake was killed"


def test_pipeline_time_sums_the_jobs_wall_time_lines_per_rule(tmp_path):
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "benchmarks" / "pipeline_time.py"
    spec = importlib.util.spec_from_file_location("pipeline_time", path)
    pipeline_time = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(pipeline_time)
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "a.log").write_text(
        "progress\nrun_experiment for a: wall time 10.00 s: start and imports 1.00, load and checks 2.00, "
        "work 6.50, writing 0.50, other 0.00 (GPU kernel builds 3.00 s of it)\n")
    (tmp_path / "run" / "b.log").write_text(
        "run_experiment for b: wall time 5.00 s: start and imports 1.00, work 4.00, other 0.00\n")
    (tmp_path / "no_line.log").write_text("a job that failed\n")
    with jobs.script_errors("summary", "all datasets", tmp_path / "summary.log") as write:
        write.lap("start and imports")  # the line a job writes, read back (its wall: this process's age)
    times = pipeline_time.job_times(tmp_path)
    assert [(t["rule"], t["target"]) for t in times] == [("run_experiment", "a"), ("run_experiment", "b"),
                                                         ("summary", "all datasets")]
    assert times[0]["GPU kernel builds"] == 3.0 and times[0]["load and checks"] == 2.0
    lines = pipeline_time.table(times[:2], snakemake_s=35.0).splitlines()
    assert lines[0] == ("| rule | jobs | wall s | start and imports s | load and checks s | work s | writing s | "
                        "other s | GPU kernel builds s |")
    assert lines[2:] == ["| run_experiment | 2 | 15.0 | 2.0 | 2.0 | 10.5 | 0.5 | 0.0 | 3.0 |",
                         "| all jobs | 2 | 15.0 | 2.0 | 2.0 | 10.5 | 0.5 | 0.0 | 3.0 |",
                         "| Snakemake itself (start, DAG, between jobs) | | 20.0 |" + " |" * 6]


@pytest.mark.parametrize("fractions,text", [
    ([1e-3, 0.0010000001], "random.batch_fractions: 0.001 and 0.0010000001 share the file label 0.001"),
    ([1e-2, 1e-3, 1e-3], "random.batch_fractions: 0.001 is given twice"),
])
def test_fractions_sharing_a_file_label_are_refused_naming_the_cause(fractions, text):
    """Re-audit WEAK case: the workflow refused them without saying that their file names collide."""
    jobs.check_fraction_labels({"random": {"batch_fractions": [1e-3, 1e-2]}, "temporal": {"batch_fractions": [1e-3]}})
    with pytest.raises(ValueError, match=re.escape(f"config: {text}")):
        jobs.check_fraction_labels({"random": {"batch_fractions": fractions}})


def test_ctrl_c_in_a_job_is_one_line_and_exit_130(tmp_path, capsys):
    """Snakemake passes Ctrl-C on to its jobs: each printed a KeyboardInterrupt traceback."""
    log = tmp_path / "job.log"
    with pytest.raises(SystemExit) as stop:
        with jobs.script_errors("run_experiment", "g", log):
            raise KeyboardInterrupt
    assert stop.value.code == 130
    assert capsys.readouterr().err.splitlines() == ["dynpr: run_experiment for g: interrupted"]
    assert log.read_text().splitlines()[-1] == "dynpr: run_experiment for g: interrupted"
