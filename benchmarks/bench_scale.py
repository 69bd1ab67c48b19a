"""Benchmark the pipeline's stages at paper scale: R-MAT graphs of up to 2.1 billion edges.

Per graph, in a child process of its own (so one graph's memory never counts
against the next): generate (R-MAT, CSR + transpose, on the GPU with ``--backend gpu``
for graphs of the counter-based stream, its ``generated_on`` column says where), prepare (stats
and the ``.npz`` written, then read back; the GPU machine lacks jsonschema, so
the catalog is not read), upload to the GPU, Static, and per
batch fraction: make a random batch, apply it on the host and (GPU) on the
device-resident graph, check both give the same arrays, DF-P from the Static
ranks on the device-applied graph. With ``--experiment`` the random-batch
experiment itself (:func:`dynpr.evaluation.experiments.run_batches`, every approach, one
batch per fraction, the graph resident on the device) follows, and each batch
gets a row with its wall time, the approaches' timed PageRank and the rest
(the overhead: applying the batch, the reference Static, timed alone as a stage
before, scoring). Every stage
gets its wall time, the peak host RSS within the stage (``VmHWM``, reset
through ``/proc/self/clear_refs`` before it), the peak bytes in CuPy's pool
during it and the device memory in use at its end (``cudaMemGetInfo``).
Static's row also rates its bandwidth by the bytes model of
:func:`dynpr.evaluation.bench.bytes_per_iteration` against a device-to-device copy, and
against a pass that only gathers the contributions (:func:`dynpr.evaluation.bench.gather_ms`).
Rows go to ``results/bench/scale.csv`` (rewritten after every graph,
atomically) with device, commit and parameters.

Usage::

    python benchmarks/bench_scale.py --graphs 22 24 25 26 26x32 --fractions 1e-6 1e-4
    python benchmarks/bench_scale.py --graphs 26 --no-npz --no-host-apply --experiment \
        --fractions 1e-7 1e-6 1e-5 1e-4 1e-3 1e-2 1e-1
    python benchmarks/bench_scale.py --graphs 12 --backend cpu   # a smoke test

A graph is ``SCALE`` (edge factor 16) or ``SCALExEDGEFACTOR``.
"""

from __future__ import annotations

import argparse
import gc
import json
import tempfile
import time
import traceback
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from multiprocessing import get_context
from pathlib import Path

import pandas as pd

from dynpr.graph.hostmem import GIB, peak_rss_gib, reset_peak_rss

ROOT = Path(__file__).resolve().parents[1]  # benchmarks run in a checkout: results/ and its commit
SEED = 1  # the catalog's R-MAT seed
BATCH_SEED = 42  # the config's seed


def _gpu_fields(gpu) -> dict:
    free, total = gpu.cupy.cuda.runtime.memGetInfo()
    return {"peak_gpu_pool_gib": gpu.peak / GIB, "gpu_in_use_gib": (total - free) / GIB}


