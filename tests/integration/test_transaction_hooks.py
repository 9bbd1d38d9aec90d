"""``Tx.before_commit``: a hook's statements commit with the transaction, as its last work,
and a rolled-back transaction never runs it (both dialects)."""

from __future__ import annotations

import pytest

from backend.events import EventLog, EventType
from backend.store.db import Database, Tx


def test_a_hook_runs_last_and_commits_with_the_transaction(any_db: Database) -> None:
    events = EventLog(any_db)
    order: list[str] = []

    def hook(tx: Tx) -> None:
        order.append("hook")
        events.append_in(tx, EventType.AGENT_PAUSED, {"operator": "hook"}, agent="criativo")

    with any_db.transaction() as tx:
        tx.before_commit(hook)
        events.append_in(tx, EventType.AGENT_PAUSED, {"operator": "body"}, agent="criativo")
        order.append("body")
    assert order == ["body", "hook"]
    log = events.until(events.last_id())
    assert [e.payload["operator"] for e in log] == ["body", "hook"]


def test_a_rolled_back_transaction_runs_no_hook(any_db: Database) -> None:
    events = EventLog(any_db)
    ran: list[Tx] = []

    def fail() -> None:
        with any_db.transaction() as tx:
            tx.before_commit(ran.append)
            events.append_in(tx, EventType.AGENT_PAUSED, {"operator": "x"}, agent="criativo")
            raise RuntimeError("the caller fails")

    with pytest.raises(RuntimeError):
        fail()
    assert ran == []
    assert events.last_id() == 0
    with any_db.transaction() as tx:  # a later transaction starts with no hook of its own
        assert tx.state == {}
