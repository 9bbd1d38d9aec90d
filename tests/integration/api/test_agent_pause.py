"""The off switch and turn inspection over the real API (loopback uvicorn, both databases).

The Criativo runs on an OpenAI-compatible model (the loopback server of
``tests/openai_server.py``), so "a paused agent runs no turn" is measured where it matters:
the provider received no request.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from backend.settings import Settings, load_settings
from tests.integration.api.conftest import Live, live_backend
from tests.openai_server import FakeServer, serve, text, tool_call


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with serve() as state:
        yield state


def _settings(url: str, data_dir: Path, server: FakeServer) -> Settings:
    return load_settings(
        data_dir=data_dir,
        database_url=url,
        token="test-token-123",
        agent_models={"criativo": f"openai:gpt-test@{server.url}", "infra": "planner"},
        openai_api_key="sk-test",
    )


@pytest.fixture(params=["sqlite", "postgres"])
def live(request: pytest.FixtureRequest, tmp_path: Path, server: FakeServer) -> Iterator[Live]:
    url = (
        f"sqlite:///{tmp_path / 'pause.sqlite3'}"
        if request.param == "sqlite"
        else request.getfixturevalue("pg_url")
    )
    yield from live_backend(_settings(url, tmp_path / "data", server))


def _session(live: Live) -> tuple[str, str]:
    project = live.http.post("/api/projects", json={"name": "loja"}).json()["id"]
    session = live.http.post(f"/api/projects/{project}/sessions", json={"title": "s"}).json()
    return project, session["id"]


def _turn(live: Live, project: str, session: str, said: str) -> Any:
    return live.http.post(
        f"/api/projects/{project}/sessions/{session}/agents/criativo/turns", json={"text": said}
    )


def _roster_entry(live: Live, agent: str) -> dict[str, Any]:
    return next(r for r in live.http.get("/api/roster").json() if r["id"] == agent)


def test_a_paused_agent_runs_no_turn_and_runs_again_once_resumed(
    live: Live, server: FakeServer
) -> None:
    project, session = _session(live)
    paused = live.http.post(
        "/api/agents/criativo/pause", json={"operator": "alice", "reason": "runaway costs"}
    )
    assert paused.status_code == 200, paused.text
    body = paused.json()
    assert body["agent"] == "criativo"
    assert body["paused"] is True
    assert (body["paused_by"], body["reason"]) == ("alice", "runaway costs")
    assert body["paused_at"]

    refused = _turn(live, project, session, "uma ideia")
    assert refused.status_code == 409, refused.text
    assert refused.json()["error"]["code"] == "agent_paused"
    assert "alice" in refused.json()["error"]["message"]
    assert server.requests == []  # the provider never heard of it
    entry = _roster_entry(live, "criativo")
    assert (entry["status"], entry["paused_by"]) == ("paused", "alice")
    assert "runaway costs" in entry["detail"]
    lines = [a["text"] for a in live.http.get("/api/activity").json()]
    assert "criativo paused by alice: runaway costs (no new turn runs)" in lines
    assert live.http.get("/api/agents/criativo/turns").json() == []  # nothing recorded

    resumed = live.http.post("/api/agents/criativo/resume", json={"operator": "bob"})
    assert resumed.status_code == 200, resumed.text
    assert resumed.json()["paused"] is False
    assert resumed.json()["resumed_by"] == "bob"
    server.answer(text("Conte mais."))
    ran = _turn(live, project, session, "uma ideia")
    assert ran.status_code == 200, ran.text
    assert ran.json()["text"] == "Conte mais."
    assert len(server.requests) == 1
    entry = _roster_entry(live, "criativo")
    assert (entry["status"], entry["paused_by"]) == ("idle", None)
    lines = [a["text"] for a in live.http.get("/api/activity").json()]
    assert "criativo resumed by bob" in lines


def test_pause_errors_change_nothing(live: Live) -> None:
    post = live.http.post
    assert post("/api/agents/nobody/pause", json={"operator": "alice"}).status_code == 404
    assert post("/api/agents/nobody/resume", json={"operator": "alice"}).status_code == 404
    not_paused = post("/api/agents/po/resume", json={"operator": "alice"})
    assert not_paused.status_code == 409
    assert "not paused" in not_paused.json()["error"]["message"]
    gate = post("/api/agents/qa/pause", json={"operator": "alice"})
    assert gate.status_code == 409
    assert "deterministic gate" in gate.json()["error"]["message"]
    # ``{}`` is no longer malformed: the operator is the token's (issue 16).
    for bad in ({"operator": ""}, {"operator": "alice", "extra": 1}, {"operator": "a\nb"}):
        got = post("/api/agents/po/pause", json=bad)
        assert got.status_code == 422, (bad, got.text)
    assert _roster_entry(live, "po")["status"] == "idle"

    assert post("/api/agents/po/pause", json={"operator": "alice"}).status_code == 200
    again = post("/api/agents/po/pause", json={"operator": "bob", "reason": "me too"})
    assert again.status_code == 409
    assert "already paused by alice" in again.json()["error"]["message"]
    entry = _roster_entry(live, "po")
    assert (entry["paused_by"], entry["detail"]) == ("alice", "paused by alice")
    types = [e["type"] for e in live.http.get("/api/events").json()]
    assert types.count("agent.paused") == 1
    assert "agent.resumed" not in types


def test_a_customer_message_to_a_paused_atendimento_is_recorded_and_not_answered(
    live: Live,
) -> None:
    post = live.http.post
    assert post("/api/agents/atendimento/pause", json={"operator": "alice"}).status_code == 200
    got = post(
        "/api/conversations/c-9/messages",
        json={"text": "Quero o reembolso do 4821", "cliente_id": "c-1"},
    )
    assert got.status_code == 200, got.text
    assert got.json() == {"state": "paused", "operator": None, "reply": None, "attempts": []}
    conversation = live.http.get("/api/conversations/c-9").json()
    assert [(m["autor"], m["texto"]) for m in conversation["messages"]] == [
        ("cliente", "Quero o reembolso do 4821")
    ]
    assert conversation["attempts"] == []

    assert post("/api/agents/atendimento/resume", json={"operator": "alice"}).status_code == 200
    answered = post("/api/conversations/c-9/messages", json={"text": "Olá?", "cliente_id": "c-1"})
    assert answered.json()["state"] == "bot"
    assert answered.json()["reply"]


def test_the_pause_survives_a_restart(tmp_path: Path, server: FakeServer) -> None:
    settings = _settings(f"sqlite:///{tmp_path / 'restart.sqlite3'}", tmp_path / "data", server)
    for live in live_backend(settings):
        project, session = _session(live)
        assert live.http.post("/api/agents/criativo/pause", json={"operator": "alice"}).is_success
    for live in live_backend(settings):
        refused = _turn(live, project, session, "de novo")
        assert refused.status_code == 409
        assert refused.json()["error"]["code"] == "agent_paused"
        assert _roster_entry(live, "criativo")["paused_by"] == "alice"
    assert server.requests == []


def test_turns_newest_first_bounded_with_tool_calls_and_results(
    live: Live, server: FakeServer
) -> None:
    project, session = _session(live)
    server.answer(
        text("um"),
        text("dois"),
        tool_call("call_1", "confirm_readiness", {"summary": "loja online"}),
        text("pronto"),
    )
    for said in ("a", "b", "c"):
        assert _turn(live, project, session, said).status_code == 200
    _, other = _session(live)

    got = live.http.get("/api/agents/criativo/turns", params={"limit": 2})
    assert got.status_code == 200, got.text
    newest, second = got.json()
    assert [newest["text"], second["text"]] == ["pronto", "dois"]
    assert newest["event_id"] > second["event_id"]
    assert (newest["project_id"], newest["session_id"]) == (project, session)
    assert newest["tool_calls"] == ["confirm_readiness"]
    assert newest["stop_reason"] == "end_turn"
    roles = [m["role"] for m in newest["messages"]]
    assert roles == ["user", "assistant", "tool", "assistant"]
    call = newest["messages"][1]["tool_calls"][0]
    assert (call["name"], call["arguments"]) == ("confirm_readiness", {"summary": "loja online"})
    assert newest["messages"][2]["name"] == "confirm_readiness"
    assert newest["messages"][2]["is_error"] is False

    everything = live.http.get(
        "/api/agents/criativo/turns", params={"session_id": session, "project_id": project}
    ).json()
    assert [t["text"] for t in everything] == ["pronto", "dois", "um"]
    assert live.http.get("/api/agents/criativo/turns", params={"session_id": other}).json() == []
    assert live.http.get("/api/agents/po/turns").json() == []
    assert live.http.get("/api/agents/nobody/turns").status_code == 404
    for bad in ({"limit": 0}, {"limit": 201}, {"session_id": "a b"}):
        assert live.http.get("/api/agents/criativo/turns", params=bad).status_code == 422


def test_a_paused_infra_agent_on_the_rule_based_planner_proposes_nothing(tmp_path: Path) -> None:
    settings = load_settings(
        data_dir=tmp_path / "data",
        database_url=f"sqlite:///{tmp_path / 'planner.sqlite3'}",
        token="test-token-123",
    )
    for live in live_backend(settings):
        project, session = _session(live)
        base = f"/api/projects/{project}/sessions/{session}/agents"
        for agent in ("criativo", "po", "arquiteto"):
            assert live.http.post(f"{base}/{agent}/turns", json={"text": "vamos"}).is_success
        handoff = live.http.post(f"{base}/arquiteto/handoff-infra", json={"note": "pronto"})
        accepted = live.http.post(
            f"/api/handoffs/{handoff.json()['id']}/accept", json={"operator": "ana"}
        )
        assert accepted.is_success, accepted.text
        assert live.http.post("/api/agents/infra/pause", json={"operator": "ana"}).is_success
        refused = live.http.post(f"{base}/infra/turns", json={"text": "proponha"})
        assert refused.status_code == 409, refused.text
        assert refused.json()["error"]["code"] == "agent_paused"
        events = live.http.get("/api/events", params={"limit": 1000}).json()
        assert not [e for e in events if e["type"].startswith("infra.")]
        assert not [e for e in events if e["type"] == "agent.status" and e["agent"] == "infra"]
        assert _roster_entry(live, "infra")["status"] == "paused"
