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
    "jobs",
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


def test_0021_keeps_the_ledger_rows_and_drops_the_redundant_event_index(
    tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An existing SQLite store moves to the WITHOUT ROWID ledger tables with every row."""
    import backend.store.migrate as migrate_module

    every = migration_files("sqlite")
    monkeypatch.setattr(
        migrate_module, "migration_files", lambda d: [m for m in every if m[0] < 21]
    )
    db = open_database(f"sqlite:///{tmp_path / 'old.sqlite3'}")
    try:
        migrate(db)
        with db.transaction() as tx:
            tx.execute_sql(
                "INSERT INTO ledger_counters (chave, attempts, blocked, updated_at) "
                "VALUES ('c#p#t', 3, 1, 'now')"
            )
            tx.execute_sql(
                "INSERT INTO ledger_records (chave, ferramenta, conversa_id, entidade_id, status,"
                " payload_hash, valor, resultado, lease_until, created_at, updated_at) VALUES"
                " ('k', 'emitir-reembolso', 'c', 'p', 'executado', 'h', '10.00', '{\"ok\":1}',"
                " 0, 'then', 'now')"
            )
        monkeypatch.undo()
        assert migrate(db) == [v for v, _, _ in every if v >= 21]
        with db.transaction(write=False) as tx:
            counter = tx.one("ledger_counter_get", {"chave": "c#p#t"})
            tx.execute_sql("SELECT chave, status, resultado FROM ledger_records")
            records = tx._cursor.fetchall()
            tx.execute_sql("SELECT name, sql FROM sqlite_master WHERE name LIKE 'ledger_%'")
            schema = {r["name"]: r["sql"] for r in tx._cursor.fetchall()}
            tx.execute_sql("SELECT name FROM sqlite_master WHERE type = 'index'")
            indexes = {r["name"] for r in tx._cursor.fetchall()}
    finally:
        db.close()
    assert counter == {"chave": "c#p#t", "attempts": 3, "blocked": 1}
    assert records == [{"chave": "k", "status": "executado", "resultado": '{"ok":1}'}]
    assert schema["ledger_counters"].endswith("WITHOUT ROWID")
    assert schema["ledger_records"].endswith("WITHOUT ROWID")
    assert "ledger_records_status_idx" in indexes
    assert "events_session_idx" not in indexes
    assert "events_session_type_idx" in indexes


def test_0026_moves_gate_runs_onto_the_job_engine(
    tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PRs waiting in a gate get a queued ``gates`` job, a failed gate run a dead one (an
    operator reruns it), a settled PR none; ``gate_jobs`` is gone."""
    import backend.store.migrate as migrate_module

    every = migration_files("sqlite")
    monkeypatch.setattr(
        migrate_module, "migration_files", lambda d: [m for m in every if m[0] < 26]
    )
    db = open_database(f"sqlite:///{tmp_path / 'old.sqlite3'}")
    try:
        migrate(db)
        with db.transaction() as tx:
            for pr, status in (("a", "awaiting_qa"), ("b", "awaiting_secops"), ("c", "merged")):
                tx.execute_sql(
                    "INSERT INTO pull_requests (id, kind, project_id, author, title, branch,"
                    " head, gate_status, created_at, updated_at) VALUES"
                    f" ('{pr}', 'infra', 'p', 'infra', 't', 'b-{pr}', 'h', '{status}', 'then',"
                    " 'now')"
                )
            tx.execute_sql(
                "INSERT INTO gate_jobs (pr_id, status, attempts, last_error, created_at,"
                " updated_at) VALUES ('b', 'failed', 2, 'semgrep crashed', 'then', 'now')"
            )
        monkeypatch.undo()
        assert migrate(db) == [v for v, _, _ in every if v >= 26]
        with db.transaction(write=False) as tx:
            tx.execute_sql(
                "SELECT kind, payload, unique_key, state, attempts, last_error FROM jobs"
                " ORDER BY unique_key"
            )
            jobs = tx._cursor.fetchall()
            tx.execute_sql("SELECT name FROM sqlite_master WHERE name = 'gate_jobs'")
            gone = tx._cursor.fetchall() == []
    finally:
        db.close()
    assert jobs == [
        {
            "kind": "gates",
            "payload": '{"pr_id":"a"}',
            "unique_key": "gates:a",
            "state": "queued",
            "attempts": 0,
            "last_error": None,
        },
        {
            "kind": "gates",
            "payload": '{"pr_id":"b"}',
            "unique_key": "gates:b",
            "state": "dead",
            "attempts": 2,
            "last_error": "semgrep crashed",
        },
    ]
    assert gone
