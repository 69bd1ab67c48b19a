"""Peak host memory of each pipeline job: one model, measured, for Snakemake's ``mem_mb``.

Every rule that holds a graph declares ``mem_mb`` from :func:`job_bytes`, computed
from the catalog's counts alone (the DAG never depends on files that do not exist
yet), so ``snakemake --resources mem_mb=M`` never starts jobs whose peaks add up to
more than M (and refuses, :func:`check_memory_limit`, a job whose own peak is more). The terms follow what each job holds at its peak:

- every job: the interpreter with NumPy, SciPy, pandas and dynpr
  (:data:`PROCESS_BYTES`), plus a CUDA context and CuPy where it uses the GPU
  (:data:`CUDA_PROCESS_BYTES`);
- a job that reads a prepared graph maps it (:mod:`dynpr.graph.npz_files`: its pages count
  in the resident set as they are read) and checks it chunk by chunk on up to
  threads (chunks of :data:`CHECK_CHUNK_EDGES`, :data:`CHECK_BYTES_PER_EDGE` each,
  and :data:`CHECK_BYTES_PER_VERTEX`); the check gives each chunk's pages back, so only
  a job that reads the graph again afterwards holds all of it;
- ``prepare``: parsing a file (its int64 id columns, then :func:`dynpr.graph.hostmem.build_bytes`,
  the model the readers check before they allocate) or generating a graph
  (:data:`PREPARE_BYTES_PER_EDGE` per drawn edge, by where it is drawn);
- ``random_batches``: the out-CSR it reads again after the check, the self-loop
  positions and what the deletions' ranks are mapped through
  (:data:`SAMPLING_BYTES_PER_VERTEX`) and the sampling scratch of a batch
  (:data:`BATCH_BYTES_PER_EDGE` per batch edge);
- ``run_experiment``: on the CPU the graph, the new graph of a batch and the engine's
  SciPy matrix and vectors; on the GPU the check's scratch and a batch: the graph is
  checked, hashed and uploaded part by part, each part's pages given back.

The coefficients come from peak RSS measured job by job (on the 2-core machine, as
``tests/test_footprint.py`` runs each job, and ``benchmarks/load_memory.py`` step by step; in
the pipeline on the H100 host, the peak each job's log ends with: docs/scaling.md).
``tests/test_footprint.py`` measures each job again at small scale and holds the model within
25% of it and of every committed H100 peak.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

from dynpr.errors import InputError
from dynpr.graph.hostmem import CPU_ENGINE_BYTES_PER_EDGE, CPU_ENGINE_BYTES_PER_VERTEX, build_bytes

#: The interpreter with NumPy, SciPy, pandas and dynpr imported (83 MiB measured on the 2-core machine).
PROCESS_BYTES = 100 << 20
#: Host memory of a CUDA context with CuPy and its kernels loaded (what the H100 run jobs held beyond the
#: graph, its check and the batch: docs/scaling.md).
CUDA_PROCESS_BYTES = 600 << 20
#: Scratch per edge of a chunk while a prepared graph is checked (:func:`dynpr.graph.validate.check_graph`):
#: 32-34 measured at rmat-22 on the 2-core machine and where each thread checks several chunks on the
#: 16-core H100 host (rmat-24 to 26); 26 there where every chunk has a thread of its own (rmat-20:
#: five chunks, one round of threads).
CHECK_BYTES_PER_EDGE, CHECK_BYTES_PER_EDGE_ONE_ROUND = 32, 26
#: Per vertex while a side of the graph is checked: its offsets' pages, their differences and the self-loop flags.
CHECK_BYTES_PER_VERTEX = 17
#: Edges per checked chunk (``dynpr.graph.csr_checks``' ``_CHUNK``), and how many chunks' scratch the peak holds:
#: one per checking thread (at most 8, one per core): the run jobs of rmat-24 to 26 on the 16-core H100 host
#: peaked at 17 bytes per vertex plus 1.21-1.23 GB (the process and eight chunks' 1.07 GB) once the graph's
#: pages were given back chunk by chunk; two on 2 cores.
CHECK_CHUNK_EDGES, CHECK_CHUNKS_AT_PEAK = 1 << 22, min(8, os.cpu_count() or 1)
#: Peak bytes per drawn edge of ``prepare`` for a generated graph: drawn on the host (one NumPy stream up
#: to scale 22: 28 measured on the 2-core machine, 38 on the H100 host at rmat-20), or on the GPU (which
#: sends the CSR to the host group by group; 10.5 puts every GPU-drawn graph of
#: docs/measurements/scale/pipeline_509db18*/ within 0.79-1.24 of its measured peak).
PREPARE_BYTES_PER_EDGE = {"rmat-cpu": 33, "rmat-gpu": 10.5}
#: Per vertex while a random batch is sampled: the self-loop positions, those kept (every vertex has
#: one), and the rank each is the first non-loop edge after with its ``arange`` (``random_batch``).
SAMPLING_BYTES_PER_VERTEX = 32
#: Scratch per edge of a random batch while it is drawn and written.
BATCH_BYTES_PER_EDGE = 32
#: The CPU engine's Static time per edge and iteration: web-NotreDame (1.8M edges with self-loops,
#: 78 iterations) took 195 ms, 1.4 ns, in the main job on the 2-core development machine. Graphs
#: that do not fit the caches run slower: an estimate from it is a floor.
CPU_SECONDS_PER_EDGE_ITERATION = 1.4e-9
#: Iterations of a full-graph solve at paper scale (Static takes 53-64 on the R-MAT graphs).
SOLVE_ITERATIONS = 60


def graph_bytes(num_vertices: int, num_edges: int, vertex_ids: bool = True) -> int:
    """Bytes of a graph in memory and in its ``.npz``: int64 offsets and int32 ids of the CSR and its
    transpose, and, where the input named its vertices (not a generated graph, whose ids are its
    indices), the int64 original id of each vertex."""
    return 16 * (num_vertices + 1) + 8 * num_edges + (8 * num_vertices if vertex_ids else 0)


def check_bytes(num_vertices: int, num_edges: int) -> int:
    """What checking a mapped graph holds besides the graph's own pages: the chunks being checked
    (fewer bytes each where one round of threads checks them all)."""
    in_flight = CHECK_CHUNKS_AT_PEAK * CHECK_CHUNK_EDGES
    if num_edges <= in_flight:
        return CHECK_BYTES_PER_EDGE_ONE_ROUND * num_edges
    return CHECK_BYTES_PER_EDGE * in_flight


def checking_bytes(num_vertices: int, num_edges: int) -> int:
    """A job's peak while it checks a mapped graph it does not read again: per vertex the side's
    offsets and their differences (:data:`CHECK_BYTES_PER_VERTEX`) and the chunks in flight, whose
    pages are given back as each is done."""
    return CHECK_BYTES_PER_VERTEX * num_vertices + check_bytes(num_vertices, num_edges)


def load_bytes(num_vertices: int, num_edges: int, vertex_ids: bool = True) -> int:
    """A prepared graph mapped and checked, for a job that reads all of it again afterwards: the graph's
    bytes and the chunks being checked."""
    return graph_bytes(num_vertices, num_edges, vertex_ids) + check_bytes(num_vertices, num_edges)


def prepare_bytes(input_edges: int, num_vertices: int, num_edges: int, source: str, temporal_edges: int = 0) -> int:
    """Peak of ``prepare`` (``source``: ``"file"`` or a key of :data:`PREPARE_BYTES_PER_EDGE`): a file's
    int64 id columns (and times) and the graph built from them, or a generated graph; a temporal graph
    also keeps its time-ordered edge list."""
    process = PROCESS_BYTES + (CUDA_PROCESS_BYTES if source == "rmat-gpu" else 0)
    if source == "file":
        work = 8 * (3 if temporal_edges else 2) * input_edges + build_bytes(input_edges, num_vertices)
    else:
        work = math.ceil(PREPARE_BYTES_PER_EDGE[source] * input_edges)
    return process + max(work, graph_bytes(num_vertices, num_edges, source == "file")) + 16 * temporal_edges


def random_batches_bytes(num_vertices: int, num_edges: int, batch_edges: int, vertex_ids: bool = True) -> int:
    """Peak of ``random_batches``: the graph's check (its pages given back chunk by chunk), then the
    sampling, which reads the out-CSR again (self-loop positions, deleted edges, insertion candidates'
    rows; the transpose is not read again), holds the self-loop positions and what is derived from
    them (:data:`SAMPLING_BYTES_PER_VERTEX`), what the check's threads left allocated
    (:func:`check_bytes`) and a batch's scratch."""
    n, m = num_vertices, num_edges
    out_csr = 8 * (n + 1) + 4 * m
    sampling = out_csr + SAMPLING_BYTES_PER_VERTEX * n + check_bytes(n, m) + BATCH_BYTES_PER_EDGE * batch_edges
    return PROCESS_BYTES + max(checking_bytes(n, m), sampling)


