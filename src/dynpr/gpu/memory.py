"""Will a graph fit on the GPU? A stated byte model, checked before allocating.

The model counts the arrays the GPU engines keep resident for one run
(n = vertices, m = edges including the self-loop on every vertex):

=========================  =====================================  ==================
array                      dtype and length                        bytes
=========================  =====================================  ==================
out CSR (offsets, ids)     int64 n+1, int32 m                      8(n+1) + 4m
in CSR / transpose         int64 n+1, int32 m                      8(n+1) + 4m
out-degree                 int32 n                                 4n
rank vectors R, Rnew       float64 n each                          16n
contributions R[u]/d[u]    float64 n (seed 001's PRC)              8n
partition permutations     int32 n each, in and out                8n
reduction buffer           float64 per 256-vertex block + 1        8(ceil(n/256)+1)
batch edge lists           int32 src + dst per changed edge        8b
=========================  =====================================  ==================

plus, per approach:

- ``static``, ``nd``: nothing more.
- ``dt``: affected flags uint8 n, BFS visited flags uint8 n, two BFS frontier
  queues int32 n each, and the old graph's out CSR, 8(n+1) + 4m (the
  reachability runs in the old graph as well as the new one; the old edge
  count is taken as m).
- ``df``, ``dfp``: the two flag vectors δV and δN, uint8 n each.
- ``kahn``: only the out CSR, the in-degree counters int32 n, two frontier
  queues int32 n each and a counter (the rank arrays are not allocated).

Kernel modules, the CUDA context and the CuPy pool's rounding are not in the
model; :func:`check_fits` keeps ``reserve_bytes`` free for them.
"""

from __future__ import annotations

GIB = 1 << 30
#: Bytes kept back for compiled kernels, CUB temporary storage and CuPy pool rounding.
DEFAULT_RESERVE_BYTES = 256 << 20
#: Approach codes the model knows: the PageRank approaches and Kahn's algorithm.
MODEL_APPROACHES = ("static", "nd", "dt", "df", "dfp", "kahn")
_INT32_MAX = (1 << 31) - 1
_REDUCTION_BLOCK = 256


def device_bytes_needed(num_vertices: int, num_edges: int, approach: str, *, batch_edges: int = 0) -> int:
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

    Returns
    -------
    int
        The modelled bytes, without the reserve :func:`check_fits` adds.

    Raises
    ------
    ValueError
        On an unknown approach, a negative count, or n too large for int32 ids.
    """
    n, m, b = int(num_vertices), int(num_edges), int(batch_edges)
    if approach not in MODEL_APPROACHES:
        raise ValueError(f"approach must be one of {MODEL_APPROACHES}, got {approach!r}")
    if n < 0 or m < 0 or b < 0:
        raise ValueError(f"counts must be >= 0, got vertices={n} edges={m} batch_edges={b}")
    if n > _INT32_MAX:
        raise ValueError(f"{n} vertices do not fit int32 vertex ids (at most {_INT32_MAX})")

    out_csr = 8 * (n + 1) + 4 * m
    if approach == "kahn":
        return out_csr + 4 * n + 2 * 4 * n + 8

    in_csr = 8 * (n + 1) + 4 * m
    reduction = 8 * (-(-n // _REDUCTION_BLOCK) + 1)
    common = out_csr + in_csr + 4 * n + 2 * 8 * n + 8 * n + 2 * 4 * n + reduction + 8 * b
    if approach == "dt":
        return common + 2 * n + 2 * 4 * n + out_csr
    if approach in ("df", "dfp"):
        return common + 2 * n
    return common


def check_fits(
    num_vertices: int,
    num_edges: int,
    approach: str,
    free_bytes: int | None = None,
    *,
    batch_edges: int = 0,
    reserve_bytes: int = DEFAULT_RESERVE_BYTES,
) -> int:
    """Raise ``MemoryError`` before allocating when a graph will not fit on the GPU.

    Call it before the first device allocation of a run.

    Parameters
    ----------
    num_vertices, num_edges, approach, batch_edges
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
    needed = device_bytes_needed(num_vertices, num_edges, approach, batch_edges=batch_edges)
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
