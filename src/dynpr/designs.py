"""What dynpr computes and how, declared once: approaches, partition levels, GPU kernel designs.

Every other module reads these declarations instead of keeping its own list:
the engines, the CLI, the figures and the claims take the approaches from
:data:`APPROACH` (code, name, label, the flags each implies, figure style), the GPU memory model
takes each kernel design's terms from :data:`VARIANTS`, the loader passes
:data:`BLOCK` and :data:`CLASS_LANES` to NVRTC as defines, and the control
blocks the fused kernels share with the host (:data:`CLASS_PLAN`,
:data:`ITERATION_STATE`) and their parameter structs (:data:`KERNEL_STRUCTS`) mirror the structs of ``kernels/layouts.cuh`` (a
test parses the header and compares). Importing this module needs neither
NumPy nor CuPy.

The approaches and partition levels are those of the paper "Efficient GPU
Implementation of Static and Incrementally Expanding DF-P PageRank for
Dynamic Graphs" (section 4 and Fig. 1); the kernel designs it is measured
against come from its companion reports on static GPU PageRank kernels
(README, "Glossary").
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

@dataclass(frozen=True)
class ApproachFlags:
    """How an approach's rank kernels behave (their ``AFFECTED, FRONTIER, PRUNE`` template flags).

    Attributes
    ----------
    affected : only vertices marked affected (δV) are computed; the rest keep their rank.
    frontier : the affected set grows while iterating (DF, DF-P's expansion through δN).
    prune : vertices whose rank settled leave the affected set (DF-P, closed-form update).
    """

    affected: bool
    frontier: bool
    prune: bool


@dataclass(frozen=True)
class Approach:
    """One approach of the paper, everything the code says about it in one place.

    Attributes
    ----------
    code : the code in config, wildcards, CSV files, the CLI and the API (``"dfp"``).
    name : its full name (``"DF with Pruning"``).
    label : its short name in figures, tables and claims (``"DF-P"``).
    flags : how its kernels compute (:class:`ApproachFlags`).
    from_previous_ranks : it starts from the ranks before the batch (all but Static, which starts from 1/n).
    reachability : its affected set is what the batch's edges reach (DT), searched in the old graph
        and the new one, so it needs the old graph.
    colour, marker, hatch, linestyle : its figure style (Okabe–Ito colour; in grey print ND and DT,
        and DF and DF-P, differ by hatching and dash as well as marker).
    """

    code: str
    name: str
    label: str
    flags: ApproachFlags
    from_previous_ranks: bool
    reachability: bool
    colour: str
    marker: str
    hatch: str
    linestyle: str

    @property
    def recomputes_all(self) -> bool:
        """Every vertex is computed (Static, ND): no batch, no affected set."""
        return not self.flags.affected


#: The approaches in the paper's order: Static, Naive-dynamic, Dynamic Traversal, Dynamic Frontier, DF with Pruning.
APPROACH = {a.code: a for a in (
    Approach("static", "Static", "Static", ApproachFlags(False, False, False), False, False, "#000000", "o", "", "-"),
    Approach("nd", "Naive-dynamic", "ND", ApproachFlags(False, False, False), True, False, "#E69F00", "s", "////", "--"),
    Approach("dt", "Dynamic Traversal", "DT", ApproachFlags(True, False, False), True, True, "#56B4E9", "^", "", ":"),
    Approach("df", "Dynamic Frontier", "DF", ApproachFlags(True, True, False), True, False, "#009E73", "D", "xxx", "-."),
    Approach("dfp", "DF with Pruning", "DF-P", ApproachFlags(True, True, True), True, False, "#D55E00", "v", "", "-"),
)}
#: Approach codes, in the paper's order.
APPROACHES = tuple(APPROACH)
#: Approaches that recompute every vertex (no batch, no affected set).
STATIC_APPROACHES = tuple(a.code for a in APPROACH.values() if a.recomputes_all)
#: The approach every speedup is measured against and every run starts from (the paper's Static).
BASELINE = "static"
#: Approaches the default relabels hub-first on graphs whose contributions overflow the L2
#: (dynpr.gpu.classes.Relabel); DF and DF-P then pull from their first iteration, so they read
#: only the relabelled in-CSR, and DT searches the out-CSR in the original ids and renames what
#: it reached.
RELABEL_APPROACHES = APPROACHES
APPROACH_FLAGS = {a.code: a.flags for a in APPROACH.values()}


def relabels(n: int, l2_bytes: int) -> bool:
    """Whether the default relabels a graph of n vertices (Static, ND, DF, DF-P): the same
    size selector as :func:`dynpr.gpu.classes.class_bounds` (contributions, 8n bytes, over half the L2)."""
    return 8 * n > l2_bytes // 2


#: Work partitioning levels (the paper's Fig. 1): don't partition / partition G' / partition G and G'.
PARTITIONS = ("none", "in", "in_out")

#: Tolerance of the reference ranks errors are measured against (Static, capped at 500 iterations).
REFERENCE_TOLERANCE = 1e-100

#: Threads per block of every kernel (NVRTC define ``DYNPR_BLOCK``).
BLOCK = 256

#: Lanes per vertex of the default's four in-degree classes: a thread, a sub-warp of 8, a warp, a
#: block (NVRTC define ``DYNPR_CLASS_LANES``; the kernels assume thread, sub-warp, warp, block).
CLASS_LANES = (1, 8, 32, BLOCK)
#: In-degree bounds of the classes: a thread up to 8 in-edges, 8 lanes up to 64, a warp up to 512 (what
#: its lanes gather in one batched round of four int4 each, kernels/rank_vertex.cuh; a longer row takes
#: a block). Measured against a warp up to 1024 on the H100 (benchmarks/bench_class_bounds.py, Static,
#: median of 9, commit 557cf0d): sx-mathoverflow 0.233 against 0.249 ms, soc-Epinions1 0.730 against
#: 0.840, web-NotreDame 0.900 against 0.914, R-MAT scale 20 11.52 against 11.53, CollegeMsg (no
#: in-degree above 512) 0.158 both; R-MAT scale 21 about 0.5% slower (docs/dynamic.md).
CLASS_BOUNDS = (8, 64, 512)
#: DF/DF-P iterate in push mode (affected vertices gather, expanding ones mark their out-neighbours)
#: until the initial marking's or one iteration's push work, in-edges gathered plus out-edges marked,
#: exceeds this share of the graph's edges; from the next iteration on they pull (every vertex gathers,
#: expansions travel in the sign of the contributions: kernels/rank_vertex.cuh, dynamic_vertex).
#: Measured on the H100 (benchmarks/bench_gpu.py --pull-shares, random batches 1e-7..1e-1 on
#: web-NotreDame, soc-Epinions1, R-MAT 21 and temporal ones on sx-mathoverflow): geometric mean of
#: DF-P's speedup over Static across those 24 cases 2.253 pulling from the start, 2.281 / 2.270 /
#: 2.283 / 2.238 at shares 0.02 / 0.05 / 0.1 / 0.2, 1.458 never pulling; push pays only on the
#: smallest frontiers (R-MAT 21 at 1e-7: 9.5x Static at 0.1, 8.6x pulling from the start).
PULL_SHARE = 0.1
#: Where the blocks of the whole-solve launch keep their work units (KEPT_ROWS), DF/DF-P pull from
#: the first iteration, the batch sources announcing themselves in the sign of their contributions:
#: there an iteration is a chain of dependent loads whatever the frontier, and a push iteration's
#: marks add to it. Measured on the H100 (benchmarks/bench_gpu.py --pull-shares 0 0.1, 100 temporal
#: batches of sx-mathoverflow, commit 878fd79; DF-P iterations identical): DF-P 0.077 against
#: 0.094 ms a batch at 1e-5, 0.123 against 0.150 at 1e-4, 0.167 against 0.192 at 1e-3.
KEPT_PULL_SHARE = 0.0
#: The default ("classes") runs a graph of fewer edges than this as one cooperative launch per solve
#: (rank_persistent: a grid-wide sync ends each iteration) instead of a launch per iteration replayed
#: from CUDA graphs. Measured on the H100 (benchmarks/bench_gpu.py --variants classes_graphs
#: classes_persistent, every approach; docs/dynamic.md): the persistent launch is faster for every
#: approach on every graph up to web-NotreDame (1.8M edges with self-loops; Static per iteration
#: 8.0 -> 5.7 us on CollegeMsg, 10.7 -> 8.9 on sx-mathoverflow, 14.2 -> 13.4 on web-NotreDame) and
#: mixed on R-MAT scale 20 (17M edges: Static 3% faster, DT 4% slower).
PERSISTENT_EDGES = 1 << 22
#: Shared memory (int32 in-edge sources) a block of the whole-solve launch gives to the rows of the
#: work unit it keeps for the solve (kernels/pagerank.cu, keep_unit): a unit of the warp class (8
#: vertices of at most CLASS_BOUNDS[2] in-edges, each row moved up to 3 ints for alignment) fits.
KEPT_ROWS = 8 * (CLASS_BOUNDS[2] + 4)
#: Wider bounds for graphs whose contributions (8n bytes) exceed half the L2: in one H100 run of
#: benchmarks/bench_class_bounds.py Static on R-MAT scale 22 took 46.5 instead of 49.8 ms (scale 20,
#: below the threshold, 10.0 instead of 11.3 ms). A size selector, not a cache model.
WIDE_CLASS_BOUNDS = (32, 256, 4096)


@dataclass(frozen=True)
class KernelVariant:
    """One GPU PageRank kernel design (``PageRankOptions.variant``).

    Attributes
    ----------
    name : the option value.
    summary : what it does, in a line.
    production : served by the default engine (:mod:`dynpr.gpu.pagerank`); the others live in
        :mod:`dynpr.gpu.baselines` and exist to be measured against (``dynpr.evaluation.bench``).
    static_only : computes Static and ND only.
    classes : in-degree classes it lists (0: none, a push design).
    prc : gathers precomputed contributions R[u]/d[u] (two n-vectors more, of ``contribution``).
    fused : one launch per iteration that also ends the iteration on the device.
    graphs : iterations replayed from CUDA graphs (else one host read per iteration).
    relabel : relabels large graphs hub-first for Static and ND.
    persistent_below : a graph of fewer edges (self-loops included) runs its whole solve in one
        cooperative launch, every iteration ended by a grid-wide sync, instead of a launch per
        iteration (0: never).
    contribution : dtype of the default engine's stored contributions (:data:`CONTRIBUTION_TYPES`):
        ``float32`` rounds each R[u]/d[u] once where it is stored, so a gather moves half the bytes;
        sums, ranks and the convergence test stay float64. The CPU engine rounds the same way
        (:mod:`dynpr.pagerank.cpu`), its twin.
    """

    name: str
    summary: str
    production: bool = False
    static_only: bool = False
    classes: int = 0
    prc: bool = False
    fused: bool = False
    graphs: bool = False
    relabel: bool = False
    persistent_below: int = 0
    contribution: str = "float64"


#: The default engine's contribution dtypes and their CUDA type (NVRTC define ``DYNPR_CONTRIBUTION``).
CONTRIBUTION_TYPES = {"float64": "double", "float32": "float"}

VARIANTS = {v.name: v for v in (
    KernelVariant("classes", "four in-degree classes, precomputed contributions, one fused launch per iteration "
                  "replayed from CUDA graphs, device-side convergence; below PERSISTENT_EDGES edges the whole "
                  "solve in one cooperative launch", production=True, classes=4, prc=True, fused=True,
                  graphs=True, relabel=True, persistent_below=PERSISTENT_EDGES),
    KernelVariant("classes_c32", "the default with float32 stored contributions (float64 sums and ranks): "
                  "issue 35's mixed-precision gather, off until measured (docs/locality.md)", classes=4, prc=True,
                  fused=True, graphs=True, relabel=True, persistent_below=PERSISTENT_EDGES, contribution="float32"),
    KernelVariant("classes_graphs", "the default's launch per iteration at every size", classes=4, prc=True,
                  fused=True, graphs=True, relabel=True),
    KernelVariant("classes_persistent", "the default's whole solve in one cooperative launch at every size",
                  classes=4, prc=True, fused=True, relabel=True, persistent_below=1 << 62),
    KernelVariant("classes_sync", "the default's kernels with one host read per iteration", classes=4, prc=True,
                  fused=True),
    KernelVariant("classes_unfused", "the default's classes as one launch each plus separate finish, clear and "
                  "expansion launches", classes=4, prc=True),
    KernelVariant("partitioned", "the paper's thread-per-vertex / block-per-vertex split at degree_switch"),
    KernelVariant("partitioned_prc", "the paper's split with precomputed contributions", classes=2, prc=True),
    KernelVariant("pull_thread", "pull, a thread per vertex", static_only=True, classes=1),
    KernelVariant("pull_warp", "pull, a warp per vertex", static_only=True, classes=1),
    KernelVariant("pull_block", "pull, a block per vertex", static_only=True, classes=1),
    KernelVariant("hybrid_thread_warp", "pull, a thread per vertex below in-degree 32, a warp per vertex from 32 on, "
                  "in one launch", static_only=True, classes=1),
    KernelVariant("pull_tiled", "pull, a thread per vertex, the block's own ranks and degrees tiled in shared memory",
                  static_only=True, classes=1),
    KernelVariant("pull_float32", "pull, a thread per vertex, float32 ranks and contributions summed in float32",
                  static_only=True, classes=1),
    KernelVariant("push_atomic", "push with atomicAdd into a float64 accumulator", static_only=True),
    KernelVariant("cusparse", "cuSPARSE SpMV power iteration (cupyx)", static_only=True),
)}
DEFAULT_VARIANT = "classes"


def variant(name: str | None) -> KernelVariant:
    """The declaration of ``name`` (None: the default).

    Raises
    ------
    ValueError
        For an unknown name, listing the known ones.
    """
    try:
        return VARIANTS[name or DEFAULT_VARIANT]
    except KeyError:
        raise ValueError(f"unknown GPU variant {name!r}; known: {list(VARIANTS)}") from None


@dataclass(frozen=True)
class Int32Layout:
    """An int32 control block shared by kernels and host: a C struct of ``int``/``unsigned`` fields.

    Attributes
    ----------
    name : the struct's name in ``kernels/layouts.cuh``.
    fields : (field, element count) in declaration order.
    """

    name: str
    fields: tuple[tuple[str, int], ...]

    @property
    def words(self) -> int:
        """Length of the int32 array that holds the struct."""
        return sum(count for _, count in self.fields)

    def span(self, field: str) -> slice:
        """Positions of ``field``'s elements in the int32 array."""
        start = self.index(field)
        return slice(start, start + dict(self.fields)[field])

    def index(self, field: str, element: int = 0) -> int:
        """Position of ``field[element]`` in the int32 array."""
        offset = 0
        for name, count in self.fields:
            if name == field:
                if not 0 <= element < count:
                    raise IndexError(f"{self.name}.{field} has {count} elements, not {element + 1}")
                return offset + element
            offset += count
        raise KeyError(f"{self.name} has no field {field!r}")


#: degree_classes' output: vertices per class, each class's first work unit, units in all, and the
#: ticket that elects the last block.
CLASS_PLAN = Int32Layout("ClassPlan", (("count", len(CLASS_LANES)), ("first", len(CLASS_LANES)), ("total", 1),
                                       ("ticket", 1)))
#: The device-side loop state: iterations done, stop flag, whether the last change met the tolerance,
#: the ticket electing an iteration's last block, the work-unit counter and DF/DF-P's pull mode.
ITERATION_STATE = Int32Layout("IterationState", (("iterations", 1), ("done", 1), ("converged", 1), ("ticket", 1),
                                                 ("work", 1), ("pull", 1)))


#: NumPy type codes of the C types a kernel parameter struct holds (pointers are device addresses).
C_TYPES = {"pointer": "u8", "int": "i4", "unsigned int": "u4", "long long": "i8", "unsigned long long": "u8",
           "double": "f8"}


@dataclass(frozen=True)
class KernelStruct:
    """A kernel parameter struct of ``kernels/layouts.cuh``, passed by value (CuPy copies a
    one-element array of its bytes into the launch's parameters).

    Attributes
    ----------
    name : the struct's name in the header.
    fields : (field, C type, element count) in declaration order; C type is a key of
        :data:`C_TYPES`.
    """

    name: str
    fields: tuple[tuple[str, str, int], ...]

    def dtype(self):
        """The NumPy structured dtype with the C layout (aligned fields, padded size)."""
        return _struct_dtype(self)

    @functools.cached_property
    def _layout(self):
        # cached on the instance: hashing the frozen dataclass for an lru_cache costs more
        # than packing it
        return _struct_layout(self)

    def pack(self, **values):
        """The struct as a one-element NumPy array of its bytes (``.view(dtype())`` reads its
        fields); an array value (anything with ``.data.ptr``, a CuPy array) gives its device
        address, None a null pointer, a sequence the elements of an array field. Every field
        must be given."""
        import numpy as np

        layout, names, dtype = self._layout
        if values.keys() != names:
            raise TypeError(f"{self.name}: fields missing or unknown: {sorted(names ^ values.keys())}")
        row = []
        for field, ctype, count in self.fields:
            value = values[field]
            if ctype == "pointer":
                value = [_address(v) for v in value] if count > 1 else _address(value)
            if count > 1:
                row.extend(value)
            else:
                row.append(value)
        # A solve launches the same few structs every iteration: packing each once keeps the
        # host's share of a small solve what it was with scalar arguments.
        key = tuple(row)
        packed = self._packed.get(key)
        if packed is None:
            if len(self._packed) >= _PACKED_KEPT:
                self._packed.clear()
            # Plain bytes, not the structured dtype: CuPy reads a NumPy argument's address through
            # __array_interface__, which NumPy builds in Python for a structured dtype (5 us an
            # argument on the H100's host, enough to show in a small solve's timed span).
            packed = self._packed[key] = np.frombuffer(bytearray(layout.pack(*row)), dtype=f"V{dtype.itemsize}")
        return packed

    @functools.cached_property
    def _packed(self) -> dict:
        return {}


@functools.lru_cache(maxsize=None)
def _struct_dtype(struct: KernelStruct):
    import numpy as np

    return np.dtype([(field, C_TYPES[ctype], (count,)) if count > 1 else (field, C_TYPES[ctype])
                     for field, ctype, count in struct.fields], align=True)


#: Packed structs a :class:`KernelStruct` keeps for reuse (launch arguments recur every iteration).
_PACKED_KEPT = 256

#: :mod:`struct` codes of the NumPy type codes in :data:`C_TYPES`.
_PACK_CODES = {"u8": "Q", "i4": "i", "u4": "I", "i8": "q", "f8": "d"}


def _struct_layout(struct: KernelStruct):
    """A :class:`struct.Struct` writing the fields at the offsets of :meth:`KernelStruct.dtype`
    (padding included), the set of field names and the dtype."""
    import struct as pystruct

    dtype = _struct_dtype(struct)
    fmt, at = "<", 0
    for field, ctype, count in struct.fields:
        offset = dtype.fields[field][1]
        fmt += f"{offset - at}x" if offset > at else ""
        fmt += f"{count}{_PACK_CODES[C_TYPES[ctype]]}"
        at = offset + dtype.fields[field][0].itemsize
    fmt += f"{dtype.itemsize - at}x" if dtype.itemsize > at else ""
    return pystruct.Struct(fmt), frozenset(field for field, _, _ in struct.fields), dtype


def _address(value) -> int:
    """A device address: 0 for None, ``value.data.ptr`` for a CuPy array, else the value itself."""
    if value is None:
        return 0
    data = getattr(value, "data", None)
    return data.ptr if hasattr(data, "ptr") else value


def _pointers(*names: str) -> tuple[tuple[str, str, int], ...]:
    return tuple((name, "pointer", 1) for name in names)


#: The R-MAT generator's stream, the first parameter of ``kernels/rmat.cu``'s kernels (defined there:
#: that source stands alone, so the host's compiler builds it in tests/test_rmat.py).
RMAT_STREAM = KernelStruct("RmatStream", (("num_edges", "long long", 1), ("edge_base", "unsigned long long", 1),
                                          ("perm_base", "unsigned long long", 1), ("scale", "int", 1),
                                          ("rounds", "int", 1), ("t1", "unsigned int", 1), ("t2", "unsigned int", 1),
                                          ("t3", "unsigned int", 1)))

#: The default engine's kernel parameters, one struct per launch family (``kernels/layouts.cuh``).
KERNEL_STRUCTS = {s.name: s for s in (
    KernelStruct("GraphArgs", _pointers("in_offsets", "sources", "inv_degree", "out_offsets", "targets")
                 + (("n", "int", 1),)),
    KernelStruct("RankBuffers", (("R", "pointer", 2), ("C", "pointer", 2))),
    KernelStruct("FrontierBuffers", (("dv", "pointer", 1), ("dx", "pointer", 2), ("ever", "pointer", 1))),
    KernelStruct("PlanArgs", _pointers("ids", "plan", "bounds")),
    KernelStruct("SolveOptions", _pointers("teleport")
                 + tuple((name, "double", 1) for name in ("c0", "alpha", "tau_f", "tau_p", "tau", "pull_edges"))
                 + (("max_iterations", "int", 1),)),
    KernelStruct("BatchArgs", _pointers("del_src", "del_dst", "ins_src", "new_id")
                 + (("num_del", "int", 1), ("num_ins", "int", 1), ("renamed", "int", 1))),
    KernelStruct("SolveScratch", _pointers("slots", "work", "arrivals", "state")
                 + (("capacity", "int", 1), ("classify", "int", 1))),
    KernelStruct("ClassRange", (("ids", "pointer", 1), ("lo", "long long", 1), ("hi", "long long", 1),
                                ("count", "int", 1))),
    KernelStruct("RelabelArgs", _pointers("order", "rank", "in_offsets", "sources", "new_offsets", "new_sources")
                 + (("n", "int", 1),)),
)}


def nvrtc_defines(contribution: str = "float64") -> tuple[str, ...]:
    """The ``-D`` options that give the kernels the block size and class lanes declared here, and the
    stored contributions' type (``contribution``: a key of :data:`CONTRIBUTION_TYPES`)."""
    return (f"-DDYNPR_BLOCK={BLOCK}", f"-DDYNPR_CLASS_LANES={','.join(map(str, CLASS_LANES))}",
            f"-DDYNPR_CONTRIBUTION={CONTRIBUTION_TYPES[contribution]}")
