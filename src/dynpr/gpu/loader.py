"""The one place where dynpr's CUDA sources become CuPy kernels.

Sources live in ``kernels/*.cu`` (package data, or the folder
named by ``DYNPR_KERNELS``). ``#include "x.cuh"`` lines are replaced by the header's
text before compiling, so the source CuPy hashes for its on-disk cache changes
whenever a header does (the style of ``cupyx/scipy/signal/_iir_utils.py``).
The block size, class lanes and contribution type of :mod:`dynpr.designs` reach the
sources as ``-D`` defines. Templates are instantiated through ``name_expressions``. Each module is built
once per process (``functools.cache``); CuPy keeps the compiled binary on disk
between processes.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.resources
import logging
import os
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from dynpr.designs import APPROACH_FLAGS, CLASS_LANES, nvrtc_defines
from dynpr.errors import NoGpuError

_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"\s*$', re.MULTILINE)
_PRAGMA_ONCE = re.compile(r"^\s*#\s*pragma\s+once\s*$", re.MULTILINE)


def compile_options(contribution: str = "float64") -> tuple[str, ...]:
    """NVRTC options of a module: C++17 and :func:`dynpr.designs.nvrtc_defines` (the stored
    contributions' dtype ``contribution`` matters to ``kernels/pagerank.cu`` alone)."""
    return ("-std=c++17", *nvrtc_defines(contribution))


#: The options of every module built for float64 contributions.
COMPILE_OPTIONS = compile_options()
#: seconds a module build may take before a line says it is compiling (loading a cached one is quicker)
COMPILE_NOTICE_S = 1.0
log = logging.getLogger("dynpr.gpu")
# seconds this process spent building modules (compiling, or loading CuPy's cached binary), per source
_BUILD_SECONDS: dict[str, float] = {}
_BUILD_LOCK = threading.Lock()


def build_seconds() -> float:
    """Seconds this process has spent in :func:`module` builds (NVRTC compiles or cache loads, and
    loading onto the device; summed over threads): a job's kernel compiles (dynpr.pipeline.jobs)."""
    return sum(_BUILD_SECONDS.values())


def kernel_cache_dir() -> str:
    """Where CuPy keeps compiled kernels between processes (``CUPY_CACHE_DIR``, else its default)."""
    return os.environ.get("CUPY_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cupy", "kernel_cache")


@contextlib.contextmanager
def compile_notice(source: str):
    """Say that kernels are compiling once building ``source`` takes over :data:`COMPILE_NOTICE_S`: the
    first solve on a fresh machine spends seconds in NVRTC, which otherwise looks like a hang."""
    timer = threading.Timer(COMPILE_NOTICE_S, log.info,
                            ("compiling GPU kernels of %s (first use, cached in %s)", source, kernel_cache_dir()))
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()


def kernel_dir() -> Path:
    """Folder holding the ``.cu``/``.cuh`` sources: ``DYNPR_KERNELS`` if set, else a checkout's
    top-level ``kernels/``, else the installed package's ``dynpr/kernels`` (pyproject.toml maps the
    checkout's folder there in a wheel)."""
    env = os.environ.get("DYNPR_KERNELS")
    if env:
        return Path(env)
    checkout = Path(__file__).resolve().parents[3] / "kernels"
    return checkout if checkout.is_dir() else Path(str(importlib.resources.files("dynpr") / "kernels"))


def require_cupy():
    """Import CuPy, or fail with one line saying what is missing.

    Raises
    ------
    dynpr.errors.NoGpuError
        (a ``RuntimeError``) if CuPy cannot be imported or sees no CUDA device.
    """
    try:
        import cupy
    except (ImportError, OSError) as exc:  # OSError: CUDA libraries missing or broken
        raise NoGpuError(
            f"the GPU backend needs CuPy ({exc}); install the 'gpu' extra on a machine with an NVIDIA GPU"
        ) from exc
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:  # CUDARuntimeError when no driver is loaded
        raise NoGpuError(f"CuPy found no usable CUDA device: {exc}") from exc
    if count == 0:
        raise NoGpuError("CuPy found no CUDA device")
    return cupy


def inline_source(name: str) -> str:
    """Text of ``kernels/<name>`` with its quoted includes inlined recursively, each header once
    (the loader's ``#pragma once``: the first inclusion inlines it, later ones are dropped).

    Raises
    ------
    FileNotFoundError
        If the source or an included header does not exist.
    ValueError
        If headers include each other in a cycle.
    """
    return _inline(name, frozenset(), set())


def _inline(name: str, stack: frozenset[str], done: set[str]) -> str:
    path = kernel_dir() / name
    if name in stack:
        raise ValueError(f"{path}: include cycle through {sorted(stack)}")
    if not path.is_file():
        raise FileNotFoundError(f"CUDA source {path} not found (set DYNPR_KERNELS to the kernels folder)")
    text = _PRAGMA_ONCE.sub("", path.read_text())

    def include(match) -> str:
        header = match.group(1)
        if header in done:
            return f"// ---- {header} (inlined above) ----"
        body = _inline(header, stack | {name}, done)
        done.add(header)
        return f"// ---- {header} ----\n{body}\n"

    return _INCLUDE.sub(include, text)


def _bools(*flags: bool) -> str:
    return ",".join("true" if f else "false" for f in flags)


# The rank kernels' (AFFECTED, FRONTIER, PRUNE) flags, one triple per distinct
# approach behaviour (static and nd share theirs).
RANK_MODES = tuple(dict.fromkeys((f.affected, f.frontier, f.prune) for f in APPROACH_FLAGS.values()))


def rank_kernel_name(kind: str, listed: bool, mode: tuple[bool, bool, bool]) -> str:
    """Template name of the partitioned design's rank kernel; ``kind`` is ``thread`` or ``block``."""
    return f"rank_{kind}<{_bools(listed, *mode)}>"


def expand_kernel_name(kind: str, listed: bool) -> str:
    """Template name of an expansion kernel; ``kind`` is ``thread`` or ``block``."""
    return f"expand_{kind}<{_bools(listed)}>"


def group_kernel_name(lanes: int, listed: bool, mode: tuple[bool, bool, bool], prc: bool) -> str:
    """Template name of a one-class ``rank_group`` kernel (``lanes`` per vertex)."""
    return f"rank_group<{lanes},{_bools(listed, *mode, prc)}>"


def approach_code(mode: tuple[bool, bool, bool]) -> int:
    """The approach template parameter of the default's rank kernels (``kernels/layouts.cuh``) for an
    (affected, frontier, prune) triple: their sum, 0 for Static and ND up to 3 for DF-P."""
    affected, frontier, prune = mode
    if (frontier and not affected) or (prune and not frontier):
        raise ValueError(f"no approach has the flags {mode}")
    return int(affected) + int(frontier) + int(prune)


def fused_kernel_name(listed: bool, mode: tuple[bool, bool, bool], persistent: bool = False,
                      keep: bool = False) -> str:
    """Template name of the default's fused launch (``rank_fused``, an iteration per launch) or
    of its whole-solve cooperative launch (``rank_persistent``, where blocks may ``keep`` their
    work unit for the solve), over class lists or not."""
    if persistent:
        return f"rank_persistent<{_bools(keep, listed)},{approach_code(mode)}>"
    return f"rank_fused<{_bools(listed)},{approach_code(mode)}>"


# Template instantiations go through NVRTC name expressions; extern "C"
# kernels are found by their plain names.
PAGERANK_TEMPLATES = tuple(fused_kernel_name(listed, mode) for listed in (True, False) for mode in RANK_MODES)
PERSISTENT_TEMPLATES = tuple(fused_kernel_name(listed, mode, True, keep) for listed, keep in
                             ((True, True), (True, False), (False, False)) for mode in RANK_MODES)
PAGERANK_PLAIN = ("degree_classes", "mark_frontier", "mark_sources", "start_contributions", "relabel_vertices", "relabel_rows",
                  "relabel_long_rows", "rename_flags", "hold")
# The baselines: the partitioned design's kernels, the precomputed-contribution
# group kernels of every class (the unfused default and partitioned_prc serve
# every approach) and the plain-gather ones of the pull designs (Static and ND).
BASELINE_TEMPLATES = tuple(
    [rank_kernel_name(k, listed, mode) for k in ("thread", "block") for listed in (False, True) for mode in RANK_MODES]
    + [expand_kernel_name(k, listed) for k in ("thread", "block") for listed in (False, True)]
    + [group_kernel_name(g, listed, mode, True) for g in CLASS_LANES for listed in (False, True) for mode in RANK_MODES]
    + [group_kernel_name(g, False, RANK_MODES[0], False) for g in (1, 32, CLASS_LANES[-1])]
)
BASELINE_PLAIN = ("degree_flag", "partition_scatter", "mark_initial", "bfs_seed", "bfs_step", "finish_iteration",
                  "clear_flags", "push_scatter", "push_finish")
STATIC_VARIANT_PLAIN = ("rank_hybrid_thread_warp", "rank_pull_tiled", "rank_pull_float32")
KAHN_PLAIN = ("kahn_in_degree", "kahn_compact", "kahn_remove", "kahn_decrement", "kahn_apply_decrement",
              "kahn_flag_zero", "kahn_dense_in_degree", "kahn_dense_remove", "kahn_dense_in_degree_partial",
              "kahn_dense_in_degree_final", "kahn_dense_remove_shared")
RMAT_PLAIN = ("rmat_histogram", "rmat_extract")


class Kernels:
    """Compiled functions of one module, looked up by name expression."""

    def __init__(self, functions: dict):
        self._functions = functions

    def __getitem__(self, name: str):
        return self._functions[name]

    def __or__(self, other: "Kernels") -> "Kernels":
        """The functions of both modules (names do not overlap)."""
        return Kernels({**self._functions, **other._functions})


@functools.cache
def module(source: str, templates: tuple[str, ...], plain: tuple[str, ...], cooperative: bool = False,
           contribution: str = "float64") -> Kernels:
    """Compile ``kernels/<source>`` once per process and load every named kernel.

    Getting every function here loads the module onto the device now, so the
    first timed launch pays neither compilation nor module loading.
    ``cooperative`` launches the module's kernels with
    ``cuLaunchCooperativeKernel`` (grid-wide sync through cooperative groups).
    ``contribution``: the stored contributions' dtype (:data:`dynpr.designs.CONTRIBUTION_TYPES`).
    """
    cupy = require_cupy()
    started = time.perf_counter()
    with compile_notice(source):  # get_function compiles (or loads from CuPy's cache)
        raw = cupy.RawModule(code=inline_source(source), options=compile_options(contribution),
                             name_expressions=list(templates) or None, enable_cooperative_groups=cooperative)
        kernels = Kernels({name: raw.get_function(name) for name in templates + plain})
    with _BUILD_LOCK:  # modules may build on threads of their own (build_modules)
        _BUILD_SECONDS[source] = _BUILD_SECONDS.get(source, 0.0) + time.perf_counter() - started
    return kernels


def pagerank_kernels(contribution: str = "float64") -> Kernels:
    """The default engine's kernels, ``kernels/pagerank.cu``, storing contributions as ``contribution``."""
    return module("pagerank.cu", PAGERANK_TEMPLATES, PAGERANK_PLAIN, contribution=contribution)


def persistent_kernels(contribution: str = "float64") -> Kernels:
    """The default's whole-solve kernels (``rank_persistent`` of ``kernels/pagerank.cu``), launched
    cooperatively: the same source compiled as a cooperative module."""
    return module("pagerank.cu", PERSISTENT_TEMPLATES, (), True, contribution)


def baseline_kernels() -> Kernels:
    """The baselines' kernels, ``kernels/baselines.cu``, with the default's (classes, contributions)."""
    return module("baselines.cu", BASELINE_TEMPLATES, BASELINE_PLAIN) | pagerank_kernels()


def static_variant_kernels() -> Kernels:
    """The reports' single-launch Static pull designs, ``kernels/static_variants.cu``."""
    return module("static_variants.cu", (), STATIC_VARIANT_PLAIN)


def kahn_kernels() -> Kernels:
    """The kernels of ``kernels/kahn.cu``."""
    return module("kahn.cu", (), KAHN_PLAIN)


def rmat_kernels() -> Kernels:
    """The R-MAT generator's kernels, ``kernels/rmat.cu`` (:mod:`dynpr.gpu.rmat`)."""
    return module("rmat.cu", (), RMAT_PLAIN)


def dt_reachable_kernel():
    """``dt_reachable`` from ``kernels/dt_bfs.cu`` (DT's BFS), launched cooperatively."""
    return module("dt_bfs.cu", (), ("dt_reachable",), True)["dt_reachable"]


#: ``gather_sum`` of ``kernels/gather.cu`` by (contributions' dtype, hot set in shared memory).
GATHER_TEMPLATES = {(dtype, hot): f"gather_sum<{ctype},{_bools(hot)}>"
                    for dtype, ctype in (("float64", "double"), ("float32", "float")) for hot in (False, True)}


def gather_kernel(dtype: str = "float64", hot: bool = False):
    """``gather_sum`` from ``kernels/gather.cu``, the pull iteration's yardstick (:func:`dynpr.evaluation.bench.gather_ms`),
    gathering ``dtype`` contributions, with ``hot`` the first ones from shared memory."""
    return module("gather.cu", tuple(GATHER_TEMPLATES.values()), ())[GATHER_TEMPLATES[str(dtype), hot]]


def kahn_persistent_kernel():
    """``kahn_persistent`` from ``kernels/kahn_persistent.cu``, launched cooperatively."""
    return module("kahn_persistent.cu", (), ("kahn_persistent",), True)["kahn_persistent"]


#: The modules a pipeline run of the default design uses (rule run_experiment): the default engine's
#: per-iteration and whole-solve kernels, DT's BFS and Kahn's drivers.
RUN_MODULES = (pagerank_kernels, persistent_kernels, dt_reachable_kernel, kahn_kernels, kahn_persistent_kernel)


def build_modules(builders=RUN_MODULES) -> float:
    """Build every module of ``builders`` now, each on a thread of its own, and return the wall seconds.

    On a fresh machine each module otherwise compiles at the first call that needs it, one after
    another inside the timed work; here the NVRTC compiles overlap (CuPy releases the GIL while NVRTC
    runs; where it did not, they would take their serial time, no more). Later calls, and later
    processes through CuPy's disk cache, find them built.

    Raises
    ------
    dynpr.errors.NoGpuError
        Without a usable CUDA device (:func:`require_cupy`).
    """
    require_cupy()  # one clear error before any thread starts
    started = time.perf_counter()
    with ThreadPoolExecutor(len(builders), thread_name_prefix="dynpr-build") as pool:
        for future in [pool.submit(build) for build in builders]:
            future.result()
    return time.perf_counter() - started
