"""facts_of: what each event says about the roster, and why any order of applying it agrees."""

from __future__ import annotations

import random
from typing import Any

from backend.agents.roster import render_roster
from backend.agents.roster_facts import GLOBAL, Fact, Row, apply, facts_of, fold, merge


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
