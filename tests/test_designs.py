"""dynpr.designs: the declarations the engines, the kernels and the memory model share."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from dynpr import designs
from dynpr.gpu import loader

_STRUCT = re.compile(r"struct (\w+) \{([^}]*)\};")
_FIELD = re.compile(r"^\s*(?:unsigned )?int (\w+)(?:\[(\w+)\])?;", re.MULTILINE)


def header_structs() -> dict[str, tuple[tuple[str, int], ...]]:
    """The int structs of kernels/layouts.cuh as (field, element count), kMaxClasses read as the class count."""
    text = (loader.kernel_dir() / "layouts.cuh").read_text()
    sizes = {"kMaxClasses": int(re.search(r"constexpr int kMaxClasses = (\d+);", text).group(1))}
    return {name: tuple((field, int(sizes.get(count, count or 1))) for field, count in _FIELD.findall(body))
            for name, body in _STRUCT.findall(text)}


@pytest.mark.parametrize("layout", [designs.CLASS_PLAN, designs.ITERATION_STATE])
def test_python_layouts_mirror_the_header(layout):
    assert header_structs()[layout.name] == layout.fields


def test_layout_positions():
    assert designs.CLASS_PLAN.words == 10
    assert designs.CLASS_PLAN.index("first", 2) == 6
    assert designs.ITERATION_STATE.span("done") == slice(1, 2)
    with pytest.raises(IndexError):
        designs.CLASS_PLAN.index("count", 4)
    with pytest.raises(KeyError):
        designs.ITERATION_STATE.index("nope")


def test_block_and_lanes_reach_nvrtc_as_defines():
    options = loader.COMPILE_OPTIONS
    assert f"-DDYNPR_BLOCK={designs.BLOCK}" in options
    assert "-DDYNPR_CLASS_LANES=" + ",".join(map(str, designs.CLASS_LANES)) in options
    common = (loader.kernel_dir() / "common.cuh").read_text()
    assert "constexpr int kBlock = DYNPR_BLOCK;" in common and "= 256" not in common


def test_each_header_is_inlined_once():
    source = loader.inline_source("pagerank.cu")
    assert source.count("// ---- common.cuh ----") == 1
    assert source.count("struct IterationState {") == 1
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
                                                                       "classes_persistent"}
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
