"""Will a graph fit on the GPU? A stated byte model, checked before allocating.

The model follows the arrays :mod:`dynpr.gpu.pagerank`,
:mod:`dynpr.gpu.baselines` and :mod:`dynpr.gpu.kahn` keep on the device during
one run (n = vertices, m = edges including the self-loop on every vertex,
b = deletions + insertions of the batch).

PageRank with the default variant (``classes``) and the other kernel
designs run by :class:`dynpr.gpu.iterations.IterationLoop` (each design's
class count, contributions and fusion are declared in :data:`dynpr.designs.VARIANTS`)
is modelled by summing the buffer lists of :mod:`dynpr.gpu.buffers`, the same lists
the components allocate from; the table below is what they come to:

=============================  ===================================  ==============
array                          dtype and length                     bytes
=============================  ===================================  ==============
out CSR (offsets, targets)     int64 n+1, int32 m                   8(n+1) + 4m
in CSR (in_offsets, sources)   int64 n+1, int32 m                   8(n+1) + 4m
inverse out-degree 1/d[u]      float64 n                            8n
degree scratch at upload       int64 n (offsets differences)        8n
rank vectors R, Rnew           float64 n each                       16n
contributions C, Cnew (PRC)    float64 n each (float32 for          16n (8n)
                               ``classes_c32``)
in-degree classes (listed)     int32 k x n ids                      4kn
class bounds                   int64 k-1 (at least one)             8 max(k-1, 1)
class plan (listed)            int32 ClassPlan (class sizes, first  40
                               units, total, ticket)
affected flags δV              uint8 n                              n
convergence                    float64 change and push work, 6      132
                               int32 state, 3 slots of both, 3
                               int32 work and 4 uint64 barrier
                               counters (persistent)
batch edge lists               int32 source/target per edge         8b
=============================  ===================================  ==============

k = 4 classes for ``classes``/``classes_sync``/``classes_unfused`` (2 for
``partitioned_prc``); they are listed unless ``partition="none"`` (then the
kernels select vertices by degree: no ids or plan). The batch is counted as if
every edge were a deletion (two ids each; an insertion keeps one). ``classes`` and
``classes_sync`` run one fused launch per iteration at every level. ``pull_*`` and ``push_atomic`` keep neither classes nor
contributions; ``push_atomic`` adds its float64 accumulator, 8n. Per approach,
in addition:

- ``static``, ``nd``: nothing; with ``classes`` on a graph it relabels (every approach)
  (``relabel``: contributions over half the L2, :func:`dynpr.designs.relabels`)
  the relabelled in CSR, 1/d and starting ranks, 8(n+1) + 4m + 16n, the
  int64 degrees 8n, int32 new ids 4n and the sort's int64 keys and order 16n:
  8(n+1) + 4m + 44n; DT also the flags of its search in the original ids, n.
- ``df``, ``dfp``: ever-affected flags, n; with a fused launch two
  expansion buffers (dx_in, dx_out), 2n; otherwise δN, n, and with
  ``partition="in_out"`` the out-degree partition (int32 flag, scan, ids), 12n.
- ``dt``: the BFS's int32 visited flags and two levels of int32 entries,
  4n + 8n, and its four int32 control words, 16 (one search of the new graph
  finds the old graph's reach too, so the old graph stays on the host).

The baseline ``partitioned`` keeps the graph, R and Rnew, three uint8 flag
vectors (3n), the in-degree partition (12n, and the out-degree one for DF/DF-P
with ``in_out``), one float64 change slot per iteration (8 max_iterations),
the batch (8b) and for DT the old graph, three uint8 BFS vectors and a
counter (3n + 4). ``cusparse`` (Static/ND) keeps the graph, R, the pull
matrix's values and int32 row offsets (8m + 4(n+1)) and three float64 n-vector
temporaries per iteration (24n).

Kahn (``kahn``, :func:`dynpr.gpu.kahn._buffers`): out CSR and in offsets,
16(n+1) + 4m, five int32 vectors (in-degree, flags, scan, two frontiers), 20n,
and the per-level frontier sizes, 4(n+1).

Kernel modules, the CUDA context, CUDA graphs (captured iterations), CUB
scratch and the CuPy pool's rounding are not in the model; :func:`check_fits`
keeps ``reserve_bytes`` free for them.
"""