def _die_with_parent() -> None:
    """Child initializer: be killed with the parent (a ``timeout`` must not leave a graph-sized orphan)."""
    import ctypes
    import signal

    ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def _graph_run(spec: str, fractions: list[float], backend: str, npz: bool, host_apply: bool, experiment: bool,
               workdir: str, rows_path: str) -> None:
    """Every stage on one graph; runs in a child process and appends each row to
    ``rows_path`` (JSON lines) as soon as it is measured: rows survive a crash or a kill."""
    from dynpr.backend import device_name
    from dynpr.batches import Batch, apply_batch, batch_rng, random_batch
    from dynpr.graph.graph import Graph
    from dynpr.pagerank import reference, static, update
    from dynpr.pagerank.options import PageRankOptions
    from dynpr.generate.rmat import GRAPH500_ABC, generation_backend, rmat_graph
    from dynpr.gpu.memory import PoolPeak

    scale, _, factor = spec.partition("x")
    scale, factor = int(scale), int(factor or 16)
    name = f"rmat-{scale}" + ("" if factor == 16 else f"-ef{factor}")
    gpu = PoolPeak() if backend == "gpu" else None
    rows: list[dict] = []
    common = {"graph": name, "scale": scale, "edge_factor": factor, "backend": backend,
              "device": device_name(backend), "host": device_name("cpu")}

    def record(row: dict) -> None:
        rows.append(row)
        with open(rows_path, "a") as fh:
            fh.write(json.dumps(row) + "\n")
        print(f"{name} {row['stage']}{'' if 'fraction' not in row else ' ' + str(row['fraction'])}: "
              + ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                          for k, v in row.items() if k not in common and k not in ("stage", "fraction")),
              flush=True)

    @contextmanager
    def stage(label: str, **fields):
        gc.collect()
        reset_peak_rss()
        if gpu:
            gpu.reset()
        extra: dict = {}
        t0 = time.perf_counter()
        yield extra
        if gpu:
            gpu.cupy.cuda.Device().synchronize()
        record({**common, "stage": label, "wall_s": time.perf_counter() - t0, "peak_rss_gib": peak_rss_gib(),
                **(_gpu_fields(gpu) if gpu else {}), **fields, **extra})

    options = PageRankOptions()
    if gpu:
        from dynpr.evaluation import bench
        from dynpr.gpu.device_graph import to_device
        from dynpr.gpu.resident import to_resident
        from dynpr.gpu.rmat import rmat_graph_gpu

        copy = bench.copy_gbps()
        # compile the PageRank and CuPy kernels (the device splice's too) outside the timed stages
        warm = Graph.from_edges([0, 1, 2], [1, 2, 0])
        update("dfp", warm, warm, Batch.empty(), static(warm, options, backend="gpu").ranks, options, backend="gpu")
        # CuPy compiles a reduction anew for each block size it picks, so batches of sizes 10 to
        # 10^5: otherwise the first batches of each size pay seconds of NVRTC (measured)
        small = rmat_graph(14, 16, SEED, backend="cpu")
        for fraction in (1e-4, 1e-3, 1e-2, 0.1, 0.4):
            apply_batch(to_resident(small), random_batch(small, fraction, 0.8, batch_rng(0, "warm-up", fraction, 0)))
        # and the R-MAT kernels with the CuPy sort, dedup and search they run into
        rmat_graph_gpu(10, 16, SEED, GRAPH500_ABC, self_loops=True, resident=False, chunk_edges=1 << 20)
    with stage("generate") as out:
        graph = rmat_graph(scale, factor, SEED, backend=backend)
        common.update(vertices=graph.num_vertices, edges=graph.num_edges, graph_gib=graph.nbytes / GIB)
        out.update(common, generated_on=generation_backend(scale, factor, backend))
    if npz:
        path = Path(workdir) / f"{name}.npz"
        with stage("prepare (stats, write npz)") as out:
            out["non_loop_edges"] = graph.num_edges - graph.num_vertices  # R-MAT: one self-loop per vertex added
            graph.save(path)
        del graph
        with stage("read prepared npz"):
            graph = Graph.load(path)
        path.unlink()
    host = graph
    if gpu:
        with stage("upload"):
            resident = to_resident(graph)  # the experiment's graph, on the device for every batch
            to_device(resident)
        graph = resident
    with stage("static (first run)") as out:
        # the engine's first run on a graph also plans and, on the GPU, captures its CUDA graph
        out["pagerank_ms"] = static(graph, options, backend=backend).time_ms
    with stage("static") as out:
        base = static(graph, options, backend=backend)
        out.update(pagerank_ms=base.time_ms, iterations=base.iterations)
        if gpu:
            achieved = bench.bytes_per_iteration(graph.num_vertices, graph.num_edges) * base.iterations
            out.update(achieved_gbps=achieved / base.time_ms / 1e6, copy_gbps=copy,
                       bandwidth_share=achieved / base.time_ms / 1e6 / copy)
    if experiment:  # the experiment scores every batch against one: a share of its overhead
        with stage("reference static (tolerance 1e-100, at most 500 iterations, from scratch)"):
            reference(graph, options, backend=backend)
        with stage("reference static (going on from the Static run, as the experiment does)"):
            reference(graph, options, backend=backend, static_result=base)
    if gpu:
        with stage("gather pass") as out:
            gather = bench.gather_ms(graph.in_offsets, graph.sources)
            gathered = 12 * graph.num_edges  # 4 bytes of id and 8 of contribution per edge
            out.update(pagerank_ms=gather, gather_bandwidth_share=gathered / gather / 1e6 / copy,
                       static_vs_gather=gather / (base.time_ms / base.iterations))
    kept = {}
    for fraction in fractions:
        with stage("make batch", fraction=fraction) as out:
            batch = random_batch(host, fraction, 0.8, batch_rng(BATCH_SEED, name, fraction, 0))
            out.update(batch_edges=batch.deletions + batch.insertions)
        if host_apply or not gpu:
            with stage("apply batch (host)", fraction=fraction):
                new = apply_batch(host, batch)
        if gpu:
            with stage("apply batch (GPU)", fraction=fraction):
                on_device = apply_batch(graph, batch)
            if host_apply:
                with stage("check GPU splice = host splice", fraction=fraction) as out:
                    out["same_as_host"] = all(
                        bool(gpu.cupy.array_equal(getattr(on_device, k), gpu.cupy.asarray(getattr(new, k))))
                        for k in ("offsets", "targets", "in_offsets", "sources"))
            new = on_device
            del on_device
        with stage("dfp", fraction=fraction) as out:
            res = update("dfp", graph, new, batch, base.ranks, options, backend=backend)
            out.update(pagerank_ms=res.time_ms, iterations=res.iterations, affected=res.affected)
        if experiment:
            kept[fraction] = [batch]
        del new, batch, res
    if experiment:
        _experiment(name, graph, kept, options, backend, stage, record, common)


