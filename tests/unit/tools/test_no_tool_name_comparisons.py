"""Per-tool knowledge lives in the registry: no code outside backend/tools compares tool names.

A comparison (``==``, ``!=``, ``in``, ``not in``) or a ``match`` case against one of the
three names, anywhere in ``backend/`` or ``console/`` outside ``backend/tools/``, fails.
"""

from __future__ import annotations

import ast
from pathlib import Path

from backend.tools.registry import TOOL_NAMES

ROOT = Path(__file__).resolve().parents[3]
NAMES = frozenset(TOOL_NAMES)

# Known and owned elsewhere at the time of writing: backend/core.py (helper "api" replaces
# its comparison with tool_spec(name).entity_field). When that lands this test fails on
# the stale entry: empty the set then.
PENDING: frozenset[str] = frozenset()


def _names_in(node: ast.AST) -> set[str]:
    """Tool-name string constants in ``node`` (itself, or inside a tuple/list/set literal)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value} & NAMES
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return set().union(*(_names_in(e) for e in node.elts)) if node.elts else set()
    return set()


def comparisons(source: str) -> list[tuple[int, str]]:
    """``(line, name)`` of every comparison or match case against a tool name."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            for operand in (node.left, *node.comparators):
                found.extend((node.lineno, name) for name in sorted(_names_in(operand)))
        elif isinstance(node, ast.MatchValue):
            found.extend((node.lineno, name) for name in sorted(_names_in(node.value)))
    return found


def _offenders() -> dict[str, list[tuple[int, str]]]:
    out: dict[str, list[tuple[int, str]]] = {}
    for package in ("backend", "console"):
        for path in sorted((ROOT / package).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel.startswith("backend/tools/"):
                continue
            hits = comparisons(path.read_text(encoding="utf-8"))
            if hits:
                out[rel] = hits
    return out


def test_the_detector_finds_every_form_of_comparison() -> None:
    source = """
if tool == "emitir-reembolso": pass
if "atualizar-cadastro" != tool: pass
ok = tool in ("consultar-status-pedido", "other")
match tool:
    case "emitir-reembolso":
        pass
fine = tool == "reembolso" or TOOLS[tool] == spec
"""
    assert comparisons(source) == [
        (2, "emitir-reembolso"),
        (3, "atualizar-cadastro"),
        (4, "consultar-status-pedido"),
        (6, "emitir-reembolso"),
    ]


def test_no_tool_name_comparison_outside_the_registry() -> None:
    offenders = _offenders()
    unexpected = {f: hits for f, hits in offenders.items() if f not in PENDING}
    assert unexpected == {}, f"read the spec (backend.tools.registry) instead: {unexpected}"
    stale = PENDING - set(offenders)
    assert not stale, f"{sorted(stale)} no longer compare tool names: remove from PENDING"