from __future__ import annotations

import contextlib

from dynpr.designs import APPROACH_FLAGS, APPROACHES, PARTITIONS, RELABEL_APPROACHES, VARIANTS, relabels
from dynpr.gpu import buffers
from dynpr.graph.hostmem import GIB

#: Bytes kept back for compiled kernels, CUB temporary storage and CuPy pool rounding.
DEFAULT_RESERVE_BYTES = 256 << 20
#: Approach codes the model knows: the PageRank approaches and Kahn's algorithm.
MODEL_APPROACHES = APPROACHES + ("kahn",)
_INT32_MAX = (1 << 31) - 1


def free_device_bytes() -> int:
    """Device memory a new allocation can get: ``cudaMemGetInfo``'s free bytes plus what
    CuPy's pool holds unused, on the current device."""
    import cupy  # lazy: the CPU path never imports CuPy

    return cupy.cuda.runtime.memGetInfo()[0] + cupy.get_default_memory_pool().free_bytes()


def device_bytes_needed(
    num_vertices: int,
    num_edges: int,
    approach: str,
    *,
    batch_edges: int = 0,
    partition: str = "in_out",
    max_iterations: int = 500,
    variant: str = "classes",
    relabel: bool = False,
    personalized: bool = False,
) -> int:
    """Bytes of device memory one run of ``approach`` needs on a graph, per the module's model.

    Parameters
    ----------
    num_vertices : int
        n, the number of vertices (vertex ids are int32, so n < 2**31).
    num_edges : int
        m, the number of edges as stored, self-loops included (offsets are int64,
        so m may exceed 2**31).
    approach : str
        One of ``static nd dt df dfp`` or ``kahn``.
    batch_edges : int
        Deletions plus insertions of the batch copied to the device (0 for static runs).
    partition : str
        ``PageRankOptions.partition``: ``none``, ``in`` or ``in_out``.
    max_iterations : int
        ``PageRankOptions.max_iterations`` (the baseline keeps one convergence slot per iteration).
    variant : str
        ``PageRankOptions.variant`` (None is the default, ``classes``); ignored for ``kahn``.
    relabel : bool
        Whether the default relabels the graph (counted for ``classes`` with ``static``/``nd`` only).
    personalized : bool
        Whether the run has a teleport vector (``PageRankOptions.personalization``).

    Returns
    -------
    int
        The modelled bytes, without the reserve :func:`check_fits` adds.

    Raises
    ------
    ValueError
        On an unknown approach, partition or variant, a negative count, or n too large for int32 ids.
    """
    n, m, b = int(num_vertices), int(num_edges), int(batch_edges)
    if approach not in MODEL_APPROACHES:
        raise ValueError(f"approach must be one of {MODEL_APPROACHES}, got {approach!r}")
    if partition not in PARTITIONS:
        raise ValueError(f"partition must be one of {PARTITIONS}, got {partition!r}")
    if min(n, m, b, max_iterations) < 0:
        raise ValueError(
            f"counts must be >= 0, got vertices={n} edges={m} batch_edges={b} max_iterations={max_iterations}"
        )
    if n > _INT32_MAX:
        raise ValueError(f"{n} vertices do not fit int32 vertex ids (at most {_INT32_MAX})")

    variant = variant or "classes"
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {tuple(VARIANTS)}, got {variant!r}")
    if approach == "kahn":
        return 20 * (n + 1) + 4 * m + 20 * n

    graph = buffers.nbytes(buffers.GRAPH, buffers.RunShape(n, m))  # both CSRs, 1/d and its upload scratch
    frontier = approach in ("df", "dfp")
    if variant == "cusparse":
        return graph + 8 * n + 8 * m + 4 * (n + 1) + 24 * n
    if variant == "partitioned":
        partitions = (partition != "none") + (partition == "in_out" and frontier)
        total = graph + 16 * n + 3 * n + 12 * n * partitions + 8 * max_iterations + 8 * b
        return total + (graph + 3 * n + 4 if approach == "dt" else 0)
    return sum(buffers.nbytes(component, shape) for component, shape in run_components(n, m, b, approach, partition,
                                                                                        variant, relabel, personalized))


