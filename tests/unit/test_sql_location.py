"""SQL lives in ``sql/``: no SQL statement written as a Python string anywhere in ``backend/``.

The check reads every module's syntax tree (not its text, so comments and docstrings do not
count) and flags each string literal, or f-string with its fields as ``{}``, that *starts*
with a statement keyword followed by more words (``"SELECT"`` alone is a privilege name).
Adjacent literals are one string to Python, so a message that merely continues with
"DROP ROLE …" on its second source line is not a statement.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from backend.store.queries import load_queries

ROOT = Path(__file__).resolve().parents[2]
BACKEND = ROOT / "backend"

STATEMENT = re.compile(r"^\s*(SELECT|INSERT|UPDATE|DELETE|CREATE|ALTER|DROP|GRANT|REVOKE)\s+\S")

# (module, how the literal starts) → why it may stay. Each entry must still match something
# (a stale exception fails the test below), so moving the SQL forces removing its entry.
ALLOWED: dict[tuple[str, str], str] = {
    # The grants spec (a Python table) is the one source of truth for the GRANTs, the SQLite
    # authorizer and `audit grants`; these lines render it, and tests/unit/test_grants.py
    # checks the committed sql/postgres/grants.sql against the rendering.
    ("backend/erp/grants.py", "REVOKE ALL ON pedidos, clientes FROM {}"): "rendered from spec",
    ("backend/erp/grants.py", "GRANT {}{} ON {} TO {}"): "rendered from the grants spec",
}


def _docstrings(tree: ast.AST) -> set[int]:
    """``id()`` of every docstring node (module, class, function)."""
    found: set[int] = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
            and node.body
        ):
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def _text(node: ast.AST) -> str | None:
    """A string literal's text; an f-string's with ``{}`` in place of each field."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
    return None


def sql_literals(path: Path) -> list[tuple[int, str]]:
    """``(line, text)`` of every string literal in ``path`` that starts a SQL statement."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    skip = _docstrings(tree)
    inner: set[int] = set()  # the constant parts of an f-string are checked as the f-string
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            inner.update(id(v) for v in node.values)
    hits = []
    for node in ast.walk(tree):
        if id(node) in skip or id(node) in inner:
            continue
        text = _text(node)
        if text is not None and STATEMENT.match(text):
            hits.append((getattr(node, "lineno", 0), text.strip()))
    return sorted(hits)


def _findings() -> list[tuple[str, int, str]]:
    out = []
    for path in sorted(BACKEND.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        out += [(rel, line, text) for line, text in sql_literals(path)]
    return out


def _allowed(rel: str, text: str) -> tuple[str, str] | None:
    for key in ALLOWED:
        if key[0] == rel and text.startswith(key[1]):
            return key
    return None


def test_no_sql_statement_in_backend_python() -> None:
    stray = [
        f"{rel}:{line}: {text.splitlines()[0][:80]}"
        for rel, line, text in _findings()
        if _allowed(rel, text) is None
    ]
    assert not stray, "SQL belongs in sql/ as a named query:\n" + "\n".join(stray)


def test_every_exception_is_still_needed() -> None:
    used = {_allowed(rel, text) for rel, _, text in _findings()}
    stale = sorted(set(ALLOWED) - used)
    assert not stale, f"these exceptions match no SQL any more; remove them: {stale}"


@pytest.mark.parametrize(
    ("source", "flagged"),
    [
        ('q = "SELECT id FROM t"', True),
        ('q = f"DROP TABLE IF EXISTS {name}"', True),
        ('q = """\n  UPDATE t SET a = 1"""', True),
        ('privilege = "SELECT"', False),  # a privilege name, not a statement
        ('msg = "Create a project"', False),  # prose: keywords are matched in capitals
        ('def f():\n    """SELECT the best row."""', False),  # a docstring
        ('msg = "refused: " "DROP ROLE would fail"', False),  # one literal, not a statement
    ],
)
def test_the_check_tells_sql_from_prose(tmp_path: Path, source: str, flagged: bool) -> None:
    module = tmp_path / "m.py"
    module.write_text(source + "\n", encoding="utf-8")
    assert bool(sql_literals(module)) is flagged


def test_the_moved_queries_are_loaded() -> None:
    """The statements moved out of Python exist for the dialects that run them."""
    postgres, sqlite = load_queries("postgres"), load_queries("sqlite")
    for name in (
        "migrations_lock",
        "migrations_table",
        "migration_record",
        "audit_privileges",
        "roles_drop_owned",
        "role_nologin",
        "ledger_tables_present",
        "project_set_repo",
    ):
        assert name in postgres, name
    for name in ("migrations_begin", "migrations_table", "migration_record", "ledger_drop_records"):
        assert name in sqlite, name
    assert ":version" in sqlite["migration_record"]  # parameters rewritten for sqlite3
