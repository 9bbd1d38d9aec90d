"""Cursor pagination over the real API (backend/api/paging.py): every page of every list
route, each item exactly once in order; the default limit; bad cursors refused (422
``bad_cursor``) with nothing changed."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from backend.api.paging import encode_cursor
from backend.events import EventType
from backend.prs.records import PullRequest
from tests.integration.api.conftest import Live


def walk(http: httpx.Client, path: str, **params: Any) -> tuple[list[Any], int]:
    """Every item of ``path``, following ``X-Next-Cursor``; (items, pages read)."""
    got: list[Any] = []
    pages = 0
    while True:
        response = http.get(path, params=params)
        assert response.status_code == 200, response.text
        pages += 1
        got.extend(response.json())
        cursor = response.headers.get("X-Next-Cursor")
        if cursor is None:
            assert "Link" not in response.headers
            return got, pages
        assert response.headers["Link"].endswith('>; rel="next"')
        link = response.headers["Link"][1:].split(">;")[0]
        assert httpx.URL(link).params["cursor"] == cursor
        params = dict(httpx.URL(link).params)


def bad(response: httpx.Response, code: str = "bad_cursor") -> None:
    assert response.status_code == 422, response.text
    assert set(response.json()) == {"error"}
    assert response.json()["error"]["code"] == code


def _ticks(live: Live, n: int) -> list[int]:
    append = live.backend.events.append
    return [append(EventType.BENCH_TICK, {"i": i, "t": 0.0}).id for i in range(n)]


@pytest.mark.parametrize("path", ["/api/events", "/api/activity"])
def test_the_log_pages_forwards_backwards_and_from_the_tail(live: Live, path: str) -> None:
    ids = [e["id"] for e in live.http.get("/api/events", params={"limit": 1000}).json()]
    ids += _ticks(live, 23)
    forward, pages = walk(live.http, path, limit=5)
    assert [e["id"] for e in forward] == ids
    assert pages == -(-len(ids) // 5) + (len(ids) % 5 == 0)
    assert [e["id"] for e in walk(live.http, path, after=ids[9], limit=4)[0]] == ids[10:]

    tail = live.http.get(path, params={"tail": 7})
    assert [e["id"] for e in tail.json()] == ids[-7:]  # the newest 7, oldest first
    older, _ = walk(live.http, path, cursor=tail.headers["X-Next-Cursor"])
    assert [e["id"] for e in older] == ids[-8::-1]  # then newest first, down to the first
    assert [e["id"] for e in live.http.get(path, params={"before": ids[3]}).json()] == ids[2::-1]
    everything = live.http.get(path, params={"tail": 1000})
    assert [e["id"] for e in everything.json()] == ids
    assert "X-Next-Cursor" not in everything.headers


def test_the_log_has_a_default_limit_of_100(live_sqlite: Live) -> None:
    _ticks(live_sqlite, 130)
    for path in ("/api/events", "/api/activity"):
        first = live_sqlite.http.get(path)
        assert len(first.json()) == 100
        assert "X-Next-Cursor" in first.headers
        assert len(live_sqlite.http.get(path, params={"before": 2**53}).json()) == 100


GARBAGE = [
    "",
    "not-a-cursor",
    "%%%",
    "' OR 1=1; --",
    "eyJ4IjoxfQ",  # {"x":1}
    "WyJldmVudHMiLCJ1cCIsOTk5OTk5OTk5OTk5OTk5OTk5OTk5OTk5XQ",  # a huge id
    "WyJldmVudHMiLCJzaWRld2F5cyIsMV0",  # ["events","sideways",1]
    "WyJldmVudHMiLCJ1cCIsLTFd",  # ["events","up",-1]
    "x" * 600,
]


def test_bad_cursors_and_forms_are_422_and_change_nothing(live: Live) -> None:
    _ticks(live, 3)
    before = live.http.get("/api/events", params={"limit": 1000}).json()
    activity_cursor = live.http.get("/api/activity", params={"limit": 1}).headers["X-Next-Cursor"]
    for cursor in [*GARBAGE, activity_cursor]:
        bad(live.http.get("/api/events", params={"cursor": cursor}), code=_code(cursor))
    bad(live.http.get("/api/events", params={"after": 1, "tail": 5}), "invalid_input")
    bad(live.http.get("/api/events", params={"tail": 5, "limit": 5}), "invalid_input")
    bad(live.http.get("/api/events?before="), "invalid_input")
    bad(live.http.get("/api/activity", params={"tail": 0}), "invalid_input")
    bad(live.http.get("/api/activity", params={"tail": 1001}), "invalid_input")
    assert live.http.get("/api/events", params={"limit": 1000}).json() == before


def _code(cursor: str) -> str:
    return "invalid_input" if len(cursor) > 512 else "bad_cursor"


def _project(live: Live, name: str) -> str:
    return str(live.backend.store.create_project(name).id)


def test_projects_handoffs_inbox_and_prs_walk_every_page_once(live: Live) -> None:
    backend = live.backend
    projects = [_project(live, f"p{i}") for i in range(5)]
    sessions = [backend.store.create_session(projects[0], f"s{i}")["id"] for i in range(5)]
    offered = [
        backend.store.offer_handoff(projects[0], s, "arquiteto", "infra", "ready") for s in sessions
    ]
    # The pages' order is (offered_at, id): two offers in one millisecond tie on the time
    # and their random ids decide (creation order once failed CI that way).
    handoffs = [h.id for h in sorted(offered, key=lambda h: (h.offered_at, h.id))]
    with backend.events.db.transaction() as tx:
        for i in range(5):
            pr = PullRequest.opened(
                id=f"pr-page-{i}",
                kind="dev",
                project_id=projects[i % 2],
                author="dev-api",
                title=f"change {i}",
                branch=f"feature/{i}",
                head="0" * 40,
                files=["README.md"],
                pr_id=None,
                pr_url=None,
            )
            backend.pipeline.prs.insert(tx, pr, actor="dev-api")
    every_project = [p["id"] for p in live.http.get("/api/projects", params={"limit": 1000}).json()]
    assert set(projects) <= set(every_project)
    assert [p["id"] for p in walk(live.http, "/api/projects", limit=2)[0]] == every_project

    got, pages = walk(live.http, "/api/handoffs", limit=2)
    assert [h["id"] for h in got] == handoffs
    assert pages == 3
    got, _ = walk(live.http, "/api/handoffs", limit=1, project_id=projects[0], status="offered")
    assert [h["id"] for h in got] == handoffs

    whole = live.http.get("/api/inbox", params={"limit": 1000}).json()
    assert len(whole) == 5  # the handoffs (a PR awaiting QA waits for no human)
    assert [i["id"] for i in walk(live.http, "/api/inbox", limit=3)[0]] == [i["id"] for i in whole]

    prs, _ = walk(live.http, "/api/prs", limit=2)
    assert [p["pr_action_id"] for p in prs] == [f"pr-page-{i}" for i in range(5)]
    odd, _ = walk(live.http, "/api/prs", limit=1, project_id=projects[1])
    assert [p["pr_action_id"] for p in odd] == ["pr-page-1", "pr-page-3"]

    for path in ("/api/projects", "/api/handoffs", "/api/inbox", "/api/prs"):
        assert "X-Next-Cursor" in live.http.get(path, params={"limit": 1}).headers
        foreign = live.http.get("/api/events", params={"limit": 1}).headers["X-Next-Cursor"]
        not_a_time = encode_cursor(path.rsplit("/", 1)[1], ["yesterday", "x"])
        for cursor in [*GARBAGE, foreign, not_a_time]:
            bad(live.http.get(path, params={"cursor": cursor}), code=_code(cursor))
    assert [p["id"] for p in live.http.get("/api/projects", params={"limit": 1000}).json()] == (
        every_project
    )


def test_turns_and_conversation_messages_page_back_from_the_newest(live_sqlite: Live) -> None:
    live = live_sqlite
    turns = [
        live.backend.events.append(
            EventType.AGENT_TURN,
            {
                "turn": i,
                "text": f"t{i}",
                "tool_calls": [],
                "stop_reason": "end_turn",
                "messages": [],
                "model_calls": 1,
            },
            project_id="prj-x",
            session_id="s-x",
            agent="po",
        ).id
        for i in range(7)
    ]
    got, pages = walk(live.http, "/api/agents/po/turns", limit=3)
    assert [t["event_id"] for t in got] == turns[::-1]
    assert pages == 3

    conversations = live.backend.guard.conversations
    ids = [conversations.append("conv-page", "cliente", f"m{i}") for i in range(7)]
    first = live.http.get("/api/conversations/conv-page", params={"limit": 3})
    assert [m["texto"] for m in first.json()["messages"]] == ["m4", "m5", "m6"]
    seen = [m["id"] for m in first.json()["messages"]]
    cursor = first.headers["X-Next-Cursor"]
    while cursor:
        page = live.http.get("/api/conversations/conv-page", params={"limit": 3, "cursor": cursor})
        seen = [m["id"] for m in page.json()["messages"]] + seen
        cursor = page.headers.get("X-Next-Cursor", "")
    assert seen == ids
    assert len(live.http.get("/api/conversations/conv-page").json()["messages"]) == 7
    foreign = live.http.get("/api/agents/po/turns", params={"limit": 1}).headers["X-Next-Cursor"]
    for cursor in [*GARBAGE, foreign]:
        bad(live.http.get("/api/conversations/conv-page", params={"cursor": cursor}), _code(cursor))
        bad(live.http.get("/api/agents/qa/turns", params={"cursor": cursor}), _code(cursor))
