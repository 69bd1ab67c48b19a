"""Registers, stack frame, spills, shared memory and PTX size of every kernel the loader builds,
for one or more source trees side by side, without a GPU.

A kernel refactor must not cost registers or push the whole-solve kernels into local memory
(``tests/test_gpu.py`` checks spills on the device; this table shows them before the device run).
Each tree's own loader gives the sources (includes inlined), the ``-D`` defines and the name
expressions; NVRTC compiles them with the options CuPy adds (``-ftz=true``,
``--device-as-default-execution-space``, and ``--device-c`` for the cooperative modules, CuPy's
``enable_cooperative_groups``) and ``-Xptxas=-v``, and once more to PTX for the
instruction counts. Rows of different trees are matched by their position in the loader's
lists, so a renamed template or kernel still lines up.

Registers depend on the compiler's version: run it under a Python whose NVRTC is the device's
(``pip install "cuda-bindings==13.0.*" "nvidia-cuda-nvrtc==13.0.*" "nvidia-cuda-runtime==13.0.*"
"nvidia-cuda-cccl==13.0.*"`` for CUDA 13.0). Each tree needs a ``.venv`` with dynpr's
dependencies (or pass ``--python`` once per tree)::

    python benchmarks/kernel_resources.py ../old-checkout . [--only pagerank.cu] [--nvdisasm PATH]

``--define DYNPR_CONTRIBUTION=float`` replaces (or adds) a define in every tree's list: the
default's kernels built for float32 contributions (variant ``classes_c32``).

``--nvdisasm`` adds each kernel's machine instructions (CUDA's nvdisasm, or the one Triton's
wheel carries). On a machine with a GPU, ``--device`` builds the modules through CuPy as the
engine does and prints the driver's attributes instead (registers, local memory, shared memory).
Tables for the kernel split of issue 34: ``docs/measurements/kernels/resources/``.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile

# (source, which lists of the loader, cooperative): the modules dynpr.gpu.loader builds
MODULES = (
    ("pagerank.cu", ("PAGERANK_TEMPLATES", "PAGERANK_PLAIN"), False),
    ("pagerank.cu", ("PERSISTENT_TEMPLATES",), True),
    ("baselines.cu", ("BASELINE_TEMPLATES", "BASELINE_PLAIN"), False),
    ("static_variants.cu", ("STATIC_VARIANT_PLAIN",), False),
    ("dt_bfs.cu", ("dt_reachable",), True),  # a plain name: dynpr.gpu.loader.dt_reachable_kernel
)

_QUERY = """
import json, sys
from dynpr.gpu import loader
from dynpr.designs import nvrtc_defines
out = {"defines": list(nvrtc_defines()), "sources": {}, "names": {}}
for source, lists, _ in json.loads(sys.argv[1]):
    out["sources"][source] = loader.inline_source(source)
    for lst in lists:
        out["names"][lst] = list(getattr(loader, lst)) if lst.isupper() else [lst]
print(json.dumps(out))
"""


# On a machine with a GPU: the modules as the engine builds them (dynpr.gpu.loader.module, through
# CuPy with the device's own NVRTC), and each function's attributes as the driver reports them.
_DEVICE_QUERY = """
import json, sys
from dynpr.gpu import loader
out = {}
for source, lists, cooperative in json.loads(sys.argv[1]):
    names = {lst: list(getattr(loader, lst)) if lst.isupper() else [lst] for lst in lists}
    every = [n for lst in lists for n in names[lst]]
    kernels = loader.module(source, tuple(n for n in every if "<" in n), tuple(n for n in every if "<" not in n),
                            cooperative)
    for lst in lists:
        for position, name in enumerate(names[lst]):
            attributes = kernels[name].attributes
            out["|".join((source, lst, str(position)))] = {
                "name": name, "regs": attributes["num_regs"], "stack": attributes["local_size_bytes"],
                "smem": attributes["shared_size_bytes"]}
print(json.dumps(out))
"""


def _run_in_tree(tree: pathlib.Path, python: str | None, query: str) -> dict:
    """``query``'s JSON, run by ``tree``'s Python with ``tree``'s dynpr and kernels."""
    python = python or str(tree / ".venv/bin/python")
    env = {**os.environ, "PYTHONPATH": str(tree / "src"), "DYNPR_KERNELS": str(tree / "kernels")}
    done = subprocess.run([python, "-c", query, json.dumps(MODULES)], capture_output=True, text=True, env=env,
                          check=False)
    if done.returncode:
        sys.exit(f"{tree}: reading the loader failed: {done.stderr.strip().splitlines()[-1:]}")
    return json.loads(done.stdout)


def device_table(tree: pathlib.Path, python: str | None, only: str | None) -> dict[tuple, dict]:
    """{(source, list, position): registers, local memory (stack) and static shared memory} of
    every kernel of ``tree`` as CuPy builds it on this machine's GPU (no spill counts there)."""
    rows = {}
    for key, row in _run_in_tree(tree, python, _DEVICE_QUERY).items():
        source, lst, position = key.split("|")
        if not only or source == only:
            rows[(source, lst, int(position))] = row
    return rows