def run_components(n: int, m: int, b: int, approach: str, partition: str, variant: str, relabel: bool,
                   personalized: bool = False):
    """(buffer list of :mod:`dynpr.gpu.buffers`, :class:`~dynpr.gpu.buffers.RunShape`) of each component
    an :class:`~dynpr.gpu.iterations.IterationLoop` run of ``variant`` keeps on the device (DT's
    search counted as run in launches of its own, the larger case)."""
    design, flags = VARIANTS[variant], APPROACH_FLAGS[approach]
    k = design.classes
    relabelled = relabel and design.relabel and approach in RELABEL_APPROACHES
    shape = buffers.RunShape(n, m, deletions=b, classes=k if partition != "none" and k > 1 else 0,
                             bounds=max(k - 1, 1), prc=design.prc, fused=design.fused, affected=flags.affected,
                             frontier=flags.frontier, dt_search=approach == "dt", relabel=relabelled,
                             contribution=design.contribution, personalized=personalized)
    components = [(buffers.GRAPH, shape), (buffers.LOOP, shape)]
    if personalized:
        components.append((buffers.TELEPORT, shape))
    if k:
        components.append((buffers.CLASSES, shape))
    if variant == "push_atomic":  # its float64 accumulator
        components.append((buffers.PUSH, shape))
    if flags.frontier and not design.fused and partition == "in_out":  # the expansion's out-degree partition
        components.append((buffers.PARTITION, shape))
    if shape.dt_search:
        components.append((buffers.DT_SEARCH, shape))
    if relabelled:
        components.append((buffers.RELABEL, shape))
    return components


def check_fits(
    num_vertices: int,
    num_edges: int,
    approach: str,
    free_bytes: int | None = None,
    *,
    batch_edges: int = 0,
    partition: str = "in_out",
    max_iterations: int = 500,
    variant: str = "classes",
    relabel: bool = False,
    personalized: bool = False,
    resident_bytes: int = 0,
    reserve_bytes: int = DEFAULT_RESERVE_BYTES,
) -> int:
    """Raise ``MemoryError`` before allocating when a graph will not fit on the GPU.

    Call it before the first device allocation of a run.

    Parameters
    ----------
    num_vertices, num_edges, approach, batch_edges, partition, max_iterations, variant, relabel, personalized
        As for :func:`device_bytes_needed`.
    free_bytes : int, optional
        Free device memory; default :func:`free_device_bytes` (tests on the CPU pass it explicitly).
    resident_bytes : int
        Bytes of the model already on the device (a graph uploaded by an earlier
        run), not allocated again.
    reserve_bytes : int
        Memory kept back for what the model leaves out (kernels, CUB scratch,
        pool rounding).

    Returns
    -------
    int
        The modelled bytes still to allocate (for logging).

    Raises
    ------
    MemoryError
        When needed + reserve exceeds the free memory; the message states both
        in GiB and in bytes.
    """
    needed = device_bytes_needed(
        num_vertices, num_edges, approach, batch_edges=batch_edges, partition=partition, max_iterations=max_iterations,
        variant=variant, relabel=relabel, personalized=personalized,
    ) - resident_bytes
    if free_bytes is None:
        free_bytes = free_device_bytes()
    if needed + reserve_bytes > free_bytes:
        raise MemoryError(
            f"graph needs {needed / GIB:.2f} GiB on the GPU, device has {free_bytes / GIB:.2f} GiB free "
            f"({needed} bytes + {reserve_bytes} reserved > {free_bytes} bytes; {approach} on "
            f"{num_vertices} vertices, {num_edges} edges): use a GPU with more memory or --backend cpu"
        )
    return needed


