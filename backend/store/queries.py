"""Named SQL queries loaded once from ``sql/``.

``sql/queries.sql`` holds the queries both dialects share; ``sql/<dialect>/queries.sql``
adds or overrides the ones whose syntax differs. A query starts with ``-- name: NAME``.
Parameters are written ``%(param)s`` (psycopg's style); for SQLite they are rewritten
to ``:param`` once, at load time.
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources
from typing import Literal

Dialect = Literal["sqlite", "postgres"]

_NAME = re.compile(r"^--\s*name:\s*(\S+)\s*$", re.MULTILINE)
_PARAM = re.compile(r"%\((\w+)\)s")


def _parse(text: str) -> dict[str, str]:
    parts = _NAME.split(text)
    queries: dict[str, str] = {}
    for name, body in zip(parts[1::2], parts[2::2], strict=True):
        queries[name] = body.strip().rstrip(";")
    return queries


def _read(path: str) -> str:
    node = resources.files("sql").joinpath(path)
    return node.read_text(encoding="utf-8") if node.is_file() else ""


@cache
def load_queries(dialect: Dialect) -> dict[str, str]:
    """All named queries for ``dialect``, with parameters in the driver's style."""
    queries = _parse(_read("queries.sql"))
    queries.update(_parse(_read(f"{dialect}/queries.sql")))
    if dialect == "sqlite":
        queries = {k: _PARAM.sub(r":\1", v).replace("%%", "%") for k, v in queries.items()}
    return queries


def migration_files(dialect: Dialect) -> list[tuple[int, str, str]]:
    """``(version, name, sql)`` for every numbered migration of ``dialect``, in order."""
    folder = resources.files("sql").joinpath(dialect, "migrations")
    found = []
    for node in folder.iterdir():
        match = re.match(r"^(\d{4})_(\w+)\.sql$", node.name)
        if match:
            found.append((int(match.group(1)), match.group(2), node.read_text(encoding="utf-8")))
    found.sort()
    versions = [v for v, _, _ in found]
    if len(set(versions)) != len(versions):
        raise RuntimeError(f"duplicate migration number in sql/{dialect}/migrations")
    return found
