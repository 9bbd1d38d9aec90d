"""facts_of: what each event says about the roster, and why any order of applying it agrees."""

from __future__ import annotations

import random
from typing import Any

from backend.agents.activity import as_event
from backend.agents.roster import render_roster
from backend.agents.roster_facts import (
    FACT_EVENTS,
    GLOBAL,
    Fact,
    Row,
    apply,
    facts_of,
    facts_of_view,
    fold,
    merge,
)
from backend.agents.team import INFRA
from backend.events import EventType


def ev(
    id_: int, type_: str, agent: str | None = None, project: str | None = "p1", **p: Any
) -> dict:
    return {"id": id_, "type": type_, "project_id": project, "agent": agent, "payload": p}


def test_a_pause_has_no_project_and_a_resume_clears_it() -> None:
    paused = ev(3, "agent.paused", "po", None, operator="ana", reason="  custo  alto ")
    assert facts_of(paused) == [Fact(GLOBAL, "pause:po", ["ana", "custo alto"], 3)]
    assert facts_of(ev(4, "agent.resumed", "po", None, operator="bob")) == [
        Fact(GLOBAL, "pause:po", None, 4)
    ]


def test_a_customer_message_is_one_flag_and_most_events_say_nothing() -> None:
    message = ev(9, "conversa.mensagem", None, None, conversaId="c", autor="cliente", texto="oi")
    assert facts_of(message) == [Fact(GLOBAL, "conversation", True, 9, "first")]
    assert facts_of(ev(10, "architecture.readiness_confirmed", "arquiteto", summary="ok")) == []


def test_the_shortcut_on_fact_events_skips_no_event_type_that_has_facts() -> None:
    # Every payload key facts_of reads, filled, on every event type the shortcut skips:
    # the full path finds nothing in any of them either.
    loaded = {
        "status": "working",
        "detail": "d",
        "operator": "ana",
        "reason": "r",
        "model": "m",
        "modules": ["api"],
        "to_agent": INFRA,
        "autonomy_seeded": {"merge": "ask"},
        "gate_status": "awaiting_qa",
        "pr_action_id": 1,
        "task_id": "t1",
        "module": "api",
    }

    def loaded_event(kind: str) -> dict:
        event = ev(1, kind, "dev-1")
        event["payload"] = {**loaded, "agent": "dev-1", "owner": "dev-1"}
        return event

    skipped = [kind for kind in EventType if kind not in FACT_EVENTS]
    assert skipped  # most event types say nothing about the roster
    for kind in skipped:
        assert facts_of_view(as_event(loaded_event(kind.value))) == [], kind
        assert facts_of(loaded_event(kind.value)) == []
    for kind in FACT_EVENTS:  # and the shortcut lets each of these through
        assert facts_of(loaded_event(kind)) == facts_of_view(as_event(loaded_event(kind)))
        assert facts_of(loaded_event(kind)), kind


def test_any_order_of_applying_the_facts_gives_the_same_table() -> None:
    log = [
        ev(1, "agent.status", "po", status="working", detail="stories"),
        ev(2, "pr.gate_changed", task_id="t1", from_status=None, gate_status="awaiting_qa"),
        ev(3, "conversa.mensagem", project=None, conversaId="c", autor="cliente", texto="oi"),
        ev(4, "pr.gate_changed", task_id="t2", from_status=None, gate_status="awaiting_qa"),
        ev(5, "agent.status", "po", status="idle"),
        ev(6, "pr.gate_changed", task_id="t1", from_status=None, gate_status="awaiting_qa"),
        ev(7, "conversa.mensagem", project=None, conversaId="d", autor="cliente", texto="oi"),
    ]
    want = fold(log)
    assert want[GLOBAL]["conversation"] == Row(True, 0, 0)  # a flag: whichever event set it
    assert want["p1"]["status:po"] == Row(["idle", ""], 5, 1)
    facts = [f for e in log for f in facts_of(e)]
    rng = random.Random(0)
    for _ in range(20):
        rng.shuffle(facts)
        table: dict[str, Row] = {}
        for fact in facts:
            apply(table, fact)
        assert table == merge(want.values())


def test_the_gate_queue_keeps_the_order_prs_were_first_seen_in() -> None:
    log = [
        ev(1, "pr.gate_changed", task_id="t1", from_status=None, gate_status="awaiting_qa"),
        ev(2, "pr.gate_changed", task_id="t2", from_status=None, gate_status="awaiting_qa"),
    ]
    # Folded newest first, t2 is met before t1: the order still follows the event ids.
    roster = {e.id: e for e in render_roster(merge(fold(reversed(log)).values()))}
    assert roster["qa"].detail == "reviewing dev PR t2 (+1 queued)"  # t1 came first
