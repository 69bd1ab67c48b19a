"""benchmarks/bench_dense_batches.py on a small R-MAT graph: every candidate runs and is scored."""

from __future__ import annotations

import re
import runpy
from pathlib import Path

SCRIPT = runpy.run_path(str(Path(__file__).resolve().parents[1] / "benchmarks" / "bench_dense_batches.py"))


def test_every_candidate_is_scored_and_a_switch_counts_its_dfp_iterations(capsys):
    SCRIPT["main"](["--rmat", "9", "8", "--fractions", "0.1", "--switch-after", "1", "3",
                    "--tolerance-per-vertex", "5.12e-8"])  # tau = 1e-10 at 512 vertices
    rows = re.findall(r"^0\.1  (.+?) +(\d+) iterations  L1 error (\S+)$", capsys.readouterr().out, re.M)
    labels = [label for label, _, _ in rows]
    assert labels == ["static", "nd", "df", "dfp", "dfp, no pruning", "dfp 1, then static-style",
                      "dfp 3, then static-style"]
    iterations = {label: int(count) for label, count, _ in rows}
    assert iterations["dfp 3, then static-style"] > 3  # 3 DF-P iterations, then at least one more
    errors = {label: float(error) for label, _, error in rows}
    assert all(0 < error < 1e-5 for error in errors.values())  # every run converged near the reference
    assert errors["dfp, no pruning"] < errors["dfp"] / 10  # pruning's error, gone without it
