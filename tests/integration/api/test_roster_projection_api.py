"""``GET /api/roster`` over the projection: live, ``?at=N``, and two ``serve`` processes on
one PostgreSQL showing the same roster."""

from __future__ import annotations

import copy
from typing import Any

import httpx

from backend.agents.roster import render_roster
from backend.agents.roster_facts import LogFold
from tests.integration.api.conftest import Live
from tests.integration.api.test_processes import _client, two_backends

__all__ = ["two_backends"]  # the fixture: two real `cadencia serve` on one PostgreSQL


def _by_id(roster: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in roster}


def _world(http: httpx.Client) -> str:
    project = http.post("/api/projects", json={"name": "loja"}).json()
    assert (
        http.post(
            "/api/conversations/c-1/messages", json={"text": "Oi", "cliente_id": "c-1"}
        ).status_code
        == 200
    )
    paused = http.post("/api/agents/po/pause", json={"operator": "ana", "reason": "custo"})
    assert paused.status_code == 200, paused.text
    return str(project["id"])


def test_live_roster_is_the_projection_and_equals_the_fold_of_the_log(live_sqlite: Live) -> None:
    project_id = _world(live_sqlite.http)
    team = live_sqlite.backend.team
    folded = copy.copy(team)
    folded.roster_facts = LogFold(team.events)  # the old way: the whole log, folded
    got = live_sqlite.http.get("/api/roster", params={"project_id": project_id}).json()
    assert got == folded.roster(project_id)
    entries = _by_id(got)
    assert (entries["po"]["status"], entries["po"]["paused_by"]) == ("paused", "ana")
    assert "atendimento" in entries


def test_roster_at_n_is_the_roster_as_it_stood_at_event_n(live_sqlite: Live) -> None:
    http = live_sqlite.http
    _world(http)
    events = http.get("/api/events", params={"limit": 1000}).json()
    [pause] = [e for e in events if e["type"] == "agent.paused"]
    before = _by_id(http.get("/api/roster", params={"at": pause["id"] - 1}).json())
    after = _by_id(http.get("/api/roster", params={"at": pause["id"]}).json())
    assert before["po"]["status"] != "paused"
    assert after["po"]["paused_by"] == "ana"
    log = live_sqlite.backend.events
    want = render_roster(LogFold(log).facts_at(pause["id"], None))
    assert list(after) == [e.id for e in want]
    assert http.get("/api/roster", params={"at": 0}).json()[0]["id"] == "criativo"
    bad = http.get("/api/roster", params={"at": -1})
    assert bad.status_code == 422
    assert "error" in bad.json()


def test_two_serve_processes_on_one_postgresql_show_the_same_roster(two_backends) -> None:
    url_a, url_b, _ = two_backends
    with _client(url_a) as a, _client(url_b) as b:
        _world(a)
        assert (
            b.post(
                "/api/conversations/c-2/messages", json={"text": "Oi", "cliente_id": "c-1"}
            ).status_code
            == 200
        )
        assert b.post("/api/agents/arquiteto/pause", json={"operator": "bob"}).status_code == 200
        roster_a, roster_b = a.get("/api/roster").json(), b.get("/api/roster").json()
        assert roster_a == roster_b
        entries = _by_id(roster_a)
        assert entries["po"]["paused_by"] == "ana"  # written through A
        assert entries["arquiteto"]["paused_by"] == "bob"  # written through B
        assert "atendimento" in entries
        assert b.post("/api/agents/po/resume", json={"operator": "bob"}).status_code == 200
        assert _by_id(a.get("/api/roster").json())["po"]["status"] != "paused"
        at = a.get("/api/events", params={"limit": 1000}).json()[-1]["id"]
        assert (
            a.get("/api/roster", params={"at": at}).json()
            == b.get("/api/roster", params={"at": at}).json()
        )