def tree_inputs(tree: pathlib.Path, python: str | None) -> dict:
    """Sources, defines and name lists as ``tree``'s own loader gives them."""
    return _run_in_tree(tree, python, _QUERY)


def _nvrtc():
    """cuda-python's NVRTC bindings, or exit with one line saying what is missing."""
    try:
        from cuda.bindings import nvrtc
    except ImportError as exc:
        sys.exit(f"kernel_resources.py: error: needs cuda-python's NVRTC bindings and the CUDA headers' wheels "
                 f"({exc})")
    return nvrtc


def include_options() -> list[str]:
    """-I options for the CUDA headers of this Python's wheels: CUDA 13's (nvidia/cu13/include,
    CCCL under it) or CUDA 12's (nvidia/cuda_runtime/include and nvidia/cuda_cccl/include)."""
    site = next(pathlib.Path(sys.prefix).glob("lib/python*/site-packages"))
    found = [p for pattern in ("nvidia/cu1*/include", "nvidia/cu1*/include/cccl", "nvidia/cuda_runtime/include",
                               "nvidia/cuda_cccl/include") for p in site.glob(pattern)]
    if not found:
        sys.exit(f"no CUDA headers under {site}/nvidia")
    return [f"-I{p}" for p in found]


def compile_module(source: str, text: str, names: list[str], options: list[str], ptx: bool):
    """(log and cubin, or PTX text; {lowered name: name expression}); exits with NVRTC's log on
    failure."""
    nvrtc = _nvrtc()
    err, prog = nvrtc.nvrtcCreateProgram(text.encode(), source.encode(), 0, [], [])
    for name in names:
        nvrtc.nvrtcAddNameExpression(prog, name.encode())
    arch = "--gpu-architecture=compute_90" if ptx else "--gpu-architecture=sm_90"
    opts = [arch, *options] + ([] if ptx else ["-Xptxas=-v"])
    err, = nvrtc.nvrtcCompileProgram(prog, len(opts), [o.encode() for o in opts])
    _, size = nvrtc.nvrtcGetProgramLogSize(prog)
    log = b" " * size
    nvrtc.nvrtcGetProgramLog(prog, log)
    if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        sys.exit(f"{source}: NVRTC failed\n{log.decode(errors='replace')}")
    lowered = {}
    for name in names:
        if "<" in name:
            _, low = nvrtc.nvrtcGetLoweredName(prog, name.encode())
            lowered[low.decode()] = name
        else:
            lowered[name] = name
    if ptx:
        _, size = nvrtc.nvrtcGetPTXSize(prog)
        out = b" " * size
        nvrtc.nvrtcGetPTX(prog, out)
        return out.decode(errors="replace"), lowered
    _, size = nvrtc.nvrtcGetCUBINSize(prog)
    cubin = b" " * size
    nvrtc.nvrtcGetCUBIN(prog, cubin)
    return (log.decode(errors="replace"), cubin), lowered


_ENTRY = re.compile(r"Compiling entry function '([^']+)'")
_FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_REGS = re.compile(r"Used (\d+) registers")
_SMEM = re.compile(r"(\d+) bytes smem")


def parse_ptxas(log: str) -> dict[str, dict]:
    """Per entry function (lowered name): registers, stack frame, spill stores/loads, smem."""
    usage, current = {}, None
    for line in log.splitlines():
        if m := _ENTRY.search(line):
            current = usage.setdefault(m.group(1), {"smem": 0})
        elif current is not None and (m := _FRAME.search(line)):
            current.update(stack=int(m.group(1)), spill_st=int(m.group(2)), spill_ld=int(m.group(3)))
        elif current is not None and (m := _REGS.search(line)):
            current["regs"] = int(m.group(1))
            if s := _SMEM.search(line):
                current["smem"] = int(s.group(1))
    return usage


def ptx_instructions(ptx: str) -> dict[str, int]:
    """Instruction lines of each ``.entry`` body (labels, directives and braces not counted; a
    ``.func`` body, a device function left out of line, counts for no entry)."""
    counts, current = {}, None
    for line in ptx.splitlines():
        line = line.strip()
        if m := re.match(r"(?:\.visible\s+|\.weak\s+)?\.entry\s+([\w$]+)", line):
            current = m.group(1)
            counts[current] = 0
        elif re.match(r"(?:\.visible\s+|\.weak\s+|\.extern\s+)?\.func\b", line):
            current = None
        elif current is not None and line.endswith(";") and not line.startswith(("//", ".", "$")):
            counts[current] += 1
    return counts


_SASS_INSTRUCTION = re.compile(r"^\s*/\*[0-9a-f]{4,}\*/\s+\S")


def sass_instructions(cubin: bytes, nvdisasm: str) -> dict[str, int]:
    """Machine instructions of each function of ``cubin`` (lowered name), as ``nvdisasm`` lists them."""
    with tempfile.NamedTemporaryFile(suffix=".cubin") as file:
        file.write(cubin)
        file.flush()
        listing = subprocess.run([nvdisasm, "-c", file.name], capture_output=True, text=True, check=True).stdout
    counts, current = {}, None
    for line in listing.splitlines():
        if m := re.match(r"\s*\.text\.(\S+):", line):
            current = m.group(1)
            counts[current] = 0
        elif current is not None and _SASS_INSTRUCTION.match(line):
            counts[current] += 1
    return counts


