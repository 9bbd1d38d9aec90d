"""Migrations apply to an empty database and are idempotent, on both engines."""

from __future__ import annotations

import pytest

from backend.store.db import Database, open_database
from backend.store.migrate import migrate
from backend.store.queries import migration_files

TABLES = {
    "events",
    "ledger_counters",
    "ledger_records",
    "interruptions",
    "conversation_messages",
    "pedidos",
    "clientes",
    "schema_migrations",
    "gate_jobs",
}


def _tables(db: Database) -> set[str]:
    sql = (
        "SELECT name FROM sqlite_master WHERE type='table'"
        if db.dialect == "sqlite"
        else "SELECT table_name AS name FROM information_schema.tables WHERE table_schema='public'"
    )
    with db.transaction(write=False) as tx:
        tx.execute_sql(sql)
        return {r["name"] for r in tx._cursor.fetchall()}


@pytest.mark.parametrize("engine", ["sqlite", "postgres"])
def test_migrations_apply_to_empty_database(
    engine: str, request: pytest.FixtureRequest, tmp_path
) -> None:
    url = (
        f"sqlite:///{tmp_path / 'm.sqlite3'}"
        if engine == "sqlite"
        else request.getfixturevalue("pg_url")
    )
    db = open_database(url)
    try:
        applied = migrate(db)
        assert applied == [v for v, _, _ in migration_files(db.dialect)]
        assert _tables(db) >= TABLES
        assert migrate(db) == []  # second run: nothing to do, no error
    finally:
        db.close()


def test_both_dialects_have_the_same_migration_numbers() -> None:
    assert [v for v, _, _ in migration_files("sqlite")] == [
        v for v, _, _ in migration_files("postgres")
    ]
