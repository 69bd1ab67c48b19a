"""Benchmark reading Matrix Market files: seconds per 100M entry lines and peak RSS.

A generated pattern matrix (R-MAT edges, 1-based ``u v`` lines; ``--field real`` adds a value of
mixed sign to each, ``u v -0.8131...`` as pandas writes a float64) is written as
``.mtx`` and as a SuiteSparse-style ``<name>.tar.gz``, then read with
:func:`dynpr.io.readers.read_matrix_market` / :func:`dynpr.io.readers.read_suitesparse_tar`, and the
``.mtx`` with ``scipy.io.mmread`` for reference, each read in a child process of its own (peak RSS
``ru_maxrss`` of that child), ``--repeats`` times, the readers taking turns so that a busy spell of
a shared machine falls on all of them. ``--baseline-src`` adds the ``.mtx`` read by another checkout's
``src`` (e.g. ``git archive <commit> src | tar -x -C /tmp/old``), for old against new in one run.
One row per read goes to ``results/bench/mtx.csv``, with the median, least and most seconds of its
file and reader, device, commit and parameters.

Usage: ``python benchmarks/bench_mtx.py --scale 19 --edge-factor 10 --repeats 5 [--field real]``
"""

from __future__ import annotations

import argparse
import resource
import sys
import tarfile
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]  # benchmarks run in a checkout: results/ and its commit


def _read(path: str, reader: str, src: str | None) -> tuple[float, int, float]:
    if src is not None:  # another checkout's dynpr, in this child only
        sys.path.insert(0, src)
    import scipy.io

    from dynpr.io.readers import read_matrix_market, read_suitesparse_tar

    t0 = time.perf_counter()
    if reader == "scipy.io.mmread":
        entries = scipy.io.mmread(path).nnz
    else:
        entries = len((read_suitesparse_tar if path.endswith(".tar.gz") else read_matrix_market)(path).src)
    seconds = time.perf_counter() - t0
    return seconds, entries, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def main(argv=None) -> None:
    from dynpr.backend import device_name
    from dynpr.graph.atomic_files import write_csv_atomic
    from dynpr.evaluation.results import git_commit, timestamp
    from dynpr.generate.rmat import rmat_raw_edges

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=20)
    parser.add_argument("--edge-factor", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--field", choices=["pattern", "real"], default="pattern")
    parser.add_argument("--baseline-src", help="another checkout's src folder, read as reader 'dynpr baseline'")
    parser.add_argument("--baseline-commit", default="", help="the commit --baseline-src holds (for its rows)")
    parser.add_argument("--out", default=str(ROOT / "results" / "bench" / "mtx.csv"))
    args = parser.parse_args(argv)
    n = 1 << args.scale
    src, dst = rmat_raw_edges(args.scale, args.edge_factor * n, np.random.default_rng(1))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        mtx = Path(tmp) / "gen" / "gen.mtx"
        mtx.parent.mkdir()
        with open(mtx, "w") as fh:
            fh.write(f"%%MatrixMarket matrix coordinate {args.field} general\n{n} {n} {len(src)}\n")
            columns = {"u": src + 1, "v": dst + 1}
            if args.field == "real":
                columns["value"] = np.random.default_rng(2).normal(size=len(src))
            pd.DataFrame(columns).to_csv(fh, sep=" ", header=False, index=False)
        archive = Path(tmp) / "gen.tar.gz"
        with tarfile.open(archive, "w:gz") as tar:
            tar.add(mtx, arcname="gen/gen.mtx")
        # scipy.io.mmread: the reference the plain file is read against (issue 48), in the same run
        runs = [(mtx, "dynpr", None, git_commit(ROOT)), (mtx, "scipy.io.mmread", None, ""),
                (archive, "dynpr", None, git_commit(ROOT))]
        if args.baseline_src:
            runs.insert(1, (mtx, "dynpr baseline", str(Path(args.baseline_src).resolve()), args.baseline_commit))
        for repeat in range(args.repeats):
            for path, reader, reader_src, commit in runs:
                with ProcessPoolExecutor(1, mp_context=get_context("spawn")) as pool:
                    seconds, entries, peak_gib = pool.submit(_read, str(path), reader, reader_src).result()
                rows.append({"file": path.name, "reader": reader, "reader_commit": commit, "repeat": repeat,
                             "bytes": path.stat().st_size, "entries": entries, "seconds": seconds,
                             "seconds_per_100M_lines": seconds / entries * 1e8, "peak_rss_gib": peak_gib,
                             "scale": args.scale, "edge_factor": args.edge_factor, "field": args.field,
                             "device": device_name("cpu"),
                             "git_commit": git_commit(ROOT), "timestamp": timestamp()})
                print(f"{path.name} ({reader}) #{repeat}: {entries:,} entries in {seconds:.2f} s "
                      f"({rows[-1]['seconds_per_100M_lines']:.0f} s per 100M lines), peak RSS {peak_gib:.2f} GiB",
                      flush=True)
    table = pd.DataFrame(rows)
    spread = table.groupby(["file", "reader"])["seconds"]
    table["median_seconds"] = spread.transform("median")
    table["min_seconds"] = spread.transform("min")
    table["max_seconds"] = spread.transform("max")
    for (name, reader), group in table.groupby(["file", "reader"], sort=False):
        print(f"{name} ({reader}): median {group.seconds.median():.3f} s, "
              f"{group.seconds.min():.3f}-{group.seconds.max():.3f} s over {len(group)}")
    out = Path(args.out)
    write_csv_atomic(table, out)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
