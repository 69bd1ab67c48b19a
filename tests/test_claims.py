"""The claims table: the paper's headline claims against a summary with known speedups and errors."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from dynpr import claims
from dynpr.results import make_row, to_frame

# runtime (ms) per approach at each temporal batch size: DF-P 4x faster than Static at 1e-5,
# 1.5x at 1e-4, slower at 1e-3
TEMPORAL_MS = {1e-5: {"static": 8.0, "dfp": 2.0}, 1e-4: {"static": 6.0, "dfp": 4.0}, 1e-3: {"static": 4.0, "dfp": 5.0}}
ERRORS = {"static": 1e-6, "nd": 1e-9, "dt": 2e-9, "df": 1e-8, "dfp": 1e-7}


def rows(backend="gpu", scale=1.0, errors=ERRORS):
    out = []
    for dataset, (fraction, times) in itertools.product(("g1", "g2"), TEMPORAL_MS.items()):
        for approach in ERRORS:
            out.append(make_row(dataset=dataset, experiment="temporal", approach=approach, backend=backend,
                                device=f"{backend} device", batch_fraction=fraction, deletions=0, insertions=1,
                                vertices=10, edges=20, iterations=3, time_ms=times.get(approach, 3.0) * scale,
                                l1_error=errors[approach], affected=1, git_commit="x", timestamp="t"))
    for dataset, fraction in itertools.product(("g3",), (1e-7, 1e-4, 1e-1)):
        for approach in ERRORS:
            out.append(make_row(dataset=dataset, experiment="random", approach=approach, backend=backend,
                                device=f"{backend} device", batch_fraction=fraction, deletions=1, insertions=4,
                                vertices=10, edges=20, iterations=3,
                                time_ms=(1.0 if approach == "dfp" else 3.1) * scale,
                                l1_error=errors[approach], affected=1, git_commit="x", timestamp="t"))
    return out


def by_claim(table, start):
    (row,) = [r for r in table.to_dict("records") if r["claim"].startswith(start)]
    return row


def test_speedups_and_verdicts_per_temporal_batch_size():
    table = claims.evaluate(to_frame(rows()))
    assert set(table.columns) == set(claims.COLUMNS)
    at = {f: by_claim(table, f"DF-P is {p:g}x faster than Static at batch size {f:g}")
          for f, p in claims.TEMPORAL_DFP.items()}
    assert at[1e-5]["measured"] == "4.00x" and at[1e-5]["verdict"] == "holds"  # 4 >= 0.8 x 3.6
    assert at[1e-4]["measured"] == "1.50x" and at[1e-4]["verdict"] == "partly"  # faster, below 0.8 x 2.0
    assert at[1e-3]["measured"] == "0.80x" and at[1e-3]["verdict"] == "does not hold"
    overall = by_claim(table, "DF-P outperforms Static on real-world")
    assert overall["measured"] == f"{(4 * 1.5 * 0.8) ** (1 / 3):.2f}x" and overall["backend"] == "gpu"
    assert by_claim(table, "DF-P outperforms Static on large static")["verdict"] == "holds"  # 3.1 / 1.0
    assert by_claim(table, "Static PageRank on the GPU outperforms Hornet")["verdict"] == "not measured"


def test_error_ordering():
    table = claims.evaluate(to_frame(rows()))
    assert by_claim(table, "DF and DF-P err more")["verdict"] == "holds"
    assert by_claim(table, "DF-P errs more than ND, DT and DF")["verdict"] == "holds"
    swapped = dict(ERRORS, static=1e-10)  # Static now the most accurate: one of the two inequalities fails
    table = claims.evaluate(to_frame(rows(errors=swapped)))
    assert by_claim(table, "DF and DF-P err more")["verdict"] == "partly"


def test_gpu_vs_cpu_static_needs_both_backends():
    gpu_only = claims.evaluate(to_frame(rows()))
    assert by_claim(gpu_only, "Static PageRank on the GPU is 24x")["verdict"] == "not measured"
    both = claims.evaluate(to_frame(rows() + rows(backend="cpu", scale=30.0)))
    row = by_claim(both, "Static PageRank on the GPU is 24x")
    assert row["measured"] == "30.00x" and row["verdict"] == "holds"
    # the DF-P claims use the GPU's rows when both backends are present
    assert by_claim(both, "DF-P outperforms Static on real-world")["backend"] == "gpu"


@pytest.mark.parametrize("measured, verdict", [(np.nan, "not measured"), (0.9, "does not hold"), (1.2, "partly"),
                                               (2.0, "holds")])
def test_speedup_verdict_rule(measured, verdict):
    assert claims.speedup_verdict(measured, 2.5) == verdict
