"""Auth and bad input: a clear 4xx JSON error, nothing changed, never a 5xx."""

from __future__ import annotations

import httpx

from tests.integration.api.conftest import Live


def _error(response: httpx.Response, status: int, code: str | None = None) -> dict:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error"}
    assert {"code", "message"} <= set(body["error"])
    if code:
        assert body["error"]["code"] == code
    return body["error"]


def test_health_and_metrics_need_no_token(live_sqlite: Live) -> None:
    assert httpx.get(f"{live_sqlite.url}/healthz").json()["status"] == "ok"
    assert b"cadencia_interrupcoes_por_teto" in httpx.get(f"{live_sqlite.url}/metrics").content


def test_every_api_route_needs_the_token(live_sqlite: Live) -> None:
    for path in (
        "/api/roster",
        "/api/events",
        "/api/approvals",
        "/api/activity",
        "/api/events/stream",
    ):
        _error(httpx.get(f"{live_sqlite.url}{path}"), 401, "unauthorized")
        _error(httpx.get(f"{live_sqlite.url}{path}", headers={"Authorization": "Bearer nope"}), 401)
    _error(
        httpx.post(
            f"{live_sqlite.url}/api/conversations/c1/messages",
            json={"text": "oi", "cliente_id": "c-1"},
        ),
        401,
    )


def test_bad_bodies_get_clear_errors_and_change_nothing(live: Live) -> None:
    http = live.http
    before = http.get("/api/events", params={"limit": 1000}).json()
    url = "/api/conversations/conv-1/messages"
    _error(
        http.post(url, content=b"{not json", headers={"Content-Type": "application/json"}),
        400,
        "malformed_json",
    )
    _error(http.post(url, json={"text": 42}), 422, "invalid_input")
    _error(http.post(url, json={"text": ""}), 422)
    _error(http.post(url, json={"text": "oi", "extra": 1}), 422)
    _error(http.post(url, json=["text"]), 422)
    # PostgreSQL cannot store NUL: the caller's input, so 422 (not our 503) on every database
    _error(http.post(url, json={"text": "oi\u0000"}), 422, "invalid_input")
    _error(http.post("/api/projects", json={"name": "lo\u0000ja"}), 422, "invalid_input")
    _error(
        http.post(url, content=b"x" * 2_000_000, headers={"Content-Type": "application/json"}),
        413,
        "too_large",
    )
    _error(
        http.post(
            "/api/conversations/x';DROP TABLE events;--/messages",
            json={"text": "oi", "cliente_id": "c-1"},
        ),
        422,
    )
    _error(http.get("/api/events", params={"after": -1}), 422)
    _error(http.get("/api/events", params={"limit": 10**9}), 422)
    _error(http.get("/api/events", params={"after": "abc"}), 422)
    assert http.get("/api/events", params={"limit": 1000}).json() == before


def test_unknown_ids_and_traversal_are_404_or_422(live: Live) -> None:
    http = live.http
    _error(http.get("/api/infra-artifacts/act_nope"), 404, "not_found")
    _error(http.post("/api/infra-artifacts/act_nope/approve", json={"operator": "ana"}), 404)
    _error(http.get("/api/interruptions/999999"), 404)
    _error(http.get("/api/interruptions/0"), 422)
    _error(http.get("/api/interruptions/99999999999999999999999"), 422)
    _error(http.post("/api/interruptions/1/claim", json={"operator": "ana"}), 404)
    _error(http.post("/api/handoffs/hof_nope/accept", json={"operator": "ana"}), 404)
    assert http.get("/api/infra-artifacts/..%2F..%2Fetc%2Fpasswd").status_code in (404, 422)
    _error(http.get("/api/nowhere"), 404)
    _error(http.post("/api/infra-artifacts/act_x/reject", json={"operator": "ana"}), 422)
    _error(http.post("/api/infra-artifacts/act_x/approve", json={"operator": "ana; rm -rf /"}), 422)


def test_sql_metacharacters_in_text_are_just_text(live: Live) -> None:
    text = "pedido 4821'); DROP TABLE pedidos; -- \" OR 1=1"
    got = live.http.post(
        "/api/conversations/conv-sql/messages", json={"text": text, "cliente_id": "c-1"}
    )
    assert got.status_code == 200
    events = live.http.get("/api/events", params={"limit": 1000}).json()
    assert any(e["payload"].get("texto") == text for e in events)
