"""dynpr's Static PageRank beside its peers on one prepared graph: ``results/peers/{dataset}.csv`` (rule ``peers``).

The rows (columns :data:`dynpr.evaluation.peer_programs.PEER_COLUMNS`), ``repeat`` timed runs each after
one untimed warm-up, on the same graph (self-loops included) and scored against the same reference
(:func:`dynpr.pagerank.reference`):

- ``dynpr``: :func:`dynpr.pagerank.static` on the config's backend;
- library peers (``peers.libraries``, each run where it can): ``cusparse``, the power iteration through
  CuPy's cuSPARSE SpMV in float64 (the bench's variant ``cusparse``, on a GPU only); ``torch_float32`` and
  ``torch_float64``, the same iteration with a ``torch.sparse`` CSR matrix (:func:`torch_static`, on the GPU
  where PyTorch sees one, else on the CPU); ``scipy``, its SciPy twin (:func:`scipy_static`). Each iterates
  ``R = (1 - alpha)/n + alpha * A R`` from ``1/n`` to the config's tolerance on the L-inf change (read by
  the host every iteration) or its iteration cap, and times the iterations only: the matrix is built and
  moved before the clock starts, as dynpr's Static times no upload;
- program peers (``peers.gunrock``, ``peers.hornet``): :mod:`dynpr.evaluation.peer_programs`, on the graph
  written as Matrix Market into the job's scratch folder.

``ms_per_iteration`` is ``time_ms / iterations`` (empty where a program gives no iteration count; a plain
build of Gunrock's does not, its ``iterations_program`` does);
``l1_error`` is against the reference over ``ranks_compared`` vertices (all for dynpr and the libraries,
the first ones Gunrock prints, none for Hornet).
"""

from __future__ import annotations

import importlib.util
import math
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from dynpr import __version__
from dynpr.backend import device_name, gpu_available, resolve_backend
from dynpr.evaluation.peer_programs import (DEFAULT_TIMEOUT_S, KINDS, PEER_COLUMNS, head_l1, program_iterations,
                                            program_version, run_program)
from dynpr.evaluation.results import git_commit, timestamp
from dynpr.graph.arrays import to_host
from dynpr.graph.graph import Graph
from dynpr.io.matrix_market import write_matrix_market
from dynpr.pagerank import l1_error, reference, static
from dynpr.pagerank.options import PageRankOptions
from dynpr.pipeline.jobs import Log, no_log

#: Library peers ``peers.libraries`` may list, and those run when it is not given.
LIBRARIES = ("cusparse", "torch", "scipy")
DEFAULT_LIBRARIES = ("cusparse", "torch")


@dataclass(frozen=True)
class LibraryRun:
    """One timed solve of a library peer; ``ranks`` float64 on the host."""

    ranks: np.ndarray
    iterations: int
    time_ms: float
    converged: bool


def power_iteration(matvec: Callable, ranks, c0: float, alpha: float, tolerance: float, max_iterations: int):
    """``R = c0 + alpha * matvec(R)`` from ``ranks`` until the L-inf change is at most ``tolerance`` or
    ``max_iterations`` ran; the change is read by the host every iteration, as a library user writes it.
    Works on NumPy, CuPy and PyTorch arrays alike (the scalars keep the arrays' precision).

    Returns
    -------
    ranks, iterations, converged
    """
    iterations = 0
    while True:
        new = matvec(ranks) * alpha + c0
        change = float(abs(new - ranks).max())
        ranks = new
        iterations += 1
        if change <= tolerance or iterations >= max_iterations:
            return ranks, iterations, change <= tolerance


def pull_weights(graph: Graph) -> np.ndarray:
    """The pull matrix's value of each in-edge ``u -> v`` (CSR of the transpose): ``1 / outdegree(u)``."""
    return (1.0 / np.maximum(np.diff(graph.offsets), 1))[graph.sources]


def scipy_static(graph: Graph, options: PageRankOptions) -> LibraryRun:
    """The power iteration with a SciPy CSR matrix in float64 (the twin of :func:`torch_static`)."""
    import scipy.sparse

    n = graph.num_vertices
    pull = scipy.sparse.csr_matrix((pull_weights(graph), graph.sources, graph.in_offsets), shape=(n, n))
    start = time.perf_counter()
    ranks, iterations, converged = power_iteration(pull.__matmul__, np.full(n, 1.0 / n), (1.0 - options.alpha) / n,
                                                   options.alpha, options.tolerance, options.max_iterations)
    return LibraryRun(ranks, iterations, (time.perf_counter() - start) * 1e3, converged)


