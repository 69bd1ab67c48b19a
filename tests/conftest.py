"""Shared pytest fixtures (generic only: small files and graphs)."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

# Tests run in a checkout and read its files (datasets/, workflow/, config.yaml), so the
# checkout is found from this file; test modules that need it at import time do the same.
# The package itself finds those files through dynpr.io.catalog.project_file (also on a wheel).
REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def repo_root() -> Path:
    """The repository root (where datasets/ and workflow/ live)."""
    return REPO


@pytest.fixture
def write_file(tmp_path):
    """Factory: ``write_file(name, content)`` writes text or bytes under tmp_path.

    A name ending in ``.gz`` is gzip-compressed. Returns the Path.
    """

    def write(name: str, content: str | bytes) -> Path:
        data = content.encode() if isinstance(content, str) else content
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
        return path

    return write


@pytest.fixture
def random_edges():
    """Factory: ``random_edges(n, m, seed)`` -> (src, dst) int64 arrays with duplicates and self-loops."""

    def make(n: int, m: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
        rng = np.random.default_rng(seed)
        return rng.integers(0, n, m), rng.integers(0, n, m)

    return make
