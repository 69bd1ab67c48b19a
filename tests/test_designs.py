"""dynpr.designs: the declarations the engines, the kernels and the memory model share."""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import replace

import pytest

from dynpr import designs
from dynpr.gpu import loader

_STRUCT = re.compile(r"^struct (\w+) \{([^}]*)\};", re.MULTILINE)
_FIELD = re.compile(r"^\s*(?:const )?((?:unsigned )?(?:long long|int|double|char|\w+))\s*(\*?)\s*(\w+)(?:\[(\w+)\])?;",
                    re.MULTILINE)


def header_structs(source: str = "layouts.cuh") -> dict[str, tuple[tuple[str, str, int], ...]]:
    """The structs of a kernel source as (field, C type, element count): a pointer's type is
    "pointer", kMaxClasses is read as the class count."""
    text = (loader.kernel_dir() / source).read_text()
    sizes = {"kMaxClasses": int(m.group(1))} if (m := re.search(r"constexpr int kMaxClasses = (\d+);", text)) else {}
    return {name: tuple((field, "pointer" if star else ctype, int(sizes.get(count, count or 1)))
                        for ctype, star, field, count in _FIELD.findall(body))
            for name, body in _STRUCT.findall(text)}


@pytest.mark.parametrize("layout", [designs.CLASS_PLAN, designs.ITERATION_STATE])
def test_python_layouts_mirror_the_header(layout):
    fields = header_structs()[layout.name]
    assert {ctype for _, ctype, _ in fields} <= {"int", "unsigned int"}
    assert tuple((field, count) for field, _, count in fields) == layout.fields


def test_kernel_structs_mirror_the_header():
    header = header_structs()
    assert set(designs.KERNEL_STRUCTS) == set(header) - {designs.CLASS_PLAN.name, designs.ITERATION_STATE.name}
    for name, struct in designs.KERNEL_STRUCTS.items():
        assert header[name] == struct.fields, name
    assert header_structs("rmat.cu")[designs.RMAT_STREAM.name] == designs.RMAT_STREAM.fields


def test_kernel_structs_pack_addresses_and_values():
    np = pytest.importorskip("numpy")

    class Array:  # what pack reads of a CuPy array
        def __init__(self, ptr):
            self.data = type("Memory", (), {"ptr": ptr})()

    graph = designs.KERNEL_STRUCTS["GraphArgs"]
    raw = graph.pack(in_offsets=Array(0x1000), sources=Array(0x2000), inv_degree=None, out_offsets=Array(8),
                     targets=Array(16), n=7)
    assert raw.shape == (1,) and raw.dtype.itemsize == 6 * 8  # five pointers, n padded to 8 bytes
    assert raw.dtype.names is None  # plain bytes: CuPy takes their address without building a descr
    packed = raw.view(graph.dtype())
    assert (int(packed["in_offsets"][0]), int(packed["sources"][0]), int(packed["inv_degree"][0])) == (0x1000,
                                                                                                     0x2000, 0)
    assert int(packed["n"][0]) == 7
    rank_buffers = designs.KERNEL_STRUCTS["RankBuffers"]
    buffers = rank_buffers.pack(R=(Array(1), Array(2)), C=(Array(3), None)).view(rank_buffers.dtype())
    assert buffers["R"][0].tolist() == [1, 2] and buffers["C"][0].tolist() == [3, 0]
    options = designs.KERNEL_STRUCTS["SolveOptions"]
    assert options.dtype().fields["max_iterations"][1] == 56 and options.dtype().itemsize == 64
    with pytest.raises(TypeError, match="missing or unknown"):
        graph.pack(n=1)
    assert np.dtype(designs.C_TYPES["pointer"]).itemsize == 8


def test_kernel_structs_packed_again_are_reused_only_for_the_same_values():
    # Launches repeat their structs every iteration; a repeat reuses the packed bytes, a
    # change of any field (the swapped rank buffers of the next iteration) packs anew.
    buffers = designs.KERNEL_STRUCTS["RankBuffers"]
    first = buffers.pack(R=(1, 2), C=(3, 4))
    assert buffers.pack(R=(1, 2), C=(3, 4)) is first
    swapped = buffers.pack(R=(2, 1), C=(4, 3)).view(buffers.dtype())
    assert swapped["R"][0].tolist() == [2, 1] and swapped["C"][0].tolist() == [4, 3]
    first = first.view(buffers.dtype())
    assert first["R"][0].tolist() == [1, 2] and first["C"][0].tolist() == [3, 4]  # not overwritten
    options = designs.KERNEL_STRUCTS["SolveOptions"]
    fields = dict(teleport=None, c0=0.15, alpha=0.85, tau_f=1e-6, tau_p=1e-6, tau=1e-10, pull_edges=-1.0, max_iterations=500)
    assert options.pack(**fields).tobytes() == options.pack(**fields).tobytes()
    assert int(options.pack(**{**fields, "max_iterations": 7}).view(options.dtype())["max_iterations"][0]) == 7
    padding = designs.KERNEL_STRUCTS["GraphArgs"].pack(in_offsets=1, sources=2, inv_degree=3, out_offsets=4,
                                                        targets=5, n=6).tobytes()[44:]
    assert padding == bytes(4)  # padding written as zeros: equal structs are equal bytes


