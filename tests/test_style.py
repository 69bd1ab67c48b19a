"""The code passes the linters CI runs: ruff (rules in pyproject.toml) and snakefmt on the workflow."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("command", [
    [sys.executable, "-m", "ruff", "check", "--no-cache", "src", "tests", "benchmarks", "workflow"],
    [sys.executable, "-m", "snakefmt", "--check", "Snakefile", "workflow"],
], ids=["ruff", "snakefmt"])
def test_linter_passes(command):
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, f"{' '.join(command[2:])} failed:\n{done.stdout}\n{done.stderr}"
