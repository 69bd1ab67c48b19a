"""The shape of src/dynpr: its import graph has no circle, imports run down the tiers, modules stay small.

The graph's nodes are the Python modules (every ``import``, those inside functions too: a
lazy import is still a dependency) and the kernel files (``.cu``/``.cuh``), with an arrow
from a Python module to each kernel file it names in a string of its code and from a kernel
file to each header it ``#include``s.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path


ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "dynpr"
KERNELS = ROOT / "kernels"  # the design card's top level; a wheel carries them as dynpr/kernels
MAX_MODULE_LINES = 600
MAX_KERNEL_LINES = 450
MAX_PACKAGE_ENTRIES = 15
MAX_KERNEL_PARAMETERS = 8  # more go in a struct (kernels/layouts.cuh, or a __grid_constant__ one)
_KERNEL_NAME = re.compile(r"\w+\.cuh?")
_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)
_GLOBAL = re.compile(r"__global__\s+(?:__launch_bounds__\([^)]*\)\s*)?void\s+(\w+)\s*\(")

# Each module's tier, lowest first: a module imports only from its own tier or the ones below.
# A module missing here fails test_every_module_has_a_tier: place it where its imports allow.
# The subpackages' __init__ modules hold docstrings only, except those named in a tier.
TIERS = (
    # what every layer uses: errors, host memory, files, array conventions, declared designs
    {"dynpr.errors", "dynpr.designs", "dynpr.graph", "dynpr.graph.hostmem", "dynpr.graph.arrays",
     "dynpr.graph.atomic_files", "dynpr.graph.npz_files", "dynpr.io", "dynpr.generate", "dynpr.generate.rmat_stream",
     "dynpr.evaluation", "dynpr.evaluation.verdicts", "dynpr.pipeline", "dynpr.pipeline.device_claims",
     "dynpr.pipeline.jobs"},
    # the graph and batch types and the checks every input passes
    {"dynpr.graph.csr_checks", "dynpr.graph.graph", "dynpr.graph.validate", "dynpr.batches.batch"},
    # data: making, storing and applying batches, reading graph files, catalog, results, figures, claims
    {"dynpr.batches", "dynpr.batches.make", "dynpr.batches.store", "dynpr.batches.apply", "dynpr.io.readers",
     "dynpr.io.id_text", "dynpr.io.mm_fast", "dynpr.io.edge_lists", "dynpr.io.tar_streams", "dynpr.io.catalog", "dynpr.io.download", "dynpr.io.ranks",
     "dynpr.generate.random_dag", "dynpr.evaluation.results", "dynpr.evaluation.figure_style",
     "dynpr.evaluation.plots", "dynpr.evaluation.claims", "dynpr.io.matrix_market", "dynpr.evaluation.peer_programs",
     "dynpr.evaluation.peer_claims"},
    # engines: PageRank, Kahn and R-MAT on the CPU and the GPU, and the choice between them
    {"dynpr.backend", "dynpr.pagerank", "dynpr.pagerank.cpu", "dynpr.pagerank.marking", "dynpr.pagerank.options",
     "dynpr.pagerank.personalization", "dynpr.pagerank.tolerances",
     "dynpr.kahn", "dynpr.kahn.cpu", "dynpr.generate.rmat", "dynpr.gpu"},
    # what users and the workflow run
    {"dynpr", "dynpr.pagerank.dynamic", "dynpr.io.prepare", "dynpr.evaluation.experiments", "dynpr.evaluation.bench",
     "dynpr.evaluation.peers",
     "dynpr.pipeline.files", "dynpr.pagerank.from_file", "dynpr.pipeline.footprint", "dynpr.cli", "dynpr.__main__"},
)


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _python_modules() -> dict[str, Path]:
    return {_module_name(path): path for path in PACKAGE.rglob("*.py")}


def _docstring_nodes(tree: ast.AST) -> set[int]:
    """ids of the string constants that are docstrings (they may name kernel files without using them)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def _python_arrows(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    tree = ast.parse(path.read_text(), str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            # `from package import submodule` depends on the submodule, `from module import name` on the module
            imported.update(f"{source}.{alias.name}" if f"{source}.{alias.name}" in modules else source
                            for alias in node.names)
    arrows = set()
    for target in imported:
        while target not in modules and "." in target:  # `import dynpr.gpu.loader as x`, `dynpr.graph.graph.Graph`
            target = target.rpartition(".")[0]
        if target in modules and target != name:
            arrows.add(target)
    docstrings = _docstring_nodes(tree)
    arrows.update(f"kernels/{node.value}" for node in ast.walk(tree)
                  if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
                  and _KERNEL_NAME.fullmatch(node.value) and (KERNELS / node.value).is_file())
    return arrows


def import_graph() -> dict[str, set[str]]:
    """Every module of src/dynpr and every kernel file with the ones it depends on."""
    modules = _python_modules()
    graph = {name: _python_arrows(name, path, modules) for name, path in modules.items()}
    for kernel in sorted(KERNELS.glob("*.cu*")):
        graph[f"kernels/{kernel.name}"] = {f"kernels/{header}" for header in _INCLUDE.findall(kernel.read_text())}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node, or with an arrow to themselves (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while not component or component[-1] != node:
                component.append(stack.pop())
                on_stack.discard(component[-1])
            if len(component) > 1 or node in graph.get(node, ()):
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def _tier(name: str) -> int | None:
    for level, members in enumerate(TIERS):
        if name in members or (name.startswith("dynpr.gpu.") and "dynpr.gpu" in members):
            return level
    return None


def test_the_graph_sees_what_it_should():
    graph = import_graph()
    assert "dynpr.graph.graph" in graph["dynpr.batches.make"]  # a top-level import
    assert "dynpr.gpu.pagerank" in graph["dynpr.pagerank"]  # one inside a function
    assert "dynpr.pagerank.options" in graph["dynpr.pagerank.cpu"]
    assert "kernels/pagerank.cu" in graph["dynpr.gpu.loader"]  # a kernel file named in code
    assert "kernels/common.cuh" in graph["kernels/rank_vertex.cuh"]  # an #include
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"a"}, "b": set()}) == [["a"]]