def nvrtc_version() -> str:
    _, major, minor = _nvrtc().nvrtcVersion()
    return f"{major}.{minor}"


def with_defines(defines: list[str], replacing: list[str]) -> list[str]:
    """``defines`` (``-DNAME=VALUE``) with each of ``replacing`` (``NAME=VALUE``) in place of the
    define of its name, or added."""
    names = {d.split("=")[0] for d in replacing}
    return [d for d in defines if d[2:].split("=")[0] not in names] + [f"-D{d}" for d in replacing]


def tree_table(tree: pathlib.Path, python: str | None, only: str | None,
               nvdisasm: str | None = None, defines: list[str] = ()) -> dict[tuple, dict]:
    """{(source, list, position): usage with ``name``, ``ptx`` and (given ``nvdisasm``) ``sass``
    instruction counts} for every kernel of ``tree``, with ``defines`` (``NAME=VALUE``) in place of
    the loader's of the same name."""
    info = tree_inputs(tree, python)
    # the loader's options, then what CuPy's compile_using_nvrtc adds (NVRTC 12 and later)
    base = ["-std=c++17", *with_defines(info["defines"], list(defines)), "-ftz=true", "--device-as-default-execution-space", *include_options()]
    rows = {}
    for source, lists, cooperative in MODULES:
        if only and source != only:
            continue
        names = [n for lst in lists for n in info["names"][lst]]
        options = base + (["--device-c"] if cooperative else [])
        (log, cubin), lowered = compile_module(source, info["sources"][source], names, options, ptx=False)
        ptx, _ = compile_module(source, info["sources"][source], names, options, ptx=True)
        usage, counts = parse_ptxas(log), ptx_instructions(ptx)
        sass = sass_instructions(cubin, nvdisasm) if nvdisasm else {}
        for lst in lists:
            for position, name in enumerate(info["names"][lst]):
                low = next(k for k, v in lowered.items() if v == name)
                rows[(source, lst, position)] = {"name": name, **usage.get(low, {}), "ptx": counts.get(low, -1),
                                                 **({"sass": sass[low]} if low in sass else {})}
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("trees", nargs="+", type=pathlib.Path, help="source trees (repository roots) to compare")
    parser.add_argument("--python", action="append", help="Python with dynpr's dependencies, one per tree "
                                                          "(default: the tree's .venv)")
    parser.add_argument("--only", help="one source file, e.g. pagerank.cu")
    parser.add_argument("--device", action="store_true",
                        help="build through CuPy on this machine's GPU and read the driver's attributes instead "
                             "(registers, local memory, shared memory; no spill or PTX counts)")
    parser.add_argument("--nvdisasm", help="an nvdisasm to count each kernel's machine instructions with "
                                           "(CUDA's, or the one Triton's wheel carries)")
    parser.add_argument("--define", action="append", default=[], metavar="NAME=VALUE",
                        help="replace or add a -D define in every tree (e.g. DYNPR_CONTRIBUTION=float)")
    args = parser.parse_args(argv)
    pythons = args.python or [None] * len(args.trees)
    if args.device:
        tables = [device_table(t.resolve(), p, args.only) for t, p in zip(args.trees, pythons)]
    else:
        tables = [tree_table(t.resolve(), p, args.only, args.nvdisasm, args.define) for t, p in zip(args.trees, pythons)]
    keys = list(dict.fromkeys(k for table in tables for k in table))
    labels = {key: ("coop " if key[1] == "PERSISTENT_TEMPLATES" or key[0] == "dt_bfs.cu" else "")
              + next(t[key]["name"] for t in tables if key in t) for key in keys}
    first = max(map(len, labels.values()))
    width = 34 if args.nvdisasm else 26
    header = "kernel".ljust(first) + "".join(f" | {t.resolve().name[:width]:>{width}}" for t in args.trees)
    compiler = "CuPy on this GPU" if args.device else f"NVRTC {nvrtc_version()}, sm_90"
    print(f"{compiler}; per tree: r registers / s stack frame bytes / sp spill stores+loads bytes / "
          f"sm shared memory bytes / p PTX instructions"
          + (" / m machine (SASS) instructions" if args.nvdisasm else ""))
    print(header)
    print("-" * len(header))
    for key in keys:
        cells = []
        for table in tables:
            row = table.get(key)
            cells.append("missing" if row is None else
                         f"{row.get('regs', '?')}r {row.get('stack', '?')}s "
                         f"{row.get('spill_st', '?')}+{row.get('spill_ld', '?')}sp {row.get('smem', 0)}sm "
                         f"{row.get('ptx', '?')}p" + (f" {row.get('sass', '?')}m" if args.nvdisasm else ""))
        print(labels[key].ljust(first) + "".join(f" | {c:>{width}}" for c in cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