def test_layout_positions():
    assert designs.CLASS_PLAN.words == 10
    assert designs.CLASS_PLAN.index("first", 2) == 6
    assert designs.ITERATION_STATE.span("done") == slice(1, 2)
    with pytest.raises(IndexError):
        designs.CLASS_PLAN.index("count", 4)
    with pytest.raises(KeyError):
        designs.ITERATION_STATE.index("nope")


def test_block_lanes_and_contributions_reach_nvrtc_as_defines():
    options = loader.COMPILE_OPTIONS
    assert f"-DDYNPR_BLOCK={designs.BLOCK}" in options
    assert "-DDYNPR_CLASS_LANES=" + ",".join(map(str, designs.CLASS_LANES)) in options
    assert "-DDYNPR_CONTRIBUTION=double" in options
    assert "-DDYNPR_CONTRIBUTION=float" in loader.compile_options("float32")
    # every variant stores a declared dtype; the kernels know it only by the define, in the header
    # that also types the C pointers of RankBuffers
    assert {v.contribution for v in designs.VARIANTS.values()} <= set(designs.CONTRIBUTION_TYPES)
    layouts = (loader.kernel_dir() / "layouts.cuh").read_text()
    assert "using Contribution = DYNPR_CONTRIBUTION;" in layouts and "Contribution* C[2];" in layouts
    common = (loader.kernel_dir() / "common.cuh").read_text()
    assert "constexpr int kBlock = DYNPR_BLOCK;" in common and "= 256" not in common


def test_each_header_is_inlined_once():
    source = loader.inline_source("pagerank.cu")
    assert source.count("// ---- common.cuh ----") == 1
    assert source.count("struct IterationState {") == 1
    for header in ("classes.cuh", "units.cuh", "kept.cuh", "marking.cuh", "relabel.cuh", "layouts.cuh"):
        assert source.count(f"// ---- {header} ----") == 1, header
    # only system headers (cooperative_groups.h) stay includes; the project's are inlined
    assert '#include "' not in source and "#pragma once" not in source


def test_variants_declare_one_production_design():
    production = [v.name for v in designs.VARIANTS.values() if v.production]
    assert production == [designs.DEFAULT_VARIANT]
    assert designs.variant(None) is designs.VARIANTS["classes"]
    with pytest.raises(ValueError, match="unknown GPU variant 'nope'"):
        designs.variant("nope")
    # the fused designs are the ones the default engine runs itself; every other one is a baseline
    assert {v.name for v in designs.VARIANTS.values() if v.fused} == {"classes", "classes_sync", "classes_graphs",
                                                                       "classes_persistent", "classes_c32"}
    # classes_c32 is the default but for its contributions' dtype
    assert replace(designs.VARIANTS["classes_c32"], name="classes", summary="", contribution="float64",
                   production=True) == replace(designs.VARIANTS["classes"], summary="")
    # the default picks its launch by size; the two forced variants bracket it
    bounds = {name: designs.VARIANTS[name].persistent_below for name in ("classes_graphs", "classes_persistent")}
    assert bounds["classes_graphs"] == 0 < designs.VARIANTS["classes"].persistent_below < bounds["classes_persistent"]


def test_approach_flags_cover_every_approach():
    assert tuple(designs.APPROACH_FLAGS) == designs.APPROACHES
    assert designs.APPROACH_FLAGS["dfp"] == designs.ApproachFlags(True, True, True)
    assert not any(any(vars(designs.APPROACH_FLAGS[a]).values()) for a in designs.STATIC_APPROACHES)


def test_production_engine_does_not_load_the_baselines():
    # The default engine knows the baselines only by their declaration; their code loads on first use.
    code = ("import sys, dynpr.gpu.pagerank; "
            "print(sorted(m for m in sys.modules if m.startswith('dynpr.gpu')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "dynpr.gpu.pagerank" in out and "dynpr.gpu.baselines" not in out


def test_the_config_schema_lists_the_declared_approaches():
    # A JSON schema cannot import dynpr.designs: this keeps its list the declared one.
    from pathlib import Path

    import yaml

    schema = yaml.safe_load((Path(__file__).resolve().parents[1] / "workflow/schemas/config.schema.yaml").read_text())
    assert tuple(schema["properties"]["approaches"]["items"]["enum"]) == designs.APPROACHES


def test_approach_lists_derive_from_the_approach_objects():
    assert designs.APPROACHES == tuple(a.code for a in designs.APPROACH.values())
    assert designs.STATIC_APPROACHES == ("static", "nd")
    assert [a.code for a in designs.APPROACH.values() if a.reachability] == ["dt"]
    assert [a.code for a in designs.APPROACH.values() if not a.from_previous_ranks] == [designs.BASELINE]
    assert len({(a.colour, a.marker) for a in designs.APPROACH.values()}) == len(designs.APPROACH)
