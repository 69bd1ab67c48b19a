"""GPU benchmark tables: static kernel variants, the partition ablation and Kahn (rule ``bench``).

The workflow's rule ``bench`` (``snakemake --cores 1 bench``, or part of
``figures`` with ``backend: gpu``) runs :func:`write_tables` on the pipeline's
own outputs: the prepared graphs ``results/graphs/{name}.npz`` and, for the
ablation, the batch files ``results/batches/{name}/*`` the experiments use
(temporal slices on their base graph, or random batches with the config's
seed), with config.yaml's ``bench`` section as parameters. It writes

- ``static_variants.csv``: Static PageRank per graph and kernel variant
  (:data:`dynpr.designs.VARIANTS`), median of the runs a time budget allows
  (:func:`budgeted_runs`, at most ``repeats``; the ``repeats`` column says how
  many), with ms per iteration, edges per second and the achieved bandwidth under
  :data:`MODEL` as a share of the device-to-device copy bandwidth measured in the
  same process; the slow naive designs (``naive_variants``) only on graphs of at
  most ``naive_max_edges`` edges, which show their ordering at a fraction of the cost;
- ``partition_ablation.csv``: every approach per partition level (the paper's
  Fig. 1) for the paper's design (``partitioned``) and the default, on every
  batch of each batch file, with the L1 error against the reference and the
  time per phase (partition, marking, iterations);
- ``kahn.csv``: CPU Kahn and the GPU drivers (:data:`KAHN_DRIVERS`) on two random DAGs
  (:func:`dynpr.generate.random_dag.random_dag`), one wide and one deep, on the benchmark graphs of
  the report *CUDA-Based Cycle Detection in Directed Graphs Using Kahn's Algorithm*
  (random cyclic and upper-triangular acyclic matrices, :func:`dynpr.generate.random_dag.report_matrix`,
  also through the dense-matrix driver) and on the bench graphs without their self-loops.

It needs a CUDA device: without one it stops with one line saying so (the CPU
engines have their own benchmarks; a GPU table with CPU numbers in it would
mislabel them).
"""

from __future__ import annotations

import statistics
import sys
import time
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd

from dynpr.graph.atomic_files import write_csv_atomic
from dynpr.designs import APPROACHES, DEFAULT_VARIANT, PARTITIONS, VARIANTS
from dynpr.errors import DynprError, NoGpuError

#: The bytes a Static iteration must move, whatever the kernel design.
MODEL = ("bytes/iteration = 8(n+1) in_offsets + 4m sources + 8m gathered contributions (one double "
         "per edge, counted as if no gather hit a cache) + 8n read R + 8n write Rnew")
# Every table also carries benchmark / dataset (= graph) / backend, the keys
# dynpr.evaluation.plots.read_bench selects rows by; time_min_ms / time_max_ms are the fastest and slowest
# of the timed repeats whose median is time_ms (the figures draw them as the spread).
STATIC_COLUMNS = ("graph", "variant", "device", "git_commit", "vertices", "edges", "iterations", "time_ms",
                  "ms_per_iteration", "edges_per_second", "bytes_per_iteration", "achieved_gbps", "copy_gbps",
                  "bandwidth_share", "model", "repeats", "benchmark", "dataset", "backend", "time_min_ms",
                  "time_max_ms")
ABLATION_COLUMNS = ("graph", "approach", "partition", "batch_fraction", "time_ms", "device", "git_commit",
                    "variant", "batch_index", "iterations", "l1_error", "affected", "partition_ms", "mark_ms",
                    "compute_ms", "benchmark", "dataset", "backend")
KAHN_COLUMNS = ("graph", "driver", "device", "git_commit", "vertices", "edges", "levels", "processed", "time_ms",
                "us_per_level", "speedup_vs_cpu", "repeats", "benchmark", "dataset", "backend", "time_min_ms",
                "time_max_ms")


def bytes_per_iteration(n: int, m: int) -> int:
    """Bytes a Static iteration over n vertices and m edges must move (see :data:`MODEL`)."""
    return 8 * (n + 1) + 12 * m + 16 * n


