"""Handoffs over the real API (SQLite and PostgreSQL): list, accept, decline; a handoff
that is not offered any more is 409, an unknown one 404, and bad input changes nothing."""

from __future__ import annotations

from typing import Any

from tests.integration.api.conftest import Live


def _offer(live: Live, name: str) -> tuple[str, str]:
    backend = live.backend
    project = live.http.post("/api/projects", json={"name": name}).json()
    session = backend.store.create_session(project["id"], "s")
    handoff = backend.store.offer_handoff(
        project["id"], session["id"], "arquiteto", "infra", "modules ready"
    )
    return project["id"], handoff.id


def _handoffs(live: Live, **params: str) -> list[dict[str, Any]]:
    response = live.http.get("/api/handoffs", params=params)
    assert response.status_code == 200, response.text
    return list(response.json())


def test_a_declined_handoff_leaves_the_inbox_and_cannot_be_decided_again(live: Live) -> None:
    first, declined = _offer(live, "loja")
    second, accepted = _offer(live, "loja")
    assert [h["id"] for h in _handoffs(live, status="offered")] == [declined, accepted]
    assert [h["id"] for h in _handoffs(live, project_id=second)] == [accepted]
    inbox = {i["target_id"] for i in live.http.get("/api/inbox", params={"kind": "handoff"}).json()}
    assert inbox == {declined, accepted}

    url = f"/api/handoffs/{declined}/decline"
    # ``{}`` is no longer malformed: the operator is the token's (issue 16).
    for bad in ({"operator": ""}, {"operator": "ana", "reason": ""}, {"operator": ["ana"]}):
        assert live.http.post(url, json=bad).status_code == 422, bad
    assert (
        live.http.post(url, content=b"{", headers={"Content-Type": "application/json"}).status_code
        == 400
    )
    assert (
        live.http.post("/api/handoffs/hof_nope/decline", json={"operator": "ana"}).status_code
        == 404
    )
    assert (
        live.http.post("/api/handoffs/hof_nope/accept", json={"operator": "ana"}).status_code == 404
    )
    assert live.http.get("/api/handoffs", params={"status": "lost"}).status_code == 422
    assert _handoffs(live, status="offered") != []  # nothing changed

    done = live.http.post(url, json={"operator": "ana", "reason": "the map is not final"})
    assert done.status_code == 200, done.text
    body = done.json()
    assert (body["status"], body["accepted_by"]) == ("declined", None)
    assert live.http.post(url, json={"operator": "bia"}).status_code == 409
    assert (
        live.http.post(f"/api/handoffs/{declined}/accept", json={"operator": "bia"}).status_code
        == 409
    )
    assert live.http.post(f"/api/handoffs/{accepted}/accept", json={"operator": "bia"}).is_success
    assert (
        live.http.post(f"/api/handoffs/{accepted}/decline", json={"operator": "ana"}).status_code
        == 409
    )
    assert [h["status"] for h in _handoffs(live)] == ["declined", "accepted"]
    assert [h["id"] for h in _handoffs(live, status="declined")] == [declined]
    assert live.http.get("/api/inbox", params={"kind": "handoff"}).json() == []
    # Declining seeds no autonomy; accepting did.
    assert live.backend.store.autonomy(first) == {}
    assert live.backend.store.autonomy(second) != {}
    events = live.http.get("/api/events", params={"limit": 1000}).json()
    [event] = [e for e in events if e["type"] == "handoff.declined"]
    assert event["payload"] == {
        "handoff_id": declined,
        "from_agent": "arquiteto",
        "to_agent": "infra",
        "operator": "ana",
        "reason": "the map is not final",
    }
    lines = live.http.get("/api/activity", params={"limit": 1000}).json()
    assert any(
        line["text"] == f"handoff {declined} from arquiteto to infra declined by ana: "
        "the map is not final"
        for line in lines
    )


def test_inbox_filters_refuse_what_they_do_not_know(live: Live) -> None:
    assert live.http.get("/api/inbox", params={"kind": "everything"}).status_code == 422
    assert live.http.get("/api/inbox", params={"project_id": "../x"}).status_code == 422
    assert live.http.get("/api/inbox").json() == []
