"""derive_roster: who is on the panel, with which status, at any point of the log."""

from __future__ import annotations

from typing import Any

from backend.agents.providers import model_binding
from backend.agents.roster import RosterEntry, derive_roster
from backend.settings import Settings

_ids = iter(range(1, 10_000))


def ev(type_: str, agent: str | None = None, **payload: Any) -> dict[str, Any]:
    return {
        "id": next(_ids),
        "type": type_,
        "ts": "2026-07-24T12:00:00.000Z",
        "project_id": "p1",
        "session_id": "s1",
        "agent": agent,
        "payload": payload,
    }


def by_id(roster: list[RosterEntry]) -> dict[str, RosterEntry]:
    return {entry.id: entry for entry in roster}


def summary(roster: list[RosterEntry]) -> list[tuple[str, str]]:
    return [(entry.id, entry.status) for entry in roster]


def test_fresh_project_has_the_three_conversational_agents_idle() -> None:
    roster = derive_roster([], None, False, [])
    assert summary(roster) == [("criativo", "idle"), ("po", "idle"), ("arquiteto", "idle")]
    assert roster[1].to_dict() == {
        "id": "po",
        "role": "product owner",
        "status": "idle",
        "model": None,
        "autonomy": {},
        "detail": "waiting for input",
        "paused_by": None,
        "usage": None,  # issue 13: today's tokens (from the usage table), none yet
    }


def test_a_paused_agent_shows_paused_and_who_until_resumed_in_every_project() -> None:
    paused = {**ev("agent.paused", "po", operator="ana", reason="custo"), "project_id": None}
    log = [
        ev("execution.activated", modules=["api"]),
        ev("agent.status", "po", status="working", detail="writing stories"),
        paused,
        {**ev("agent.paused", "dev-api", operator="bob"), "project_id": None},
        ev("agent.status", "po", status="idle"),  # the turn that was running ended
    ]
    roster = by_id(derive_roster(log, None, None, None))
    assert (roster["po"].status, roster["po"].paused_by) == ("paused", "ana")
    assert roster["po"].detail == "paused by ana: custo"
    assert (roster["dev-api"].status, roster["dev-api"].detail) == ("paused", "paused by bob")
    assert (roster["criativo"].status, roster["criativo"].paused_by) == ("idle", None)
    resumed = [*log, {**ev("agent.resumed", "po", operator="bob"), "project_id": None}]
    roster = by_id(derive_roster(resumed, None, None, None))
    assert (roster["po"].status, roster["po"].paused_by) == ("idle", None)
    assert roster["dev-api"].status == "paused"
    # Time travel: up to the pause, the PO was simply working.
    before = by_id(derive_roster(log[:2], None, None, None))
    assert (before["po"].status, before["po"].paused_by) == ("working", None)


def test_conversational_status_follows_the_latest_agent_status() -> None:
    log = [
        ev("agent.status", "po", status="working"),
        ev("agent.status", "criativo", status="working", detail="shaping the idea"),
        ev("agent.status", "po", status="idle"),
    ]
    roster = by_id(derive_roster(log, None, None, None))
    assert (roster["po"].status, roster["po"].detail) == ("idle", "waiting for input")
    assert (roster["criativo"].status, roster["criativo"].detail) == ("working", "shaping the idea")
    assert (roster["arquiteto"].status, roster["arquiteto"].detail) == ("idle", "waiting for input")


def test_infra_joins_after_the_accepted_handoff_with_its_seeded_autonomy() -> None:
    offered = [
        ev(
            "handoff.offered",
            "arquiteto",
            handoff_id="h1",
            from_agent="arquiteto",
            to_agent="infra",
        )
    ]
    assert "infra" not in by_id(derive_roster(offered, None, None, None))
    accepted = [
        *offered,
        ev(
            "handoff.accepted",
            None,
            handoff_id="h1",
            from_agent="arquiteto",
            to_agent="infra",
            autonomy_seeded={"open_infra_pr": "auto_approve", "terminal": "deny"},
        ),
    ]
    infra = by_id(derive_roster(accepted, None, None, None))["infra"]
    assert (infra.role, infra.status) == ("infrastructure", "idle")
    assert infra.autonomy == {"open_infra_pr": "auto_approve", "terminal": "deny"}


def test_infra_joins_from_a_handoff_record_too() -> None:
    records = [{"id": "h1", "from_agent": "arquiteto", "to_agent": "infra", "status": "offered"}]
    assert "infra" not in by_id(derive_roster([], None, None, records))
    records[0]["status"] = "accepted"
    assert "infra" in by_id(derive_roster([], None, None, records))