def static_row(graph: str, variant: str, n: int, m: int, iterations: int, time_ms: float, copy_gbps: float,
               device: str, commit: str, repeats: int = 1, spread: tuple[float, float] | None = None) -> dict:
    """One ``static_variants.csv`` row from a measured run (``time_ms`` the median of ``repeats``, ``spread``
    their fastest and slowest; ``time_ms`` for both when not given).

    Raises
    ------
    ValueError
        If the run reports no iterations or a non-positive time.
    """
    if iterations < 1 or not time_ms > 0:
        raise ValueError(f"{graph}/{variant}: iterations={iterations}, time_ms={time_ms} cannot be rated")
    seconds = time_ms * 1e-3
    per_iteration = bytes_per_iteration(n, m)
    achieved = per_iteration * iterations / seconds / 1e9
    low, high = spread if spread is not None else (time_ms, time_ms)
    return {"graph": graph, "variant": variant, "device": device, "git_commit": commit, "vertices": n, "edges": m,
            "iterations": iterations, "time_ms": time_ms, "ms_per_iteration": time_ms / iterations,
            "edges_per_second": m * iterations / seconds, "bytes_per_iteration": per_iteration,
            "achieved_gbps": achieved, "copy_gbps": copy_gbps, "bandwidth_share": achieved / copy_gbps,
            "model": MODEL, "repeats": repeats, "benchmark": "static_comparison", "dataset": graph, "backend": "gpu",
            "time_min_ms": low, "time_max_ms": high}


NO_GPU = ("bench needs a GPU: no CUDA device visible through CuPy here; run it on a GPU machine "
          "(the CPU engines are timed by benchmarks/bench_pagerank_cpu.py)")
#: The designs the ablation compares: the paper's and the default.
ABLATION_VARIANTS = ("partitioned", DEFAULT_VARIANT)


def require_gpu() -> None:
    """Fail with one line when no CUDA device is usable.

    Raises
    ------
    dynpr.errors.NoGpuError
        (a ``RuntimeError``) with :data:`NO_GPU` as its message.
    """
    from dynpr.backend import gpu_available

    if not gpu_available():
        raise NoGpuError(NO_GPU)


def run_script(main) -> int:
    """Run a benchmark script's ``main``: an expected failure (no GPU, bad input) is one
    ``<script>: error: ...`` line on stderr and its exit status, not a traceback."""
    try:
        main()
    except DynprError as err:
        print(f"{Path(sys.argv[0]).name}: error: {err}", file=sys.stderr)
        return err.exit_code
    return 0


