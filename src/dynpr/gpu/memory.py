"""Will a graph fit on the GPU? A stated byte model, checked before allocating.

The model follows the arrays :mod:`dynpr.gpu.pagerank` and :mod:`dynpr.gpu.kahn`
keep on the device during one run (n = vertices, m = edges including the
self-loop on every vertex, b = deletions + insertions of the batch). Update it
with them.

PageRank, every approach:

=============================  ===================================  ==============
array                          dtype and length                     bytes
=============================  ===================================  ==============
out CSR (offsets, targets)     int64 n+1, int32 m                   8(n+1) + 4m
in CSR (in_offsets, sources)   int64 n+1, int32 m                   8(n+1) + 4m
inverse out-degree 1/d[u]      float64 n                            8n
degree scratch at upload       int64 n (offsets differences)        8n
rank vectors R, Rnew           float64 n each                       16n
flags δV, δN, ever-affected    uint8 n each                         3n
in-degree partition            int32 n x3 (flag, scan, ids)         12n
convergence slots              float64 per iteration                8 max_iterations
batch edge lists               int32 source/target per edge         8b
=============================  ===================================  ==============

The partition is absent with ``partition="none"``. Per approach, in addition:

- ``static``, ``nd``: nothing.
- ``df``, ``dfp`` with ``partition="in_out"``: the out-degree partition, 12n.
- ``dt``: the old graph, uploaded whole (its edge count taken as m):
  16(n+1) + 8m + 8n; three uint8 BFS vectors, 3n, and an int32 counter.

Kahn (``kahn``): out CSR and in offsets, 16(n+1) + 4m, and four int32 vectors
(in-degree, two frontiers, scratch), 16n.

Kernel modules, the CUDA context, CUB scratch and the CuPy pool's rounding are
not in the model; :func:`check_fits` keeps ``reserve_bytes`` free for them.
"""

from __future__ import annotations

GIB = 1 << 30
#: Bytes kept back for compiled kernels, CUB temporary storage and CuPy pool rounding.
DEFAULT_RESERVE_BYTES = 256 << 20
#: Approach codes the model knows: the PageRank approaches and Kahn's algorithm.
MODEL_APPROACHES = ("static", "nd", "dt", "df", "dfp", "kahn")
PARTITIONS = ("none", "in", "in_out")
_INT32_MAX = (1 << 31) - 1


def device_bytes_needed(
    num_vertices: int,
    num_edges: int,
    approach: str,
    *,
    batch_edges: int = 0,
    partition: str = "in_out",
    max_iterations: int = 500,
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
        ``PageRankOptions.max_iterations`` (one convergence slot per iteration).

    Returns
    -------
    int
        The modelled bytes, without the reserve :func:`check_fits` adds.

    Raises
    ------
    ValueError
        On an unknown approach or partition, a negative count, or n too large for int32 ids.
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

    if approach == "kahn":
        return 16 * (n + 1) + 4 * m + 16 * n

    graph = 16 * (n + 1) + 8 * m + 8 * n  # both CSRs and 1/d
    partitions = (partition != "none") + (partition == "in_out" and approach in ("df", "dfp"))
    total = graph + 8 * n + 16 * n + 3 * n + 12 * n * partitions + 8 * max_iterations + 8 * b
    if approach == "dt":
        total += graph + 3 * n + 4
    return total


def check_fits(
    num_vertices: int,
    num_edges: int,
    approach: str,
    free_bytes: int | None = None,
    *,
    batch_edges: int = 0,
    partition: str = "in_out",
    max_iterations: int = 500,
    reserve_bytes: int = DEFAULT_RESERVE_BYTES,
) -> int:
    """Raise ``MemoryError`` before allocating when a graph will not fit on the GPU.

    Call it before the first device allocation of a run.

    Parameters
    ----------
    num_vertices, num_edges, approach, batch_edges, partition, max_iterations
        As for :func:`device_bytes_needed`.
    free_bytes : int, optional
        Free device memory; default ``cupy.cuda.runtime.memGetInfo()[0]`` on the
        current device (tests on the CPU pass it explicitly).
    reserve_bytes : int
        Memory kept back for what the model leaves out (kernels, CUB scratch,
        pool rounding).

    Returns
    -------
    int
        The modelled bytes needed (for logging).

    Raises
    ------
    MemoryError
        When needed + reserve exceeds the free memory; the message states both
        in GiB and in bytes.
    """
    needed = device_bytes_needed(
        num_vertices, num_edges, approach, batch_edges=batch_edges, partition=partition, max_iterations=max_iterations
    )
    if free_bytes is None:
        import cupy  # lazy: the CPU path never imports CuPy

        free_bytes = cupy.cuda.runtime.memGetInfo()[0]
    if needed + reserve_bytes > free_bytes:
        raise MemoryError(
            f"graph needs {needed / GIB:.2f} GiB on the GPU, device has {free_bytes / GIB:.2f} GiB free "
            f"({needed} bytes + {reserve_bytes} reserved > {free_bytes} bytes; {approach} on "
            f"{num_vertices} vertices, {num_edges} edges): use a GPU with more memory or --backend cpu"
        )
    return needed
