"""R-MAT generator: Graph500 quadrant probabilities, determinism, cleanliness."""

from __future__ import annotations

import numpy as np
import pytest

from dynpr.rmat import GRAPH500_ABC, rmat_edges, rmat_raw_edges


def test_quadrant_probabilities_at_every_level():
    scale, m = 6, 400_000
    src, dst = rmat_raw_edges(scale, m, np.random.default_rng(0))
    a, b, c = GRAPH500_ABC
    expected = np.array([a, b, c, 1 - a - b - c])
    for level in range(scale):
        row, col = (src >> level) & 1, (dst >> level) & 1
        observed = np.bincount(2 * row + col, minlength=4) / m  # 0=a (top-left), 1=b, 2=c, 3=d
        # binomial standard error is < 0.0008 here; 0.004 is a 5-sigma bound
        np.testing.assert_allclose(observed, expected, atol=0.004)


def test_edges_are_unique_without_self_loops():
    scale = 10
    src, dst = rmat_edges(scale, 16, seed=5)
    assert src.dtype == np.int32 and dst.dtype == np.int32
    assert len(src) > 8 * 2**scale  # dedup removes some, not most
    assert (src != dst).all()
    assert src.min() >= 0 and max(src.max(), dst.max()) < 2**scale
    keys = src.astype(np.int64) * 2**scale + dst
    assert len(np.unique(keys)) == len(keys)
    assert (np.diff(keys) > 0).all()


def test_seeded_and_permuted():
    s1, d1 = rmat_edges(9, 8, seed=1)
    s2, d2 = rmat_edges(9, 8, seed=1)
    s3, _ = rmat_edges(9, 8, seed=2)
    assert np.array_equal(s1, s2) and np.array_equal(d1, d2)
    assert len(s1) != len(s3) or not np.array_equal(s1, s3)
    # without the permutation vertex 0 (the all-"a" quadrant path) would be the hub
    assert np.bincount(s1, minlength=2**9).argmax() != 0


def test_skewed_degrees():
    src, _ = rmat_edges(12, 16, seed=3)
    degree = np.bincount(src, minlength=2**12)
    assert degree.max() > 20 * degree.mean()  # power-law-like, unlike a uniform random graph


@pytest.mark.parametrize("kwargs", [dict(scale=0), dict(scale=31), dict(scale=4, abc=(0.5, 0.3, 0.3))])
def test_bad_parameters(kwargs):
    with pytest.raises(ValueError):
        rmat_edges(**kwargs)