def torch_static(graph: Graph, options: PageRankOptions, dtype: str, device: str) -> LibraryRun:
    """The power iteration with a ``torch.sparse`` CSR matrix (``torch.mv``) in ``dtype`` (``"float32"`` or
    ``"float64"``) on ``device`` (``"cpu"`` or ``"cuda"``), timed with CUDA events on the GPU."""
    import torch

    n, dt = graph.num_vertices, getattr(torch, dtype)
    pull = torch.sparse_csr_tensor(torch.from_numpy(graph.in_offsets.astype(np.int64)),
                                   torch.from_numpy(graph.sources.astype(np.int64)),
                                   torch.from_numpy(pull_weights(graph)).to(dt), size=(n, n), device=device)
    ranks = torch.full((n,), 1.0 / n, dtype=dt, device=device)
    args = ((1.0 - options.alpha) / n, options.alpha, options.tolerance, options.max_iterations)
    if device == "cpu":
        start = time.perf_counter()
        ranks, iterations, converged = power_iteration(lambda r: torch.mv(pull, r), ranks, *args)
        elapsed = (time.perf_counter() - start) * 1e3
    else:
        begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        begin.record()
        ranks, iterations, converged = power_iteration(lambda r: torch.mv(pull, r), ranks, *args)
        end.record()
        end.synchronize()
        elapsed = begin.elapsed_time(end)
    return LibraryRun(ranks.to(torch.float64).cpu().numpy(), iterations, elapsed, converged)


def cusparse_static(graph: Graph, options: PageRankOptions) -> LibraryRun:
    """The cuSPARSE power iteration through CuPy in float64: dynpr's variant ``cusparse``
    (:func:`dynpr.gpu.baselines.run_cusparse`), the bench's peer."""
    result = static(graph, replace(options, variant="cusparse"), backend="gpu")
    return LibraryRun(to_host(result.ranks), result.iterations, result.time_ms, result.converged)


@dataclass(frozen=True)
class Library:
    """A library peer as it runs here: row name, precision, backend, device, version and its solve."""

    peer: str
    precision: str
    backend: str
    device: str
    version: str
    solve: Callable[[Graph, PageRankOptions], LibraryRun]


def available_libraries(names: Sequence[str], backend: str, log: Log = no_log) -> list[Library]:
    """The library peers of ``names`` that can run here (``backend`` resolved: ``cpu`` or ``gpu``); each one
    left out is logged with the reason."""
    found = []
    for name in names:
        if name == "cusparse":
            if backend != "gpu":
                log("cusparse: skipped (needs the GPU backend and CuPy)")
                continue
            import cupy

            found.append(Library("cusparse", "float64", "gpu", device_name("gpu"), f"cupy {cupy.__version__}",
                                 cusparse_static))
        elif name == "torch":
            if importlib.util.find_spec("torch") is None:
                log("torch: skipped (PyTorch is not installed)")
                continue
            import torch

            on_gpu = backend == "gpu" and torch.cuda.is_available()
            device = "cuda" if on_gpu else "cpu"
            where = torch.cuda.get_device_name() if on_gpu else device_name("cpu")
            for dtype in ("float32", "float64"):
                found.append(Library(f"torch_{dtype}", dtype, "gpu" if on_gpu else "cpu", where,
                                     f"torch {torch.__version__}",
                                     lambda g, o, dt=dtype, dev=device: torch_static(g, o, dt, dev)))
        elif name == "scipy":
            import scipy

            found.append(Library("scipy", "float64", "cpu", device_name("cpu"), f"scipy {scipy.__version__}",
                                 scipy_static))
        else:
            raise ValueError(f"unknown library peer {name!r}; known: {', '.join(LIBRARIES)}")
    return found


def _row(dataset: str, peer: str, kind: str, graph: Graph, options: PageRankOptions, **fields) -> dict:
    iterations = fields.get("iterations")
    per_iteration = fields["time_ms"] / iterations if iterations else math.nan
    return {"dataset": dataset, "peer": peer, "kind": kind, "vertices": graph.num_vertices,
            "edges": graph.num_edges, "ms_per_iteration": per_iteration, "alpha": options.alpha,
            "tolerance": options.tolerance, "max_iterations": options.max_iterations, "settings": "",
            **fields, "iterations": math.nan if iterations is None else iterations}


