"""Named SQL queries loaded once from ``sql/``.

``sql/queries.sql`` holds the queries both dialects share; ``sql/<dialect>/queries.sql``
adds or overrides the ones whose syntax differs, and a concern with many queries keeps them
beside these as ``<concern>_queries.sql`` (:func:`level_queries`). A query starts with
``-- name: NAME``; parameters are written ``%(param)s`` (rewritten to ``:param`` for
SQLite at load time). A role or table the caller chooses is a ``{placeholder}`` that
:func:`composed` fills with ``psycopg.sql.Identifier``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache
from importlib import resources
from importlib.resources.abc import Traversable
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from psycopg import sql

Dialect = Literal["sqlite", "postgres"]

_NAME = re.compile(r"^--\s*name:\s*(\S+)\s*$", re.MULTILINE)
_PARAM = re.compile(r"%\((\w+)\)s")


def _parse(text: str) -> dict[str, str]:
    parts = _NAME.split(text)
    queries: dict[str, str] = {}
    for name, body in zip(parts[1::2], parts[2::2], strict=True):
        queries[name] = body.strip().rstrip(";")
    return queries


_QUERY_FILE = re.compile(r"^(?:\w+_)?queries\.sql$")


def _name(node: Traversable) -> str:
    return node.name


def level_queries(folder: Traversable) -> dict[str, str]:
    """Every query file of one folder (``queries.sql``, ``*_queries.sql``), merged.

    ``sql/erp_queries.sql`` holds what the tools run as their ERP roles;
    ``sql/<dialect>/admin_queries.sql`` the migrations table, tool roles, ``audit grants`` and
    ``teardown``. A name defined twice on one level is an error, not a silent override.

    Raises:
        RuntimeError: one name is defined in two files of the folder (or twice in one).
    """
    if not folder.is_dir():
        return {}
    queries: dict[str, str] = {}
    for file in sorted((f for f in folder.iterdir() if _QUERY_FILE.match(f.name)), key=_name):
        text = file.read_text(encoding="utf-8")
        names = _NAME.findall(text)
        for name, body in _parse(text).items():
            if name in queries or names.count(name) > 1:
                raise RuntimeError(f"query {name!r} is defined twice in {folder.name}/")
            queries[name] = body
    return queries


@cache
def load_queries(dialect: Dialect) -> dict[str, str]:
    """All named queries for ``dialect``, with parameters in the driver's style."""
    root = resources.files("sql")
    queries = level_queries(root)
    queries.update(level_queries(root.joinpath(dialect)))
    if dialect == "sqlite":
        queries = {k: _PARAM.sub(r":\1", v).replace("%%", "%") for k, v in queries.items()}
    return queries


def query(dialect: Dialect, name: str) -> str:
    """The text of one named query.

    Raises:
        KeyError: no query of that name exists for ``dialect``.
    """
    try:
        return load_queries(dialect)[name]
    except KeyError:
        raise KeyError(f"no query named {name!r} in sql/ for {dialect}") from None


def composed(name: str, **parts: str | Sequence[str] | sql.Composable) -> sql.Composed:
    """A PostgreSQL query whose ``{placeholders}`` are filled with quoted identifiers.

    A string becomes ``sql.Identifier``, a sequence of strings a comma-separated list of
    them (``DROP OWNED BY a, b``); a ``sql.Composable`` (e.g. ``sql.Literal(password)``) is
    used as given.
    """
    from psycopg import sql

    def part(value: str | Sequence[str] | sql.Composable) -> sql.Composable:
        if isinstance(value, sql.Composable):
            return value
        if isinstance(value, str):
            return sql.Identifier(value)
        return sql.SQL(", ").join(sql.Identifier(v) for v in value)

    return sql.SQL(query("postgres", name)).format(**{k: part(v) for k, v in parts.items()})


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
