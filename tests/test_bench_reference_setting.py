"""benchmarks/bench_reference_setting.py on the CPU: it runs, writes its rows, and the
10x-padded graph scales DF-P's L1 error by about 1/10 (the claim in the README)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]


def test_padding_scales_the_error_tenfold(tmp_path):
    out = tmp_path / "reference_setting.csv"
    subprocess.run([sys.executable, "-W", "ignore", str(ROOT / "benchmarks" / "bench_reference_setting.py"),
                    "--backend", "cpu", "--batches", "2", "--fractions", "1e-3", "--pads", "1", "10",
                    "--out", str(out)], check=True, capture_output=True, text=True, timeout=300)
    table = pd.read_csv(out)
    assert len(table) == 2 * 2 * 2  # pads x batches x (static, dfp)
    assert set(table["rows"]) == {24_818, 248_180}
    dfp = table[table.approach == "dfp"].set_index(["pad", "batch_index"])["l1_error"]
    ratio = dfp.loc[10] / dfp.loc[1]
    assert ((ratio > 0.05) & (ratio < 0.2)).all(), ratio
    assert (table.l1_error > 0).all() and (table.time_ms > 0).all()
