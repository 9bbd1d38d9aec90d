"""``transaction(write=False)``: on PostgreSQL each statement on its own on a read-only
session, no ``BEGIN``/``COMMIT`` of its own; on both dialects a write slipped into it fails
and leaves nothing behind."""

from __future__ import annotations

import pytest

from backend.events import EventLog, EventType
from backend.exceptions import StorageError
from backend.store.db import Database


def test_a_read_block_runs_each_statement_on_its_own(pg_db: Database) -> None:
    # now() is when the current transaction started: inside one BEGIN/COMMIT, a statement
    # after a 20 ms one starts later than its transaction did.
    with pg_db.transaction(write=False) as tx:
        assert tx.execute_sql("SELECT pg_sleep(0.02)") == 1
        assert tx.execute_sql("SELECT 1 WHERE now() = statement_timestamp()") == 1
    with pg_db.transaction() as tx:  # a write block is still one transaction
        assert tx.execute_sql("SELECT pg_sleep(0.02)") == 1
        assert tx.execute_sql("SELECT 1 WHERE now() = statement_timestamp()") == 0


def test_a_write_in_a_read_block_fails_and_changes_nothing(any_db: Database) -> None:
    events = EventLog(any_db)
    before = events.last_id()
    with (
        pytest.raises(StorageError, match="read-only transaction"),
        any_db.transaction(write=False) as tx,
    ):
        events.append_in(tx, EventType.AGENT_PAUSED, {"operator": "x"}, agent="criativo")
    assert events.last_id() == before
    # The session (SQLite: the thread's connection) still reads, and writes still commit.
    events.append(EventType.AGENT_PAUSED, {"operator": "y"}, agent="criativo")
    assert events.last_id() > before
    assert [e.payload["operator"] for e in events.after(before, 10)] == ["y"]


def test_a_read_block_sees_what_other_sessions_committed(any_db: Database) -> None:
    events = EventLog(any_db)
    with any_db.transaction(write=False) as tx:
        seen = tx.one("events_last_id")
    events.append(EventType.AGENT_PAUSED, {"operator": "z"}, agent="criativo")
    with any_db.transaction(write=False) as tx:
        now = tx.one("events_last_id")
    assert seen is not None
    assert now is not None
    assert int(now["last_id"] or 0) == int(seen["last_id"] or 0) + 1
