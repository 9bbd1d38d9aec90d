"""Cursor pagination over the real API (backend/api/paging.py): every page of every list
route, each item exactly once in order; the default limit; bad cursors refused (422
``bad_cursor``) with nothing changed."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from backend.events import EventType
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
