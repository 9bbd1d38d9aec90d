"""No import cycles in ``backend`` nor in ``console``: between packages, and between modules.

Every import counts, wherever it is written: a lazy import inside a function hides a cycle
from Python's import machinery but not from the design, so it counts here too. The graph is
read from the source with :mod:`ast`, nothing is imported.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
Graph = dict[str, set[str]]

# helper "hygiene" removes these two; until its branch is merged they are known cycles.


def _modules(root: str = "backend") -> dict[str, Path]:
    found = {}
    for path in (ROOT / root).rglob("*.py"):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _imported(tree: ast.AST, module: str, is_package: bool) -> set[str]:
    """Every module name ``module`` imports (absolute, relative, in functions alike)."""
    names: set[str] = set()
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            names.add(target)
            # ``from backend.gates.scanners import hadolint`` imports the module ``hadolint``.
            names.update(f"{target}.{alias.name}" for alias in node.names)
    return names


def import_graph(level: str, root: str = "backend") -> Graph:
    """``level="package"``: ``<root>.<x>`` nodes; ``"module"``: one node per module."""
    modules = _modules(root)

    def node(name: str) -> str | None:
        if level == "package":
            parts = name.split(".")
            return ".".join(parts[:2]) if parts[0] == root and len(parts) > 1 else None
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name if name.startswith(f"{root}.") else None

    graph: Graph = defaultdict(set)
    for module, path in modules.items():
        source = node(module)
        if source is None:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for name in _imported(tree, module, path.name == "__init__.py"):
            target = node(name)
            if target is not None and target != source:
                graph[source].add(target)
    return dict(graph)


def cycles(graph: Graph) -> list[list[str]]:
    """The strongly connected components with more than one node (Tarjan), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def test_the_walker_sees_imports_and_the_finder_sees_cycles() -> None:
    packages = import_graph("package")
    assert "backend.gates" in packages["backend.prs"]
    assert "backend.store" in packages["backend.prs"]
    modules = import_graph("module")
    from_pkg_import_mod = "backend.gates.scanners.hadolint"
    assert from_pkg_import_mod in modules["backend.agents.infra_tools"]
    assert "backend.api.routes_prs" in modules["backend.api.app"]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


@pytest.mark.parametrize("level", ["package", "module"])
def test_agents_infra_and_the_module_map_are_in_no_cycle(level: str) -> None:
    mine = ("backend.agents", "backend.prs", "backend.dev", "backend.planner", "backend.module_map")
    involved = [c for c in cycles(import_graph(level)) if any(n.startswith(mine) for n in c)]
    assert involved == []


@pytest.mark.parametrize("level", ["package", "module"])
def test_backend_has_no_import_cycle(level: str) -> None:
    assert cycles(import_graph(level)) == []


@pytest.mark.parametrize("level", ["package", "module"])
def test_console_has_no_import_cycle(level: str) -> None:
    assert "console.operator_actions" in import_graph("module", "console")["console.app"]
    assert cycles(import_graph(level, "console")) == []