def temporal_bytes(num_vertices: int, num_edges: int, temporal_edges: int) -> int:
    """Peak of ``temporal_base`` / ``temporal_batches``: the graph checked, its temporal edges, and the
    base graph built from them (keys and CSR, ~40 bytes per temporal edge)."""
    return PROCESS_BYTES + load_bytes(num_vertices, num_edges) + (16 + 40) * temporal_edges


def experiment_bytes(num_vertices: int, num_edges: int, batch_edges: int, gpu: bool, vertex_ids: bool = True) -> int:
    """Peak of ``run_experiment``: on the GPU the larger of the graph's check (its pages are given back
    part by part as it is checked, hashed and uploaded) and the runs (the CUDA context and a batch
    file); on the CPU the graph, a batch's new graph and the engine."""
    n, m = num_vertices, num_edges
    if gpu:
        return PROCESS_BYTES + max(checking_bytes(n, m), CUDA_PROCESS_BYTES + 8 * batch_edges)
    engine = CPU_ENGINE_BYTES_PER_EDGE * (m + batch_edges) + CPU_ENGINE_BYTES_PER_VERTEX * n
    return PROCESS_BYTES + 2 * graph_bytes(n, m + batch_edges, vertex_ids) + engine + 8 * batch_edges


def bench_bytes(graphs, report_sizes=(), report_density: float = 0.5) -> int:
    """Peak of ``bench`` (GPU only): the largest of its graphs checked, with its copy without self-loops
    for Kahn (``graphs``: :class:`Counts`), or the largest of the Kahn report's dense matrices (n^2
    bytes) with its CSR and transpose and the transpose's scratch (24 bytes per edge)."""
    graph = max((load_bytes(c.vertices, c.edges, c.vertex_ids) + graph_bytes(c.vertices, c.edges, c.vertex_ids)
                 for c in graphs), default=0)
    dense = max((n * n + 24 * math.ceil(report_density * n * n) for n in report_sizes), default=0)
    return PROCESS_BYTES + CUDA_PROCESS_BYTES + max(graph, dense)