def test_dev_agents_appear_per_module_only_when_execution_is_active() -> None:
    module_map = {"modules": [{"name": "api", "path": "services/api"}, {"name": "web"}]}
    assert len(derive_roster([], module_map, False, None)) == 3
    forced = derive_roster([], module_map, True, None)
    assert [e.id for e in forced][3:] == ["dev-api", "dev-web"]
    assert forced[3].role == "developer (api)"
    from_log = derive_roster(
        [ev("execution.activated", None, modules=["worker"])], None, None, None
    )
    assert [(e.id, e.status, e.detail) for e in from_log][3:] == [
        ("dev-worker", "idle", "waiting for a task")
    ]


def test_dev_status_heuristics() -> None:
    base = [ev("execution.activated", None, modules=["api", "web", "jobs"])]
    log = [
        *base,
        ev("dev.task_started", "dev-api", task_id="t1", title="health endpoint"),
        ev("dev.task_started", "dev-web", task_id="t2"),
        ev("backlog.task_blocked", None, task_id="t2", module="web", reason="needs the API"),
        ev("dev.task_started", "dev-jobs", task_id="t3"),
        ev("dev.task_done", "dev-jobs", task_id="t3"),
    ]
    roster = by_id(derive_roster(log, None, None, None))
    assert (roster["dev-api"].status, roster["dev-api"].detail) == (
        "working",
        "working on task t1: health endpoint",
    )
    assert (roster["dev-web"].status, roster["dev-web"].detail) == (
        "blocked",
        "blocked on task t2: needs the API",
    )
    assert (roster["dev-jobs"].status, roster["dev-jobs"].detail) == ("idle", "finished task t3")


def test_gates_appear_once_a_gate_opens_and_pass_the_ball() -> None:
    opened = [ev("infra.pr_opened", "infra", pr_action_id="pa-1", paths=["Dockerfile"])]
    roster = by_id(derive_roster(opened, None, None, None))
    assert (roster["qa"].status, roster["qa"].detail) == ("working", "reviewing infra PR pa-1")
    assert (roster["secops"].status, roster["secops"].detail) == ("idle", "no PR waiting")

    qa_passed = [
        *opened,
        ev(
            "artifact.qa_verdict",
            "qa",
            pr_action_id="pa-1",
            verdict="pass",
            gate_status="awaiting_secops",
        ),
    ]
    roster = by_id(derive_roster(qa_passed, None, None, None))
    assert summary([roster["qa"], roster["secops"]]) == [("qa", "idle"), ("secops", "working")]
    assert roster["secops"].detail == "scanning infra PR pa-1"

    blocked = [
        *qa_passed,
        ev(
            "infra.gate_changed",
            None,
            pr_action_id="pa-1",
            from_status="awaiting_secops",
            gate_status="blocked",
            reason="3 corrections failed",
        ),
    ]
    roster = by_id(derive_roster(blocked, None, None, None))
    assert summary([roster["qa"], roster["secops"]]) == [("qa", "blocked"), ("secops", "blocked")]
    assert roster["qa"].detail == "infra PR pa-1 blocked: 3 corrections failed"


def test_a_dev_gate_opens_the_gates_too_and_queues_are_counted() -> None:
    log = [
        ev("pr.gate_changed", None, task_id="t1", gate_status="awaiting_qa"),
        ev("pr.gate_changed", None, task_id="t2", gate_status="awaiting_qa"),
    ]
    qa = by_id(derive_roster(log, None, None, None))["qa"]
    assert (qa.status, qa.detail) == ("working", "reviewing dev PR t2 (+1 queued)")


def test_customer_service_appears_with_a_conversation() -> None:
    assert "atendimento" not in by_id(derive_roster([], None, None, None))
    log = [
        ev("conversa.mensagem", None, conversaId="c1", autor="cliente", texto="oi"),
        ev("agent.status", "atendimento", status="working"),
    ]
    entry = by_id(derive_roster(log, None, None, None))["atendimento"]
    assert (entry.role, entry.status) == ("customer service", "working")


def test_model_bindings_from_settings_and_autonomy_rows() -> None:
    settings = Settings(model="bedrock:anthropic.claude", agent_models={"po": "scripted"})
    roster = by_id(
        derive_roster(
            [],
            None,
            None,
            None,
            bindings=lambda agent_id: model_binding(agent_id, settings),
            autonomy={("po", "open_adr_pr"): "ask", ("*", "terminal"): "deny"},
        )
    )
    assert (roster["po"].model, roster["criativo"].model) == (
        "scripted",
        "bedrock:anthropic.claude",
    )
    assert roster["po"].autonomy == {"open_adr_pr": "ask", "terminal": "deny"}
    assert roster["criativo"].autonomy == {"terminal": "deny"}
    assert by_id(derive_roster([], bindings={"*": "scripted"}))["po"].model == "scripted"


