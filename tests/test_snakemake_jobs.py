"""Workflow script helpers: one-line failures, a flushed progress log, readable input errors."""

import pytest

from dynpr import snakemake_jobs as jobs


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


def test_read_input_names_the_file_and_the_fix(tmp_path):
    from dynpr.batches import read_batches

    bad = tmp_path / "temporal_0.001.npz"
    bad.write_text("garbage")
    with pytest.raises(ValueError, match=r"temporal_0.001.npz: cannot be read .*delete it and rerun snakemake"):
        jobs.read_input(bad, read_batches)


def test_memory_error_without_a_message_still_says_what(tmp_path, capsys):
    with pytest.raises(SystemExit):
        with jobs.script_errors("prepare", "CollegeMsg", tmp_path / "x.log"):
            raise MemoryError()
    assert capsys.readouterr().err.strip() == "dynpr: prepare for CollegeMsg: MemoryError: not enough memory"
