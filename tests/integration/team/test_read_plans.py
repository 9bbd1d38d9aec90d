"""The event log's reads the routes make are index range scans on SQLite, whatever the mix
of event types (issue 14: bounded reads). SQLite plans without statistics, from the schema
alone, so a wrong choice here is the choice every store makes: with only (session_id, id)
and (type, id) to pick from, a conversation's attempts were read through the type index,
walking every attempt of every conversation (127 ms at 1M events, growing with the log)."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest

from backend.events import EventType
from backend.events.catalog import OPERATOR_ACTIONS
from backend.store.db import open_database
from backend.store.migrate import migrate
from backend.store.queries import load_queries

# query -> the index its plan must search (the rowid is the primary key's).
ROUTE_READS = {
    "events_of_session_type_newest": "events_session_type_idx",  # conversation's attempts
    "events_of_session_type": "events_session_type_idx",
    "events_of_agent": "events_session_type_idx",  # a session agent's events of one type
    "events_agent_before": "events_agent_type_idx",  # an agent's turns, paged
    "events_agent_latest": "events_agent_type_idx",
    "events_before": "INTEGER PRIMARY KEY",  # activity feed pages
    "events_after": "INTEGER PRIMARY KEY",  # events tail, SSE resume
    "events_after_upto": "INTEGER PRIMARY KEY",
    # the audit trail, each filter on its own index, stopping at LIMIT (no sort of them all)
    "audit_page": "events_type_idx",
    "audit_tail": "events_type_idx",
    "audit_page_operator": "events_operator_action_idx",
    "audit_tail_operator": "events_operator_action_idx",
    "audit_page_subject": "events_audit_subject_idx",
    "audit_tail_subject": "events_audit_subject_idx",
}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("plans") / "c.sqlite3"
    db = open_database(f"sqlite:///{path}")
    try:
        migrate(db)
    finally:
        db.close()
    return path


@pytest.mark.parametrize("name", sorted(ROUTE_READS))
def test_a_route_read_searches_its_index(store: Path, name: str) -> None:
    sql = load_queries("sqlite")[name]
    params: dict[str, object] = dict.fromkeys(re.findall(r":(\w+)", sql), 1)
    params.update(operator="ana", subject="pr-1")
    with sqlite3.connect(store) as conn:
        plan = [row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}", params)]
    on_events = [step for step in plan if " events" in f" {step}"]
    assert on_events, plan
    assert all(step.startswith("SEARCH events") for step in on_events), plan
    assert any(ROUTE_READS[name] in step for step in on_events), plan
    assert not [step for step in plan if "TEMP B-TREE" in step], plan  # read in order


def test_the_audit_queries_name_every_audited_type() -> None:
    """They name ``operator.action`` literally (the partial indexes need it)."""
    queries = load_queries("sqlite")
    assert OPERATOR_ACTIONS == (EventType.OPERATOR_ACTION,)
    for name in (n for n in ROUTE_READS if n.startswith("audit_")):
        assert f"type = '{EventType.OPERATOR_ACTION.value}'" in queries[name]


def test_the_newest_infra_pr_is_one_step_back_on_its_partial_index_per_scope(
    store: Path,
) -> None:
    """The roster's idle Infra line: never every infra PR of the project sorted."""
    sql = load_queries("sqlite")["roster_gate_newest_infra"]
    with sqlite3.connect(store) as conn:
        plan = [
            row[3]
            for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}", {"global": "", "scope": "p1"})
        ]
    searches = [step for step in plan if step.startswith("SEARCH roster_facts")]
    assert searches == ["SEARCH roster_facts USING INDEX roster_facts_infra_idx (scope=?)"] * 2
