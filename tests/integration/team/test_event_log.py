"""The event log refuses names outside EventType and payloads that do not fit their model,
before anything is written; enum members and their plain-string values both work."""

from __future__ import annotations

from typing import Any

import pytest

from backend.events import EventLog, EventType
from backend.exceptions import ValidationError
from backend.store.db import Database


def test_members_and_their_string_values_are_appended(any_db: Database) -> None:
    log = EventLog(any_db)
    first = log.append(EventType.AGENT_STATUS, {"status": "working", "detail": "x"}, agent="po")
    # Callers that still pass the literal (StrEnum members are str) keep working.
    second = log.append("agent.status", {"status": "idle", "detail": ""}, agent="po")  # type: ignore[arg-type]
    stored = log.after(first.id - 1)
    assert [e.type for e in stored] == ["agent.status", "agent.status"]
    assert type(stored[0].type) is str
    assert first.type == second.type == "agent.status"
    assert stored[0].payload == {"status": "working", "detail": "x"}


@pytest.mark.parametrize(
    ("type_", "payload", "message"),
    [
        ("agent.stauts", {"status": "idle"}, "unknown event type 'agent.stauts'"),
        ("test.tick", {"i": 1}, "unknown event type 'test.tick'"),
        (EventType.AGENT_STATUS, {"status": "napping"}, "agent.status does not fit"),
        (EventType.INFRA_PR_MERGED, {"pr_action_id": "act_1"}, "operator: Field required"),
    ],
)
def test_what_does_not_fit_is_refused_and_nothing_is_written(
    any_db: Database, type_: Any, payload: dict[str, Any], message: str
) -> None:
    log = EventLog(any_db)
    seen: list[Any] = []
    log.add_listener(seen.append)
    before = log.last_id()
    with pytest.raises(ValidationError, match=message):
        log.append(type_, payload)
    with pytest.raises(ValidationError), any_db.transaction() as tx:
        log.append_in(tx, type_, payload)
    assert log.last_id() == before
    assert seen == []


def test_a_refused_event_rolls_back_the_callers_transaction(any_db: Database) -> None:
    log = EventLog(any_db)
    before = log.last_id()

    def two_projects() -> None:
        with any_db.transaction() as tx:
            log.append_in(tx, EventType.PROJECT_CREATED, {"name": "kept?"})
            log.append_in(tx, EventType.PROJECT_CREATED, {"name": 3})

    with pytest.raises(ValidationError, match="name: Input should be a valid string"):
        two_projects()
    assert log.last_id() == before
