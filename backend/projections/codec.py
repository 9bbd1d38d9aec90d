"""Fact tables to and from JSON (the snapshot format, also what a row's ``value`` holds)."""

from __future__ import annotations

from typing import Any

from backend.agents.roster_facts import Row, Table
from backend.store.db import dumps, loads

Tables = dict[str, Table]
"""scope → its fact table."""


def encode(tables: Tables) -> str:
    """``{scope: {key: [value, event_id, first_id]}}`` as compact JSON."""
    return dumps(
        {
            scope: {key: [row.value, row.event_id, row.first_id] for key, row in table.items()}
            for scope, table in tables.items()
        }
    )


def decode(text: Any) -> Tables:
    """The inverse of :func:`encode`."""
    raw = loads(text) or {}
    return {
        str(scope): {str(key): Row(v[0], int(v[1]), int(v[2])) for key, v in table.items()}
        for scope, table in raw.items()
    }


def copy(tables: Tables) -> Tables:
    """A copy whose tables can be folded onto without touching ``tables`` (rows are frozen)."""
    return {scope: dict(table) for scope, table in tables.items()}
