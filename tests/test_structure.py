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


PACKAGE = Path(__file__).resolve().parents[1] / "src" / "dynpr"
KERNELS = PACKAGE / "kernels"
MAX_MODULE_LINES = 600
MAX_KERNEL_LINES = 450
_KERNEL_NAME = re.compile(r"\w+\.cuh?")
_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)

# Each module's tier, lowest first: a module imports only from its own tier or the ones below.
# A module missing here fails test_every_module_has_a_tier: place it where its imports allow.
TIERS = (
    # what every layer uses: errors, host memory, files, array conventions, declared designs
    {"dynpr.errors", "dynpr.hostmem", "dynpr.arrays", "dynpr.designs", "dynpr.verdicts", "dynpr.device_claims",
     "dynpr.atomic_files", "dynpr.npz_files", "dynpr.snakemake_jobs", "dynpr.rmat_stream"},
    # the graph and batch types and the checks every input passes
    {"dynpr.csr_checks", "dynpr.graph", "dynpr.validate", "dynpr.batches.batch"},
    # data: making, storing and applying batches, reading graph files, catalog, results, figures, claims
    {"dynpr.batches", "dynpr.batches.make", "dynpr.batches.store", "dynpr.batches.apply", "dynpr.readers", "dynpr.id_text",
     "dynpr.edge_lists", "dynpr.tar_streams", "dynpr.catalog", "dynpr.download", "dynpr.random_dag", "dynpr.ranks", "dynpr.results",
     "dynpr.figure_style", "dynpr.plots", "dynpr.claims"},
    # engines: PageRank, Kahn and R-MAT on the CPU and the GPU, and the choice between them
    {"dynpr.backend", "dynpr.pagerank", "dynpr.pagerank.cpu", "dynpr.pagerank.marking", "dynpr.pagerank.options",
     "dynpr.pagerank.tolerances", "dynpr.kahn", "dynpr.kahn.cpu", "dynpr.rmat", "dynpr.locality", "dynpr.blocking", "dynpr.shards",
     "dynpr.gpu"},
    # what users and the workflow run
    {"dynpr", "dynpr.dynamic", "dynpr.prepare", "dynpr.experiments", "dynpr.bench", "dynpr.pipeline",
     "dynpr.from_file", "dynpr.footprint", "dynpr.cli", "dynpr.__main__"},
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
        while target not in modules and "." in target:  # `import dynpr.gpu.loader as x`, `dynpr.graph.Graph`
            target = target.rpartition(".")[0]
        if target in modules and target != name:
            arrows.add(target)
    docstrings = _docstring_nodes(tree)
    arrows.update(f"kernels/{node.value}" for node in ast.walk(tree)
                  if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
                  and _KERNEL_NAME.fullmatch(node.value) and (KERNELS / node.value).is_file())
    return arrows


def import_graph() -> dict[str, set[str]]:
    """Every module and kernel file of src/dynpr with the ones it depends on."""
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
    assert "dynpr.graph" in graph["dynpr.batches.make"]  # a top-level import
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