def test_odd_events_do_not_crash_and_unknown_status_reads_idle() -> None:
    log: list[Any] = [
        {"id": 1, "type": "agent.status", "agent": "po", "payload": {"status": "dancing"}},
        {"id": 2, "type": "dev.task_started", "payload": None},
        {"id": 3, "type": "infra.gate_changed", "payload": [1, 2]},
        {"type": "execution.activated", "payload": {"modules": "not-a-list"}},
    ]
    roster = by_id(derive_roster(log, None, None, None))
    assert roster["po"].status == "idle"
    assert "qa" in roster  # a gate event opened the gates even without a usable status


def test_time_travel_replaying_the_log_up_to_n() -> None:
    log = [
        ev("session.created"),
        ev("agent.status", "criativo", status="working"),  # 2
        ev("agent.status", "criativo", status="idle"),
        ev("architecture.readiness_confirmed", "arquiteto"),
        ev(
            "handoff.offered",
            "arquiteto",
            handoff_id="h1",
            from_agent="arquiteto",
            to_agent="infra",
        ),
        ev(
            "handoff.accepted",
            None,
            handoff_id="h1",
            from_agent="arquiteto",
            to_agent="infra",
            autonomy_seeded={"open_infra_pr": "auto_approve", "terminal": "deny"},
        ),  # 6
        ev("agent.status", "infra", status="working", detail="drafting Dockerfiles"),
        ev("infra.pr_opened", "infra", pr_action_id="pa-1", paths=["Dockerfile"]),  # 8
        ev("agent.status", "infra", status="idle"),
        ev(
            "artifact.qa_verdict",
            "qa",
            pr_action_id="pa-1",
            verdict="pass",
            gate_status="awaiting_secops",
        ),  # 10
        ev("execution.activated", None, modules=["api"]),
        ev("dev.task_started", "dev-api", task_id="t1"),  # 12
    ]
    at = [summary(derive_roster(log[:n], None, None, None)) for n in range(len(log) + 1)]
    base = [("criativo", "idle"), ("po", "idle"), ("arquiteto", "idle")]
    assert at[0] == at[1] == base
    assert at[2][0] == ("criativo", "working")
    assert at[5] == base
    assert at[6] == [*base, ("infra", "idle")]
    assert at[7] == [*base, ("infra", "working")]
    assert at[8] == [*base, ("infra", "working"), ("qa", "working"), ("secops", "idle")]
    assert at[9] == [*base, ("infra", "idle"), ("qa", "working"), ("secops", "idle")]
    assert at[10] == [*base, ("infra", "idle"), ("qa", "idle"), ("secops", "working")]
    assert at[11] == [
        *base,
        ("infra", "idle"),
        ("dev-api", "idle"),
        ("qa", "idle"),
        ("secops", "working"),
    ]
    assert at[12][4] == ("dev-api", "working")
    # The infra agent's idle detail points at its PR's gate at that moment.
    assert by_id(derive_roster(log[:9]))["infra"].detail == "infra PR pa-1: awaiting_qa"
    assert by_id(derive_roster(log[:10]))["infra"].detail == "infra PR pa-1: awaiting_secops"
    # Order of the input does not matter: events are replayed by id.
    assert summary(derive_roster(list(reversed(log)))) == at[-1]


def test_the_model_shown_is_the_one_that_ran_the_last_turn_else_the_binding() -> None:
    log = [
        ev("agent.turn", "po", turn=1, model="openai:gpt-4.1-mini@http://h/v1"),
        ev("agent.turn", "po", turn=2, model="bedrock:anthropic.claude"),
        ev("agent.turn", "criativo", turn=1),  # a turn logged before issue 13: no model
    ]
    roster = by_id(derive_roster(log, bindings=lambda a: "scripted"))
    assert roster["po"].model == "bedrock:anthropic.claude"
    assert roster["criativo"].model == "scripted"
    assert roster["arquiteto"].model == "scripted"


def test_error_and_budget_statuses_and_usage_reach_the_entry() -> None:
    log = [
        ev("agent.status", "po", status="error", detail="http://h/v1 answered HTTP 500"),
        ev("agent.status", "criativo", status="blocked", detail="budget"),
    ]
    today = {"po": {"input_tokens": 10, "output_tokens": 2, "cost_usd": None}}
    roster = by_id(derive_roster(log, usage=today))
    assert (roster["po"].status, roster["po"].detail) == ("error", "http://h/v1 answered HTTP 500")
    assert (roster["criativo"].status, roster["criativo"].detail) == ("blocked", "budget")
    assert roster["po"].to_dict()["usage"] == today["po"]
    assert roster["criativo"].usage is None