def copy_gbps(nbytes: int = 1 << 30, repeats: int = 20) -> float:
    """Device-to-device copy bandwidth, bytes read plus bytes written per second / 1e9 (median)."""
    import cupy

    src = cupy.arange(nbytes // 8, dtype=cupy.float64)
    dst = cupy.empty_like(src)
    dst[...] = src  # warm-up
    start, end = cupy.cuda.Event(), cupy.cuda.Event()
    times = []
    for _ in range(repeats):
        start.record()
        dst[...] = src
        end.record()
        end.synchronize()
        times.append(cupy.cuda.get_elapsed_time(start, end) * 1e-3)
    return 2 * src.nbytes / statistics.median(times) / 1e9


def gather_total(ids, contributions, *, hot: int = 0, block: int | None = None, repeats: int = 0):
    """The sum of ``contributions[ids]`` by ``kernels/gather.cu`` (CuPy arrays; float64 or float32
    contributions, summed in float64), and with ``repeats`` the median milliseconds of that many timed
    passes after a warm-up one. ``hot`` > 0: each block first copies the first ``hot`` contributions
    into shared memory and gathers those there (at most :func:`max_hot`). ``block`` threads per block
    (default :data:`dynpr.designs.BLOCK`), as many blocks as one wave keeps resident."""
    import cupy

    from dynpr.designs import BLOCK
    from dynpr.gpu import loader

    block = block or BLOCK
    if hot > min(max_hot(contributions.dtype), contributions.size):
        raise ValueError(f"hot {hot} exceeds the {contributions.size} contributions or the "
                         f"{max_hot(contributions.dtype)} {contributions.dtype} values a block's shared memory holds")
    kernel = loader.gather_kernel(contributions.dtype, hot > 0)
    shared = hot * contributions.dtype.itemsize
    attributes = cupy.cuda.Device().attributes
    resident = 2048 // block
    if shared:
        kernel.max_dynamic_shared_size_bytes = shared
        per_block = shared + attributes.get("ReservedSharedMemoryPerBlock", 0)
        resident = max(1, min(resident, attributes["MaxSharedMemoryPerMultiprocessor"] // per_block))
    grid = attributes["MultiProcessorCount"] * resident  # one full wave
    total = cupy.zeros(1, dtype=cupy.float64)
    args = (ids, np.int64(ids.size), contributions, np.int32(hot), total)
    kernel((grid,), (block,), args, shared_mem=shared)  # also compiles and warms up
    value = float(total[0])
    start, end = cupy.cuda.Event(), cupy.cuda.Event()
    times = []
    for _ in range(repeats):  # each adds to total again; only the time is kept
        start.record()
        kernel((grid,), (block,), args, shared_mem=shared)
        end.record()
        end.synchronize()
        times.append(cupy.cuda.get_elapsed_time(start, end))
    return value, (statistics.median(times) if times else None)


def max_hot(dtype) -> int:
    """The most ``dtype`` contributions one block of :func:`gather_total` can hold in shared memory."""
    import cupy

    attributes = cupy.cuda.Device().attributes
    return attributes.get("MaxSharedMemoryPerBlockOptin", 48 << 10) // np.dtype(dtype).itemsize


def hub_first_sources(in_offsets, sources):
    """``sources`` renamed hub-first (descending in-degree, :func:`dynpr.gpu.classes.hub_first_order`),
    as the default engine relabels large graphs (CuPy arrays)."""
    import cupy

    from dynpr.gpu.classes import hub_first_order

    n = len(in_offsets) - 1
    new_id = cupy.empty(n, dtype=cupy.int32)
    new_id[hub_first_order(in_offsets)] = cupy.arange(n, dtype=cupy.int32)
    return new_id[sources]


def gather_ms(in_offsets, sources, repeats: int = 10) -> float:
    """Milliseconds of one pass that only sums ``C[u]`` over every in-edge (median of ``repeats``).

    The memory traffic no pull iteration can avoid: ``sources`` streamed once and one
    float64 gathered per edge, with no per-vertex work and perfect load balance
    (:func:`gather_total`). The ids are first renamed hub-first (:func:`hub_first_sources`),
    so the gathers hit the L2 as often as Static's. A gathered double costs a 32-byte sector
    on a miss, which the bytes model (:data:`MODEL`) does not count: this pass is the
    ceiling for its ``bandwidth_share``, measured instead of assumed. Needs CuPy arrays.
    """
    import cupy

    n = len(in_offsets) - 1
    return gather_total(hub_first_sources(in_offsets, sources), cupy.full(n, 1.0 / n), repeats=repeats)[1]


def budgeted_runs(run, repeats: int, budget_s: float, clock=time.perf_counter) -> list:
    """``run()`` once, then again while fewer than ``repeats`` runs and less than ``budget_s`` seconds of
    wall time (``clock``) spent on the runs after the first (which may compile kernels): a solve of
    seconds is timed twice, one of milliseconds ``repeats`` times."""
    results = [run()]
    started = clock()
    while len(results) < repeats and clock() - started < budget_s:
        results.append(run())
    return results


def static_plan(graphs: dict[str, int], variants, naive_variants, naive_max_edges: int) -> dict[str, list[str]]:
    """Variants to time on each graph (name -> edges): every one of ``variants``, except the
    ``naive_variants`` on graphs of more than ``naive_max_edges`` edges.

    Raises
    ------
    ValueError
        If a naive variant is not among ``variants``.
    """
    unknown = sorted(set(naive_variants) - set(variants))
    if unknown:
        raise ValueError(f"bench.naive_variants: {unknown} are not kernel variants; known: {list(variants)}")
    return {name: [v for v in variants if v not in naive_variants or edges <= naive_max_edges]
            for name, edges in graphs.items()}


class Progress:
    """Progress lines with the seconds since the bench started, so its log shows where time goes."""

    def __init__(self, log=print, clock=time.perf_counter):
        self._log, self._clock, self._started = log, clock, clock()

    def __call__(self, message: str) -> None:
        self._log(f"[{self.elapsed():7.1f} s] {message}")

    def elapsed(self) -> float:
        return self._clock() - self._started


@dataclass(frozen=True)
class BatchFile:
    """One batch file of the ablation: ``batches`` updates ``graph`` (random batches, each on its
    own) or, with ``base``, the base graph one after another (temporal slices)."""

    graph: str
    fraction: float
    batches: str
    base: str | None = None


def load_graph(path: str | Path):
    """A prepared graph (``results/graphs/{name}.npz``)."""
    from dynpr.graph.graph import Graph

    return Graph.load(path)


def static_variants(graphs: dict[str, str], variants, repeats: int, device: str, commit: str,
                    log=print, *, budget_s: float = float("inf"), naive_variants=(),
                    naive_max_edges: int = 0) -> pd.DataFrame:
    """Static PageRank of every variant on every graph (name -> prepared file): the median time of
    :func:`budgeted_runs` (at most ``repeats``, ``budget_s`` seconds), the naive variants only where
    :func:`static_plan` keeps them."""
    from dynpr import pagerank
    from dynpr.pagerank.options import PageRankOptions

    bandwidth = copy_gbps()
    log(f"device-to-device copy: {bandwidth:.0f} GB/s (read + write)")
    rows = []
    for name, path in graphs.items():
        graph = load_graph(path)
        n, m = graph.num_vertices, graph.num_edges
        timed = static_plan({name: m}, variants, naive_variants, naive_max_edges)[name]
        if len(timed) < len(variants):
            log(f"{name}: {m} edges > bench.naive_max_edges {naive_max_edges}: "
                f"{', '.join(v for v in variants if v not in timed)} left out")
        for variant in timed:
            runs = budgeted_runs(partial(pagerank.static, graph, PageRankOptions(variant=variant), backend="gpu"),
                                 repeats, budget_s)
            iterations = {r.iterations for r in runs}
            if len(iterations) != 1:
                raise RuntimeError(f"{name}/{variant}: iteration counts differ between runs: {sorted(iterations)}")
            times = [r.time_ms for r in runs]
            row = static_row(name, variant, n, m, runs[0].iterations, statistics.median(times), bandwidth, device,
                             commit, len(runs), spread=(min(times), max(times)))
            rows.append(row)
            log(f"{name:16s} {variant:16s} it={row['iterations']:3d} {row['time_ms']:9.3f} ms "
                f"{row['ms_per_iteration'] * 1e3:8.1f} us/it {row['achieved_gbps']:7.0f} GB/s "
                f"share {row['bandwidth_share']:.2f} ({len(runs)} runs)")
    return pd.DataFrame(rows, columns=STATIC_COLUMNS)


def _scenarios(batch_file: BatchFile, graphs: dict[str, str]):
    """Yield (index, old, new, batch, chained) of one batch file: temporal slices applied one after
    another from their base graph (``chained``), or random batches each applied to the graph."""
    from dynpr.batches import apply_batch, read_batch_params, read_batches
    from dynpr.graph.validate import check_made_for

    chained = batch_file.base is not None
    start = batch_file.base if chained else graphs[batch_file.graph]
    old = load_graph(start)
    check_made_for(batch_file.batches, read_batch_params(batch_file.batches), old, start)
    for index, batch in enumerate(read_batches(batch_file.batches)):
        new = apply_batch(old, batch)
        yield index, old, new, batch, chained
        if chained:
            old = new


def partition_ablation(batch_files, graphs: dict[str, str], variants, reference_tolerance: float, device: str,
                       commit: str, log=print) -> pd.DataFrame:
    """Every approach per partition level and variant on every batch of ``batch_files``
    (:class:`BatchFile`); previous ranks chain through temporal batches."""
    from dynpr import pagerank
    from dynpr.pagerank.options import PageRankOptions

    reference_options = PageRankOptions(tolerance=reference_tolerance)  # capped at the default 500
    rows = []
    for batch_file in batch_files:
        name, fraction = batch_file.graph, batch_file.fraction
        base_graph, carried = None, {}
        for index, old, new, batch, chained in _scenarios(batch_file, graphs):
            if index == 0 or not chained:
                if old is not base_graph:
                    base = pagerank.static(old, PageRankOptions(), backend="gpu").ranks
                    base_graph = old
                carried = {}
            reference = pagerank.static(new, reference_options, backend="gpu").ranks
            for variant in variants:
                for partition in PARTITIONS:
                    options = PageRankOptions(partition=partition, variant=variant)
                    for approach in APPROACHES:
                        key = (variant, partition, approach)
                        result = pagerank.update(approach, old, new, batch, carried.get(key, base), options,
                                                 backend="gpu")
                        if chained:
                            carried[key] = result.ranks
                        rows.append({"graph": name, "approach": approach, "partition": partition,
                                     "batch_fraction": fraction, "time_ms": result.time_ms, "device": device,
                                     "git_commit": commit, "variant": variant, "batch_index": index,
                                     "iterations": result.iterations,
                                     "l1_error": pagerank.l1_error(result.ranks, reference), "affected": result.affected,
                                     **result.phases,
                                     "benchmark": "partition_ablation", "dataset": name, "backend": "gpu"})
        log(f"{name} {fraction:g}: ablation rows so far {len(rows)}")
    return pd.DataFrame(rows, columns=ABLATION_COLUMNS)


#: The GPU's CSR drivers (dynpr.gpu.kahn.DRIVERS): dynpr's two and the report's two CSR versions.
CSR_DRIVERS = ("levels", "persistent", "two_phase", "host_removal")
#: kahn.csv's drivers: the CPU engine (CSR), the GPU's CSR drivers and its dense-matrix version with the
#: report's global-memory kernels (``dense``) or its shared-memory ones (``dense_shared``).
KAHN_DRIVERS = ("cpu", *CSR_DRIVERS, "dense", "dense_shared")


def kahn_cases(params, graphs: dict[str, str]):
    """Yield kahn.csv's graphs one at a time as (name, graph, dense matrix or None): the two random
    DAGs, the report's graphs (``cyclic-10k``, ``acyclic-40k``, ...; with their matrix, for the dense
    driver) and the bench graphs (``params.graphs``, prepared files in ``graphs``) without self-loops."""
    from dynpr.generate.random_dag import REPORT_KINDS, matrix_graph, random_dag, report_matrix, report_name

    for name, depth in (("dag-random", None), (f"dag-depth{params.kahn_depth}", params.kahn_depth)):
        yield name, random_dag(params.kahn_vertices, params.kahn_edges, depth=depth, seed=params.seed), None
    for n in params.kahn_report_sizes:
        for kind in REPORT_KINDS:
            matrix = report_matrix(n, kind, density=params.kahn_report_density, seed=params.seed)
            yield report_name(kind, n), matrix_graph(matrix), matrix
            del matrix  # with kahn_table's own del, one matrix (1.6 GB at 40k) at a time
    for name in params.graphs:
        yield name, load_graph(graphs[name]).without_self_loops(), None


def kahn_table(cases, device: str, commit: str, repeats: int = 3, log=print,
               budget_s: float = float("inf")) -> pd.DataFrame:
    """CPU Kahn and the GPU drivers on every graph of ``cases`` (:func:`kahn_cases`); the dense driver
    where a case has a matrix. GPU times are medians of :func:`budgeted_runs` (at most ``repeats``,
    ``budget_s`` seconds per driver and graph).

    Raises
    ------
    RuntimeError
        If a driver's levels or processed vertices differ from the CPU's.
    """
    from dynpr.gpu.kahn import kahn as gpu_kahn, kahn_dense
    from dynpr.kahn import kahn

    rows = []
    for name, graph, matrix in cases:
        n = graph.num_vertices
        cpu = kahn(graph, backend="cpu")
        results = {"cpu": [cpu]}
        for driver in CSR_DRIVERS:
            results[driver] = budgeted_runs(partial(gpu_kahn, graph, driver=driver), repeats, budget_s)
        if matrix is not None:
            results["dense"] = budgeted_runs(partial(kahn_dense, matrix), repeats, budget_s)
            results["dense_shared"] = budgeted_runs(partial(kahn_dense, matrix, shared_memory=True), repeats,
                                                    budget_s)
        for driver, runs in results.items():
            first = runs[0]
            if (first.levels, first.processed) != (cpu.levels, cpu.processed):
                raise RuntimeError(f"{name}/{driver}: levels/processed {first.levels}/{first.processed} differ "
                                   f"from the CPU's {cpu.levels}/{cpu.processed}")
            times = [r.time_ms for r in runs]
            t = statistics.median(times)
            rows.append({"graph": name, "driver": driver, "device": device if driver != "cpu" else cpu.device,
                         "git_commit": commit, "vertices": n, "edges": graph.num_edges, "levels": first.levels,
                         "processed": first.processed, "time_ms": t,
                         "us_per_level": t * 1e3 / max(first.levels, 1), "speedup_vs_cpu": cpu.time_ms / t,
                         "repeats": len(runs), "benchmark": "kahn", "dataset": name,
                         "backend": "cpu" if driver == "cpu" else "gpu", "time_min_ms": min(times), "time_max_ms": max(times)})
            log(f"{name:16s} {driver:10s} levels={first.levels:6d} {t:10.3f} ms "
                f"{t * 1e3 / max(first.levels, 1):8.2f} us/level  x{cpu.time_ms / t:.1f} vs CPU ({len(runs)} runs)")
        del graph, matrix  # before the next case is built
    return pd.DataFrame(rows, columns=KAHN_COLUMNS)


def write_tables(graphs: dict[str, str], batch_files, params, outputs, log=print) -> None:
    """Rule bench: the three tables from the pipeline's graphs and batch files.

    Parameters
    ----------
    graphs : dict
        Graph name -> prepared ``.npz`` (every graph of ``params.graphs`` and of the batch files).
    batch_files : list of BatchFile
        The ablation's batch files.
    params
        config.yaml's ``bench`` section (``graphs``, ``repeats``, ``budget_s``, ``naive_variants``,
        ``naive_max_edges``, ``kahn_vertices``, ``kahn_edges``, ``kahn_depth``, ``kahn_report_sizes``,
        ``kahn_report_density``) plus ``seed`` and ``reference_tolerance``.
    outputs
        ``static``, ``ablation`` and ``kahn``: the tables' paths.
    log : callable
        Progress lines, each with the seconds since the bench started, and each table's time.

    Raises
    ------
    RuntimeError
        Without a CUDA device (:data:`NO_GPU`).
    """
    from dynpr.backend import device_name
    from dynpr.gpu import loader
    from dynpr.evaluation.results import git_commit

    require_gpu()
    static_plan({}, VARIANTS, params.naive_variants, params.naive_max_edges)  # a typo fails before any solve
    commit, device = git_commit(), device_name("gpu")
    progress = Progress(log)
    progress(f"{device}, commit {commit}; at most {params.repeats} runs or {params.budget_s:g} s per variant "
             "and graph")
    # every module the tables use, compiled at once rather than each at its first variant's solve
    built = loader.build_modules((*loader.RUN_MODULES, loader.baseline_kernels, loader.static_variant_kernels))
    progress(f"GPU kernels built or loaded in {built:.1f} s")
    static_graphs = {name: graphs[name] for name in params.graphs}
    write_csv_atomic(static_variants(static_graphs, VARIANTS, params.repeats, device, commit, progress,
                                     budget_s=params.budget_s, naive_variants=params.naive_variants,
                                     naive_max_edges=params.naive_max_edges), outputs.static)
    progress(f"{outputs.static} written")
    write_csv_atomic(kahn_table(kahn_cases(params, graphs), device, commit, repeats=params.repeats, log=progress,
                                budget_s=params.budget_s), outputs.kahn)
    progress(f"{outputs.kahn} written")
    write_csv_atomic(partition_ablation(batch_files, graphs, ABLATION_VARIANTS, params.reference_tolerance, device, commit,
                                   log=progress), outputs.ablation)
    progress(f"{outputs.ablation} written; bench done")
