"""The import graph of `ge` has no cycles and follows the layering of docs' "Who may import whom".

The graph is read from the source (the AST), not from `sys.modules`, so an import inside a function
or under `if TYPE_CHECKING:` counts like one at the top of a module. `dialects/` and `passes/` are
read as the packages they install as, `ge.dialects` and `ge.passes`.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

# Where each of our packages lives in the source tree (pyproject's package-dir).
SOURCE_ROOTS = {"ge": REPO / "ge", "ge.dialects": REPO / "dialects", "ge.passes": REPO / "passes"}

# Small modules below every layer: they import only the dialects and each other.
LEAF_HELPERS = (
    "ge.errors",
    "ge.dtypes",
    "ge.weights",
    "ge.arguments",
    "ge.limits",
    "ge.layout",
    "ge.context",
    "ge.symbolic",
)


@dataclass(frozen=True)
class Rule:
    """What the modules under `layer` may import of ours: only `allowed` (when given), never `forbidden`.

    Names are module prefixes: "ge.dialects" covers ge.dialects and every module below it."""

    layer: str
    why: str
    allowed: tuple[str, ...] | None = None
    forbidden: tuple[str, ...] = ()


LAYERING = (
    Rule(
        "ge.dialects",
        "dialects import xDSL and nothing of ours beyond dialect modules",
        allowed=("ge.dialects",),
    ),
    Rule(
        "ge.errors ge.dtypes ge.weights ge.arguments ge.limits ge.layout ge.context ge.symbolic",
        "leaf helpers import the dialects and each other, nothing above them",
        allowed=("ge.dialects", *LEAF_HELPERS),
    ),
    Rule(
        "ge.semantics",
        "the op semantics import numpy, the dialects and the leaf helpers for errors, dtypes and weights",
        allowed=("ge.semantics", "ge.dialects", "ge.errors", "ge.dtypes", "ge.weights"),
    ),
    Rule(
        "ge.passes",
        "passes import dialects, semantics, the cost model and SoC profiles; never the emulator, the "
        "frontends, the API or the tools",
        allowed=("ge.passes", "ge.dialects", "ge.semantics", "ge.cost", "ge.soc", *LEAF_HELPERS),
    ),
    Rule(
        "ge.emulator",
        "the emulator never imports passes or frontends",
        forbidden=("ge.passes", "ge.frontends"),
    ),
    Rule("ge.frontends", "frontends never import passes", forbidden=("ge.passes",)),
)


def test_import_graph_has_no_cycles() -> None:
    graph = import_graph()
    cycles = [" -> ".join(cycle) for cycle in find_cycles(graph)]
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def test_imports_follow_the_layering() -> None:
    graph = import_graph()
    broken = []
    for rule in LAYERING:
        for module, imported in sorted(graph.items()):
            if not any(within(module, layer) for layer in rule.layer.split()):
                continue
            for target in sorted(imported):
                allowed = rule.allowed is None or any(within(target, name) for name in rule.allowed)
                if not allowed or any(within(target, name) for name in rule.forbidden):
                    broken.append(f"{module} imports {target} ({rule.why})")
    assert not broken, "imports against the layering:\n" + "\n".join(broken)


def test_the_graph_sees_local_and_type_checking_imports(tmp_path: Path) -> None:
    package = tmp_path / "ge"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from ge.b import B\n"
        "def f():\n    from . import c\n"
    )
    (package / "b.py").write_text("import ge.a\n")
    (package / "c.py").write_text("from .b import thing\n")
    graph = import_graph({"ge": package})
    assert graph["ge.a"] == {"ge.b", "ge.c"}
    assert graph["ge.c"] == {"ge.b"}
    assert find_cycles(graph) == [["ge.a", "ge.b", "ge.a"]]


def test_the_layering_covers_modules_that_exist() -> None:
    modules = set(import_graph())
    for rule in LAYERING:
        for name in (*rule.layer.split(), *(rule.allowed or ()), *rule.forbidden):
            assert any(within(module, name) for module in modules), f"{name} names no module"


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------


def within(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def import_graph(roots: dict[str, Path] = SOURCE_ROOTS) -> dict[str, set[str]]:
    """Each of our modules -> the modules of ours it imports (a submodule when `from pkg import sub`)."""
    files = {}
    for package, root in roots.items():
        for path in sorted(root.rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            files[".".join((package, *parts))] = path
    ours = tuple(roots)
    graph = {}
    for module, path in files.items():
        imported = set()
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                imported.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*anchor, *([node.module] if node.module else [])])
                for alias in node.names:
                    submodule = f"{base}.{alias.name}"
                    imported.add(submodule if submodule in files else base)
        graph[module] = {
            name for name in imported if name != module and any(within(name, root) for root in ours)
        }
    return graph


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle (as its module path, first module repeated at the end) per strongly connected
    component of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    lowest: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = lowest[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            successor = next(successors, None)
            if successor is not None:
                if successor not in index:
                    index[successor] = lowest[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(graph.get(successor, ())))))
                elif successor in on_stack:
                    lowest[node] = min(lowest[node], index[successor])
                continue
            work.pop()
            if work:
                lowest[work[-1][0]] = min(lowest[work[-1][0]], lowest[node])
            if lowest[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(component)
    return [cycle_through(graph, component) for component in components]


def cycle_through(graph: dict[str, set[str]], component: set[str]) -> list[str]:
    """A shortest cycle from the component's first module back to itself (breadth-first)."""
    start = min(component)
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for successor in sorted(graph.get(node, ()) & component):
                if successor == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return [start, *reversed(path[:-1]), start]
                if successor not in previous:
                    previous[successor] = node
                    following.append(successor)
        frontier = following
    raise AssertionError(f"no cycle through {start}")