def test_no_circle_among_python_modules():
    graph = import_graph()
    python_only = {name: {t for t in targets if not t.startswith("kernels/")}
                   for name, targets in graph.items() if not name.startswith("kernels/")}
    assert circles(python_only) == []


def test_no_circle_through_a_kernel_file():
    assert [c for c in circles(import_graph()) if any(node.startswith("kernels/") for node in c)] == []


def test_every_module_has_a_tier():
    assert sorted(name for name in _python_modules() if _tier(name) is None) == []


def test_imports_run_down_the_tiers():
    graph = import_graph()
    upward = sorted(f"{name} -> {target}" for name, targets in graph.items() if not name.startswith("kernels/")
                    for target in targets if not target.startswith("kernels/")
                    if _tier(name) is not None and _tier(target) is not None and _tier(target) > _tier(name))
    assert upward == []


def test_python_modules_stay_small():
    sizes = {str(path.relative_to(PACKAGE)): len(path.read_text().splitlines()) for path in PACKAGE.rglob("*.py")}
    assert {path: lines for path, lines in sizes.items() if lines > MAX_MODULE_LINES} == {}


def test_kernel_files_stay_small():
    sizes = {path.name: len(path.read_text().splitlines()) for path in KERNELS.glob("*.cu*")}
    assert {name: lines for name, lines in sizes.items() if lines > MAX_KERNEL_LINES} == {}


def test_package_shows_its_groups():
    """src/dynpr's top level stays small enough to read: subpackages by concern, a few modules."""
    entries = sorted(p.name for p in PACKAGE.iterdir() if p.name != "__pycache__")
    assert len(entries) <= MAX_PACKAGE_ENTRIES, entries
    assert not (PACKAGE / "kernels").exists() and sorted(KERNELS.glob("*.cu"))


def kernel_parameters(source: str) -> dict[str, int]:
    """Each ``__global__`` function of a CUDA source with its parameter count."""
    counts = {}
    for match in _GLOBAL.finditer(source):
        depth, end = 1, match.end()
        while depth:
            depth += {"(": 1, ")": -1}.get(source[end], 0)
            end += 1
        params, depth, count = source[match.end():end - 1], 0, 0
        for char in params:
            depth += {"(": 1, "<": 1, ")": -1, ">": -1}.get(char, 0)
            count += char == "," and depth == 0
        counts[match.group(1)] = count + 1 if params.strip() else 0
    return counts


def test_kernel_parameters_are_counted():
    assert kernel_parameters("extern \"C\" __global__ void f(int a, T<int, 2> b, double* c) {}") == {"f": 3}
    assert kernel_parameters("__global__ __launch_bounds__(256, 2) void g() {}") == {"g": 0}


def test_every_kernel_takes_few_parameters():
    counts = {f"{path.name}:{name}": n for path in KERNELS.glob("*.cu*")
              for name, n in kernel_parameters(path.read_text()).items()}
    assert len(counts) > 30  # the parser still finds the kernels
    assert {name: n for name, n in counts.items() if n > MAX_KERNEL_PARAMETERS} == {}


def test_every_measurement_folder_is_cited():
    """docs/measurements holds the runs the docs cite, one folder per topic: no orphaned run."""
    docs = "\n".join(p.read_text() for p in [ROOT / "README.md", *(ROOT / "docs").glob("*.md")])
    measurements = ROOT / "docs" / "measurements"
    folders = [f for topic in measurements.iterdir() if topic.is_dir() for f in (topic, *topic.iterdir())
               if f.is_dir()]
    assert not [f for f in measurements.iterdir() if f.is_file()]  # every file sits in its topic
    assert [str(f.relative_to(ROOT)) for f in folders if str(f.relative_to(ROOT / "docs")) not in docs] == []