def mem_mb(nbytes: int) -> int:
    """Snakemake's ``mem_mb`` (megabytes, 10^6 bytes, as Snakemake counts them) for a peak of ``nbytes``."""
    return max(1, math.ceil(nbytes / 1e6))


def check_memory_limit(needed_mb: int, limit_mb, what: str) -> None:
    """Refuse a job whose modelled peak exceeds ``snakemake --resources mem_mb=LIMIT``: Snakemake would
    cap the job's ``mem_mb`` to the limit without a word and start jobs whose peaks add up to more.

    Parameters
    ----------
    needed_mb : int
        The job's :func:`mem_mb`.
    limit_mb : int, str or None
        The ``mem_mb`` of ``--resources`` (None: not given).
    what : str
        The job, for the message.

    Raises
    ------
    InputError
        ``<what> needs N MB of host memory (the modelled peak), more than --resources mem_mb=L; ...``.
    """
    if limit_mb is None or needed_mb <= int(limit_mb):
        return
    raise InputError(f"{what} needs {needed_mb:,} MB of host memory (the modelled peak), more than --resources "
                     f"mem_mb={limit_mb}, which Snakemake would silently shrink the job to: give at least "
                     f"mem_mb={needed_mb}, or leave mem_mb out")


@dataclass(frozen=True)
class Counts:
    """What the model needs of a dataset, from the catalog alone: the edges ``prepare`` reads or draws,
    the prepared graph's vertices and edges (self-loops included; an upper bound where duplicates
    are removed), the temporal edges, and the ``prepare`` source (``"file"`` or a key of
    :data:`PREPARE_BYTES_PER_EDGE`)."""

    input_edges: int
    vertices: int
    edges: int
    temporal_edges: int
    source: str

    @property
    def vertex_ids(self) -> bool:
        """Whether the prepared graph stores original vertex ids (a generated graph's are its indices)."""
        return self.source == "file"