def _experiment(name, graph, batches, options, backend, stage, record, common) -> None:
    """The random-batch experiment as the workflow runs it, one row per batch: the batch's wall
    time (from the end of the previous batch's last approach to the end of its own, so the first
    batch also holds the base Static and the untimed warm-up), its approaches' timed PageRank,
    and the difference, the overhead outside the timed PageRank."""
    from dynpr.designs import APPROACHES as approaches
    from dynpr.evaluation.experiments import run_batches

    ends: list[float] = []

    def log(line: str) -> None:
        ends.append(time.perf_counter())
        print(line, flush=True)

    with stage("experiment", approaches=" ".join(approaches)) as out:
        start = time.perf_counter()
        rows = run_batches("random", name, graph, batches, approaches, options, backend=backend, log=log)
        out["batches"] = sum(map(len, batches.values()))
    # one log line per approach and batch, in batch order
    per_batch = len(approaches)
    for i, fraction in enumerate(batches):
        timed = sum(r["time_ms"] for r in rows if r["batch_fraction"] == fraction) / 1e3
        wall = ends[(i + 1) * per_batch - 1] - (ends[i * per_batch - 1] if i else start)
        record({**common, "stage": "experiment batch" + (" (first: base Static, warm-up)" if i == 0 else ""),
                "fraction": fraction, "wall_s": wall, "timed_pagerank_s": timed, "overhead_s": wall - timed})


def main(argv=None) -> None:
    from dynpr.graph.atomic_files import write_csv_atomic
    from dynpr.evaluation.bench import require_gpu
    from dynpr.evaluation.results import git_commit, timestamp

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graphs", nargs="+", default=["22", "24", "25", "26", "26x32"])
    parser.add_argument("--fractions", nargs="+", type=float, default=[1e-6, 1e-4])
    parser.add_argument("--backend", choices=("cpu", "gpu"), default="gpu")
    parser.add_argument("--no-npz", action="store_true", help="skip writing and reading the prepared .npz")
    parser.add_argument("--no-host-apply", action="store_true",
                        help="GPU: apply each batch on the device only (no host splice to compare with)")
    parser.add_argument("--experiment", action="store_true",
                        help="then run the random-batch experiment, every approach, one batch per fraction")
    parser.add_argument("--out", default=str(ROOT / "results" / "bench" / "scale.csv"))
    args = parser.parse_args(argv)
    if args.backend == "gpu":
        require_gpu()
    commit, failures = git_commit(ROOT), []
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    measured = out.with_name(out.stem + ".rows.jsonl")  # every row as measured, also of a graph cut short
    measured.unlink(missing_ok=True)
    for spec in args.graphs:
        with tempfile.TemporaryDirectory() as workdir, \
                ProcessPoolExecutor(1, mp_context=get_context("spawn"), initializer=_die_with_parent) as pool:
            try:
                pool.submit(_graph_run, spec, args.fractions, args.backend, not args.no_npz,
                            not args.no_host_apply, args.experiment, workdir, str(measured)).result()
                failure = None
            except BrokenProcessPool:
                failure = "child process died (killed: out of memory?)"
            except Exception as err:  # noqa: BLE001 - a failed graph is a row, the others still run
                traceback.print_exc()
                failure = f"{type(err).__name__}: {err}"
        rows = [json.loads(line) for line in measured.read_text().splitlines()] if measured.is_file() else []
        failures += [{"graph": spec, "stage": "failed", "error": failure}] if failure else []
        table = pd.DataFrame(rows + failures).assign(git_commit=commit, timestamp=timestamp(), seed=SEED,
                                                     batch_seed=BATCH_SEED, fractions=" ".join(map(str, args.fractions)))
        write_csv_atomic(table, out)
        print(f"wrote {out}", flush=True)


if __name__ == "__main__":
    from dynpr.evaluation.bench import run_script

    raise SystemExit(run_script(main))
