"""A scripted session criativo → po → arquiteto → handoff → infra, on SQLite and PostgreSQL."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import pytest

from backend.agents.roster import derive_roster
from backend.agents.runtime import AgentRuntime, TurnContext
from backend.agents.store import TeamStore
from backend.agents.team_service import TeamService
from backend.dev.agents import task_creator
from backend.dev.tasks import DevTasks
from backend.events import EventLog
from backend.exceptions import ConflictError, NotFoundError
from backend.settings import load_settings
from backend.store.db import Database

SCRIPT = json.loads(resources.files("backend.demo").joinpath("team_script.json").read_text())


def _service(db: Database, data_dir: Path, **kw) -> TeamService:
    settings = load_settings(data_dir=data_dir, agent_models={"infra": "scripted"})
    store = TeamStore(EventLog(db))
    creator = task_creator(DevTasks(store, settings))  # the PO's tasks become dev tasks
    scripts = kw.pop("scripts", SCRIPT)
    return TeamService(settings, store, scripts=scripts, task_creator=creator, **kw)


async def _run_session(team: TeamService) -> tuple[str, str]:
    project = team.store.create_project("loja")
    session = team.store.create_session(project.id, "fase 4a")
    for agent_id, text in (
        ("criativo", "Quero uma loja"),
        ("arquiteto", "Defina os módulos"),  # a task belongs to a module of the map
        ("po", "Quebre em tarefas"),
    ):
        await team.agent_turn(project.id, session["id"], agent_id, text)
    return project.id, session["id"]


async def test_session_flows_through_handoff_to_infra(any_db: Database, data_dir: Path) -> None:
    team = _service(any_db, data_dir)
    project_id, session_id = await _run_session(team)
    assert [m["name"] for m in team.store.project(project_id).modules()] == ["api", "web", "worker"]
    tasks = DevTasks(team.store).tasks(project_id)
    assert [(t.module, t.status, t.session_id) for t in tasks] == [
        ("api", "todo", session_id),
        ("web", "todo", session_id),
        ("worker", "todo", session_id),
    ]
    created = [e.payload for e in team.events.after(0, 1000) if e.type == "backlog.task_created"]
    assert [p["task_id"] for p in created] == [t.id for t in tasks]
    with pytest.raises(ConflictError):  # infra only after an accepted handoff
        await team.agent_turn(project_id, session_id, "infra", "comece")
    handoff = await team.offer_infra_handoff(project_id, session_id)
    with pytest.raises(ConflictError):
        await team.offer_infra_handoff(project_id, session_id)
    accepted = await team.accept_handoff(handoff.id, "ana")
    assert accepted.status == "accepted"
    assert accepted.accepted_by == "ana"
    with pytest.raises(ConflictError):
        await team.accept_handoff(handoff.id, "bia")
    with pytest.raises(NotFoundError):
        await team.accept_handoff("hof_nope", "ana")
    assert team.store.autonomy(project_id) == {
        ("infra", "open_infra_pr"): "auto_approve",
        ("infra", "terminal"): "deny",
    }
    types = [e.type for e in team.events.after(0, 1000)]
    for expected in (
        "project.created",
        "session.created",
        "agent.status",
        "agent.turn",
        "idea.readiness_confirmed",
        "backlog.task_created",
        "architecture.module_map_written",
        "action.decided",
        "approval.requested",
        "architecture.readiness_confirmed",
        "handoff.offered",
        "handoff.accepted",
    ):
        assert expected in types, expected
    roster = {r["id"]: r for r in team.roster(project_id)}
    assert {"criativo", "po", "arquiteto", "infra"} <= set(roster)
    assert roster["infra"]["autonomy"] == {"open_infra_pr": "auto_approve", "terminal": "deny"}
    assert all(roster[a]["status"] == "idle" for a in ("criativo", "po", "arquiteto"))


async def test_infra_cannot_reach_a_terminal(any_db: Database, data_dir: Path) -> None:
    script = {
        "agents": {
            **SCRIPT["agents"],
            "infra": [
                {"tool_calls": [{"name": "terminal", "arguments": {"cmd": "rm -rf /"}}]},
                {"text": "ok"},
            ],
        }
    }
    team = _service(any_db, data_dir, scripts=script, infra_tools={})
    project_id, session_id = await _run_session(team)
    handoff = await team.offer_infra_handoff(project_id, session_id)
    await team.accept_handoff(handoff.id, "ana")
    result = await team.agent_turn(project_id, session_id, "infra", "comece")
    assert result.tool_results[0]["error"] is True
    assert "no tool named 'terminal'" in result.tool_results[0]["result"]["error"]


async def test_rehydration_after_restart_continues_the_script(
    any_db: Database, data_dir: Path
) -> None:
    team = _service(any_db, data_dir)
    project = team.store.create_project("loja")
    session = team.store.create_session(project.id)
    await team.agent_turn(project.id, session["id"], "criativo", "Quero uma loja")
    # a new process: a fresh runtime over the same log
    fresh = _service(any_db, data_dir)
    history, calls = fresh.runtime.history(session["id"], "criativo")
    assert calls == 2
    assert history[0].text == "Quero uma loja"
    result = await fresh.agent_turn(project.id, session["id"], "criativo", "e agora?")
    assert result.text == "Pronto."  # the script's end, not its first turn again


async def test_roster_time_travel(any_db: Database, data_dir: Path) -> None:
    team = _service(any_db, data_dir)
    project_id, session_id = await _run_session(team)
    handoff = await team.offer_infra_handoff(project_id, session_id)
    before_accept = team.events.last_id()
    await team.accept_handoff(handoff.id, "ana")
    events = team.events.after(0, 10_000)

    def at(n):
        return {r.id for r in derive_roster([e for e in events if e.id <= n])}

    assert "infra" not in at(before_accept)
    assert "infra" in at(team.events.last_id())
    # while the criativo was mid-turn it was working
    working = next(
        e.id
        for e in events
        if e.type == "agent.status" and e.agent == "criativo" and e.payload["status"] == "working"
    )
    status = {r.id: r.status for r in derive_roster([e for e in events if e.id <= working])}
    assert status["criativo"] == "working"


def test_runtime_refuses_unknown_agent(any_db: Database) -> None:
    runtime = AgentRuntime(events=EventLog(any_db), providers=lambda a, n: None, tools={})  # type: ignore[arg-type,return-value]
    import asyncio

    with pytest.raises(NotFoundError):
        asyncio.run(runtime.run_turn(TurnContext(None, "s", "hacker"), "hi"))