def experiment_device_bytes(
    num_vertices: int,
    num_edges: int,
    batch_edges: int,
    approaches,
    options,
    *,
    repeat: int = 1,
    temporal: bool = False,
    relabel: bool = False,
) -> dict[str, int]:
    """Device bytes of :func:`dynpr.evaluation.experiments.run_batches` at its largest batch, item by item.

    The random experiment holds one graph (CSR and transpose) and applies each batch to it in
    place, one CSR at a time (:func:`dynpr.batches.apply_batch_in_place`), undoing it after the
    runs: the apply holds the graph, one new CSR and the splice's scratch, never a second
    graph. The runs hold the graph with its 1/d, the batch, the base ranks and the largest
    approach's own buffers; the reference ranks wait on the host while the other approaches
    run, Static's ``repeat`` results are kept until it is computed. The temporal experiment
    (and DT in the paper's design, :func:`dynpr.evaluation.experiments.keeps_old_graph`) keeps each
    batch's old graph beside the new one; the temporal one also its base and full graph and each
    approach's ranks from batch to batch. Peak = the larger of the apply and the run phase.

    Parameters
    ----------
    num_vertices, num_edges : int
        n and m of the base graph (self-loops included).
    batch_edges : int
        Deletions plus insertions of the largest batch.
    approaches : sequence of str
    options : PageRankOptions
    repeat : int
        Timed runs per approach and batch (Static's are kept until the reference is computed).
    temporal : bool
        The temporal experiment (batches applied one after another).
    relabel : bool
        Whether the default relabels a graph of n vertices on this device.

    Returns
    -------
    dict of str to int
        ``graphs`` (the graphs held, 1/d included), ``batch``, ``ranks`` (kept rank vectors),
        ``apply`` (beyond the graphs held: the new CSR or graph and the splice's scratch),
        ``run`` (the largest approach's own buffers beyond the graph) and ``peak``.
    """
    n, m, b = int(num_vertices), int(num_edges), int(batch_edges)
    new_m = m + b
    arrays = _kept_graph_bytes(n, new_m) - 8 * n  # CSR and transpose
    copies = temporal or ("dt" in approaches and options.variant == "partitioned")
    # held during the runs: the graph with its 1/d, and where it is kept, the old graph (with its
    # 1/d); the temporal experiment's base and full graph too
    graphs = _kept_graph_bytes(n, new_m) * (4 if temporal else 2 if copies else 1)
    # the splice (splice_csr): one byte per entry of the new CSR, the kept columns and two masks of
    # a piece (an eighth of the entries), the offsets' shift and scan, and the batch's edge lists and
    # positions in both CSRs (48 bytes per edge at most); before it, the batch's sorts and searches
    # (64 per edge), on the first batch with the search for vertices without their self-loop (an
    # int64 query, bounds and position each)
    splice = new_m + 7 * -(-m // 8) + 16 * (n + 1) + 48 * b
    resolve = max(64 * b, 40 * n + 24 * b)
    if copies:  # a whole new graph beside the old ones
        apply = max(arrays + splice, resolve)
    else:  # one new CSR beside the graph, whose 1/d went with the old graph object
        apply = max(8 * (n + 1) + 4 * new_m + splice, resolve) - 8 * n
    count = len(approaches)
    # the base ranks; the temporal experiment also carries each approach's ranks from the previous
    # batch and keeps this batch's for the next
    ranks = 8 * n * (1 + (2 * count if temporal else 0))
    run = 0
    graph_buffers = buffers.nbytes(buffers.GRAPH, buffers.RunShape(n, new_m))
    for approach in approaches:
        need = device_bytes_needed(n, new_m, approach, batch_edges=b, partition=options.partition,
                                   max_iterations=options.max_iterations, variant=options.variant or "classes",
                                   relabel=relabel)
        # its graph is the resident new one; the reference is a Static run beside Static's results
        kept = 8 * n * int(repeat) if approach == "static" else 0
        run = max(run, need - graph_buffers + kept)
    peak = graphs + 8 * b + ranks + max(apply, run)
    return {"graphs": graphs, "batch": 8 * b, "ranks": ranks, "apply": apply, "run": run, "peak": peak}


def _kept_graph_bytes(n: int, m: int) -> int:
    """Bytes of a graph kept on the device between runs: :data:`dynpr.gpu.buffers.GRAPH` without the
    upload's scratch."""
    shape = buffers.RunShape(n, m)
    return sum(buffers.nbytes((b,), shape) for b in buffers.GRAPH if not b.transient)


def check_experiment_fits(num_vertices: int, num_edges: int, batch_edges: int, approaches, options, *,
                          repeat: int = 1, temporal: bool = False, free_bytes: int | None = None,
                          reserve_bytes: int = DEFAULT_RESERVE_BYTES) -> tuple[str, int]:
    """Refuse, before the graph is uploaded, an experiment whose largest batch will not fit the GPU.

    Returns
    -------
    text : str
        The plan, item by item in GiB, for the run log.
    peak : int
        The plan's peak bytes (:func:`experiment_device_bytes`).

    Raises
    ------
    dynpr.errors.DeviceMemoryError
        One line naming the plan's items, the peak and the free memory.
    """
    from dynpr.errors import DeviceMemoryError

    if free_bytes is None:
        free_bytes = free_device_bytes()
        import cupy

        l2_bytes = cupy.cuda.Device().attributes["L2CacheSize"]
    else:  # planned for a given amount of memory (tests, a machine to come): relabel as on an H100's L2
        l2_bytes = 50 << 20
    plan = experiment_device_bytes(num_vertices, num_edges, batch_edges, approaches, options, repeat=repeat,
                                   temporal=temporal, relabel=relabels(num_vertices, l2_bytes))
    text = ", ".join(f"{item} {size / GIB:.2f} GiB" for item, size in plan.items())
    if plan["peak"] + reserve_bytes > free_bytes:
        raise DeviceMemoryError(
            f"the experiment needs {plan['peak'] / GIB:.2f} GiB on the GPU at its largest batch "
            f"({batch_edges} edges on {num_vertices} vertices, {num_edges} edges; {text}), the device has "
            f"{free_bytes / GIB:.2f} GiB free: leave out the largest batch fractions or use a GPU with more memory")
    return text, plan["peak"]


class PoolPeak:
    """Peak bytes in use in CuPy's default pool, through an allocator that records each allocation
    (one Python call per ``malloc``; CuPy keeps no peak of its own), overall and per named phase
    (:meth:`phase`). Installed on creation. ``plan_bytes``: the plan's peak, logged beside."""

    def __init__(self, plan_bytes: int | None = None):
        import cupy

        self.cupy = cupy
        self.pool = cupy.get_default_memory_pool()
        self.peak = self.phase_peak = self.pool.used_bytes()
        self.phases: dict[str, int] = {}
        self.plan_bytes = plan_bytes

        def malloc(size):
            memory = self.pool.malloc(size)
            used = self.pool.used_bytes()
            self.peak, self.phase_peak = max(self.peak, used), max(self.phase_peak, used)
            return memory

        cupy.cuda.set_allocator(malloc)

    def reset(self) -> None:
        """Give the pool's unused blocks back to the device and restart the peak from what is in use."""
        self.pool.free_all_blocks()
        self.peak = self.pool.used_bytes()

    @contextlib.contextmanager
    def phase(self, name: str):
        """Record the pool's peak while the block runs as phase ``name`` (the largest over its
        runs), the pool's unused blocks given back first: each phase's arrays are allocated anew,
        not fitted into the blocks the previous phase left cached."""
        self.pool.free_all_blocks()
        self.phase_peak = self.pool.used_bytes()
        try:
            yield
        finally:
            self.phases[name] = max(self.phases.get(name, 0), self.phase_peak)

    def line(self) -> str:
        """``GPU pool peak X GiB (apply A, static S, ...), Y GiB in use, device Z of T GiB free;
        plan P GiB`` for a log line."""
        free, total = self.cupy.cuda.runtime.memGetInfo()
        phases = ", ".join(f"{name} {size / GIB:.2f}" for name, size in self.phases.items())
        plan = f"; plan {self.plan_bytes / GIB:.2f} GiB" if self.plan_bytes else ""
        return (f"GPU pool peak {self.peak / GIB:.2f} GiB" + (f" (by phase: {phases})" if phases else "")
                + f", {self.pool.used_bytes() / GIB:.2f} GiB in use, device {free / GIB:.2f} of "
                f"{total / GIB:.2f} GiB free{plan}")