def measure_peers(dataset: str, graph_path: str | Path, peers: Mapping, options: PageRankOptions, *,
                  backend: str = "auto", repeat: int = 3, reference_tolerance: float = 1e-100,
                  scratch: str | Path | None = None, log: Log = no_log) -> pd.DataFrame:
    """dynpr's Static, the library peers and the program peers on one prepared graph.

    Parameters
    ----------
    dataset : str
        The graph's name (rows and messages).
    graph_path : str or Path
        The prepared graph (``results/graphs/{dataset}.npz``).
    peers : mapping
        The config's ``peers`` section: ``libraries`` (default :data:`DEFAULT_LIBRARIES`) and, per program
        kind (:data:`dynpr.evaluation.peer_programs.KINDS`), ``{program: PATH}`` and optionally
        ``iterations_program: PATH``, a build that reports the iterations the timed one does not print;
        ``timeout_s``, the seconds each start of a program may run (default
        :data:`~dynpr.evaluation.peer_programs.DEFAULT_TIMEOUT_S`).
    options : PageRankOptions
        The config's PageRank options (alpha, tolerance, iteration cap).
    backend : {"auto", "cpu", "gpu"}
        dynpr's backend; the library peers follow it (cuSPARSE and torch on the GPU only with ``gpu``).
    repeat : int
        Timed runs of each, after one untimed warm-up.
    reference_tolerance : float
        Tolerance of the reference the L1 errors are measured against.
    scratch : str or Path, optional
        Folder for the Matrix Market file and the programs' working folder (a temporary folder inside it,
        removed at the end); the system's temporary folder when None.
    log : callable
        Progress and the programs' output.

    Returns
    -------
    DataFrame
        Columns :data:`~dynpr.evaluation.peer_programs.PEER_COLUMNS`, ``repeat`` rows per peer that ran.

    Raises
    ------
    dynpr.evaluation.peer_programs.PeerError
        For a configured program that cannot be run, runs past ``timeout_s`` or whose output does not parse.
    """
    graph = Graph.load(graph_path)
    backend = resolve_backend(backend)
    commit, stamp = git_commit(Path(__file__).parent), timestamp()
    rows = []

    static(graph, options, backend=backend)  # warm-up: compilation and first-use costs stay out of the rows
    runs = [static(graph, options, backend=backend) for _ in range(repeat)]
    ref = to_host(reference(graph, options, backend=backend, tolerance=reference_tolerance,
                            max_iterations=options.max_iterations, static_result=runs[-1]))
    for r, res in enumerate(runs):
        rows.append(_row(dataset, "dynpr", "dynpr", graph, options, precision="float64", backend=res.backend,
                         device=res.device, repeat=r, iterations=res.iterations, converged=res.converged,
                         time_ms=res.time_ms, l1_error=l1_error(to_host(res.ranks), ref),
                         ranks_compared=graph.num_vertices, version=f"dynpr {__version__}"))
    log(f"{dataset} dynpr: median {np.median([r.time_ms for r in runs]):.3f} ms, {runs[-1].iterations} iterations")

    for lib in available_libraries(peers.get("libraries", DEFAULT_LIBRARIES), backend, log):
        lib.solve(graph, options)
        for r in range(repeat):
            res = lib.solve(graph, options)
            rows.append(_row(dataset, lib.peer, "library", graph, options, precision=lib.precision,
                             backend=lib.backend, device=lib.device, repeat=r, iterations=res.iterations,
                             converged=res.converged, time_ms=res.time_ms, l1_error=l1_error(res.ranks, ref),
                             ranks_compared=graph.num_vertices, version=lib.version))
        log(f"{dataset} {lib.peer}: last {res.time_ms:.3f} ms, {res.iterations} iterations, converged "
            f"{res.converged}")

    programs = {kind: peers[kind] for kind in KINDS if kind in peers}
    if programs:
        timeout_s = float(peers.get("timeout_s", DEFAULT_TIMEOUT_S))
        rows += _program_rows(dataset, graph, programs, options, ref, repeat, scratch, timeout_s, log)
    table = pd.DataFrame(rows).assign(git_commit=commit, timestamp=stamp)
    return table.reindex(columns=list(PEER_COLUMNS))


def _program_rows(dataset, graph, programs, options, ref, repeat, scratch, timeout_s, log) -> list[dict]:
    rows = []
    device = device_name("gpu") if gpu_available() else ""
    with tempfile.TemporaryDirectory(prefix=f".peers-{dataset}-", dir=scratch) as folder:
        mtx = Path(folder) / f"{dataset}.mtx"
        write_matrix_market(*graph.edges(), graph.num_vertices, mtx)
        log(f"{dataset}: wrote {mtx.stat().st_size / 1e6:.1f} MB Matrix Market ({graph.num_edges} entries)")
        for kind, entry in programs.items():
            spec, program = KINDS[kind], entry["program"]
            work = Path(folder) / kind
            work.mkdir()
            found = run_program(kind, program, mtx, dataset, repeat, work, log, timeout_s)
            version, settings, counted = program_version(Path(program).expanduser()), spec.settings, None
            if entry.get("iterations_program") and any(run.iterations is None for run in found):
                counter = Path(entry["iterations_program"]).expanduser()
                (work / "iterations").mkdir()
                counted = program_iterations(kind, counter, mtx, dataset, work / "iterations", log, timeout_s)
                settings += f"; iterations counted by iterations_program {program_version(counter)}"
            for r, run in enumerate(found):
                error, compared = head_l1(run.ranks, ref)
                iterations = counted if run.iterations is None else run.iterations
                rows.append(_row(dataset, kind, "program", graph, options, precision=spec.precision,
                                 backend="gpu", device=device, repeat=r, iterations=iterations,
                                 converged=spec.converged(options.tolerance, options.max_iterations, iterations),
                                 time_ms=run.time_ms, l1_error=error, ranks_compared=compared, alpha=spec.alpha,
                                 tolerance=spec.tolerance, max_iterations=spec.max_iterations or math.nan,
                                 settings=settings, version=version))
            log(f"{dataset} {kind}: {len(found)} runs, last {found[-1].time_ms:.3f} ms, "
                f"{found[-1].iterations if counted is None else counted} iterations")
    return rows