def dataset_counts(dataset, gpu: bool = False) -> Counts:
    """:class:`Counts` of a catalog entry (:class:`dynpr.io.catalog.Dataset`); ``gpu``: a generated graph of the
    counter-based stream is drawn on the GPU (:func:`dynpr.generate.rmat.counter_stream`)."""
    if dataset.kind == "generated":
        from dynpr.generate.rmat import counter_stream

        n, drawn = 1 << dataset.scale, dataset.edge_factor << dataset.scale
        on_gpu = gpu and counter_stream(dataset.scale, dataset.edge_factor)
        return Counts(drawn, n, drawn + n, 0, "rmat-gpu" if on_gpu else "rmat-cpu")
    n, edges, temporal = dataset.vertices or 0, dataset.edges or 0, dataset.temporal_edges or 0
    return Counts(temporal or edges, n, edges + n, temporal, "file")


def job_bytes(rule: str, dataset, *, fraction: float = 0.0, gpu: bool = False) -> int:
    """Modelled peak host bytes of one job of ``rule`` on a catalog entry: ``prepare``,
    ``random_batches`` / ``temporal_base`` / ``temporal_batches`` (``fraction``: the batch's share of
    the edges) or ``run_experiment`` (``fraction``: the largest), ``gpu`` where the job uses the GPU."""
    c = dataset_counts(dataset, gpu)
    batch_edges = math.ceil(fraction * (c.temporal_edges or c.edges - c.vertices))
    if rule == "prepare":
        return prepare_bytes(c.input_edges, c.vertices, c.edges, c.source, c.temporal_edges)
    if rule == "random_batches":
        return random_batches_bytes(c.vertices, c.edges, batch_edges, c.vertex_ids)
    if rule in ("temporal_base", "temporal_batches"):
        return temporal_bytes(c.vertices, c.edges, c.temporal_edges)
    if rule == "run_experiment":
        return experiment_bytes(c.vertices, c.edges, batch_edges, gpu, c.vertex_ids)
    raise ValueError(f"no memory model for rule {rule!r}")


def cpu_experiment_seconds(num_edges: int, fractions: int, approaches: int, repeat: int) -> float:
    """A floor on ``run_experiment``'s time on the CPU engine: per fraction every approach's warm-up and
    ``repeat`` timed runs and the reference (about three Static solves), each counted as a full-graph
    solve of :data:`SOLVE_ITERATIONS` at :data:`CPU_SECONDS_PER_EDGE_ITERATION`. (DF-P iterates fewer
    vertices; cache misses on large graphs cost more than the rate's small graph paid.)"""
    solves = fractions * (approaches * (repeat + 1) + 3)
    return solves * SOLVE_ITERATIONS * num_edges * CPU_SECONDS_PER_EDGE_ITERATION
