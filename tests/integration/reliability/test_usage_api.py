"""Issue 13 done-when, end to end: a real backend on loopback (``create_app`` + uvicorn)
whose agents run on the loopback OpenAI server. Retries are on, with tiny backoffs."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from backend.agents.customer_service import CustomerService
from backend.agents.providers.factory import make_provider
from backend.settings import load_settings
from tests.integration.api.conftest import Live, live_backend
from tests.openai_server import FakeServer, serve, text, tool_call

PRICE = {"input_per_mtok": 2.0, "output_per_mtok": 8.0}


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with serve() as s:
        yield s


def _live(
    tmp_path: Path, server: FakeServer, database_url: str | None = None, **kw: Any
) -> Iterator[Live]:
    spec = f"openai:m@{server.url}"
    settings = load_settings(
        data_dir=tmp_path / "data",
        database_url=database_url or f"sqlite:///{tmp_path / 'api.sqlite3'}",
        token="test-token-123",
        agent_models={"criativo": spec, "po": spec, "infra": "planner"},
        provider_retries=2,
        provider_backoff_s=0.001,
        provider_backoff_max_s=0.002,
        model_prices={"m": PRICE},
        **kw,
    )
    return live_backend(settings)


def _session(live: Live) -> tuple[str, str]:
    project = live.http.post("/api/projects", json={"name": "loja"}).json()
    session = live.http.post(f"/api/projects/{project['id']}/sessions", json={}).json()
    return project["id"], f"/api/projects/{project['id']}/sessions/{session['id']}/agents"


def _roster(live: Live) -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in live.http.get("/api/roster").json()}


def _turns(live: Live, agent: str) -> list[dict[str, Any]]:
    events = live.http.get("/api/events", params={"limit": 1000}).json()
    return [e for e in events if e["type"] == "agent.turn" and e["agent"] == agent]


def test_429_then_success_is_one_turn_and_one_success(tmp_path: Path, server: FakeServer) -> None:
    server.fail(429, "Rate limit reached for requests", retry_after="0")
    server.answer(text("uma ideia", usage=(40, 9)))
    for live in _live(tmp_path, server):
        _, base = _session(live)
        response = live.http.post(f"{base}/criativo/turns", json={"text": "vamos"})
        assert response.status_code == 200, response.text
        assert response.json()["text"] == "uma ideia"
        assert len(server.requests) == 2
        [turn] = _turns(live, "criativo")
        assert turn["payload"]["model"] == f"openai:m@{server.url}"
        assert turn["payload"]["usage"] == {"input_tokens": 40, "output_tokens": 9}
        entry = _roster(live)["criativo"]
        assert (entry["status"], entry["model"]) == ("idle", f"openai:m@{server.url}")
        assert entry["usage"] == {"input_tokens": 40, "output_tokens": 9, "cost_usd": 0.000152}


def test_provider_down_is_502_roster_error_and_a_feed_line_until_a_success(
    tmp_path: Path, server: FakeServer
) -> None:
    # Step 1 answers (a call to a tool criativo does not have), step 2 never does.
    server.answer(tool_call("call_1", "no_such_tool", {}, usage=(50, 10)))
    for _ in range(3):  # the first call and both retries
        server.fail(500, "The server had an error while processing your request")
    for live in _live(tmp_path, server):
        _, base = _session(live)
        response = live.http.post(f"{base}/criativo/turns", json={"text": "vamos"})
        assert response.status_code == 502, response.text
        assert response.json()["error"]["code"] == "provider_error"
        assert int(response.headers["Retry-After"]) >= 1
        assert len(server.requests) == 4
        entry = _roster(live)["criativo"]
        assert entry["status"] == "error"
        assert "HTTP 500: The server had an error" in entry["detail"]
        feed = [line["text"] for line in live.http.get("/api/activity").json()]
        assert any(t.startswith("criativo error: ") and "HTTP 500" in t for t in feed), feed
        assert _turns(live, "criativo") == []  # nothing half-done was recorded...
        spent = live.http.get("/api/usage").json()["total"]  # ...but step 1's tokens count
        assert (spent["input_tokens"], spent["output_tokens"]) == (50, 10)

        server.answer(text("voltei"))
        assert live.http.post(f"{base}/criativo/turns", json={"text": "e agora?"}).is_success
        entry = _roster(live)["criativo"]
        assert (entry["status"], entry["detail"]) == ("idle", "waiting for input")


def test_a_customer_message_on_a_model_that_is_down_is_502_and_atendimento_in_error(
    tmp_path: Path, server: FakeServer
) -> None:
    for _ in range(3):
        server.fail(503, "overloaded")
    for live in _live(tmp_path, server):
        backend = live.backend
        backend.customer = CustomerService(
            events=backend.events,
            orchestrator=backend.guard.orchestrator,
            conversations=backend.guard.conversations,
            model=make_provider(f"openai:m@{server.url}", settings=live.settings),
        )
        backend.customer.runtime.install(**backend._runtime_hooks())
        response = live.http.post(
            "/api/conversations/c-1/messages", json={"text": "oi", "cliente_id": "c-1"}
        )
        assert response.status_code == 502, response.text
        assert _roster(live)["atendimento"]["status"] == "error"
        server.answer(text("Olá! Como posso ajudar?", usage=(12, 6)))
        response = live.http.post(
            "/api/conversations/c-1/messages", json={"text": "oi?", "cliente_id": "c-1"}
        )
        assert response.json()["reply"] == "Olá! Como posso ajudar?"
        usage = live.http.get("/api/usage", params={"agent": "atendimento"}).json()
        assert usage["agents"][0]["project_id"] is None  # outside any project
        assert usage["total"]["input_tokens"] == 12
        assert _roster(live)["atendimento"]["status"] == "idle"


@pytest.mark.parametrize("db", ["sqlite", "postgres"])
def test_usage_sums_exactly_what_the_server_reported(
    tmp_path: Path, server: FakeServer, db: str, request: pytest.FixtureRequest
) -> None:
    url = request.getfixturevalue("pg_url") if db == "postgres" else None
    server.answer(text("ideia", usage=(1200, 340)), text("backlog", usage=(800, 95)))
    for live in _live(tmp_path, server, database_url=url):
        project_id, base = _session(live)
        assert live.http.post(f"{base}/criativo/turns", json={"text": "a"}).is_success
        assert live.http.post(f"{base}/po/turns", json={"text": "b"}).is_success
        today = datetime.now(UTC).date().isoformat()
        got = live.http.get("/api/usage", params={"day": today}).json()
        spec = f"openai:m@{server.url}"
        cost = lambda i, o: round(i * 2.0 / 1e6 + o * 8.0 / 1e6, 6)  # noqa: E731
        assert got["day"] == today
        assert sorted(got["agents"], key=lambda a: a["agent"]) == [
            {
                "agent": "criativo",
                "project_id": project_id,
                "model": spec,
                "input_tokens": 1200,
                "output_tokens": 340,
                "turns": 1,
                "cost_usd": cost(1200, 340),
            },
            {
                "agent": "po",
                "project_id": project_id,
                "model": spec,
                "input_tokens": 800,
                "output_tokens": 95,
                "turns": 1,
                "cost_usd": cost(800, 95),
            },
        ]
        total = {"input_tokens": 2000, "output_tokens": 435, "turns": 2}
        assert got["projects"] == [{"project_id": project_id, **total, "cost_usd": cost(2000, 435)}]
        assert got["total"] == {**total, "cost_usd": cost(2000, 435)}
        only_po = live.http.get("/api/usage", params={"agent": "po"}).json()
        assert only_po["total"]["input_tokens"] == 800
        assert live.http.get("/api/usage", params={"day": "2001-01-01"}).json()["total"] == {
            "input_tokens": 0,
            "output_tokens": 0,
            "turns": 0,
            "cost_usd": 0.0,
        }
        assert live.http.get("/api/usage", params={"day": "2026-13-01"}).status_code == 422
        assert _roster(live)["po"]["usage"]["output_tokens"] == 95


def test_a_spent_budget_refuses_the_next_turn_until_an_operator_raises_it(
    tmp_path: Path, server: FakeServer
) -> None:
    server.answer(text("um", usage=(60, 40)), text("dois", usage=(10, 5)))
    for live in _live(tmp_path, server, agent_budgets={"criativo": 100}):
        _, base = _session(live)
        assert live.http.post(f"{base}/criativo/turns", json={"text": "a"}).is_success
        for _ in range(2):  # refused twice, told once
            refused = live.http.post(f"{base}/criativo/turns", json={"text": "b"})
            assert refused.status_code == 409, refused.text
            assert refused.json()["error"]["code"] == "budget_exceeded"
        assert len(server.requests) == 1  # a refused turn calls no model
        entry = _roster(live)["criativo"]
        assert (entry["status"], entry["detail"]) == ("blocked", "budget")
        events = live.http.get("/api/events", params={"limit": 1000}).json()
        stops = [e for e in events if e["type"] == "agent.budget_exceeded"]
        assert [s["payload"]["used_today"] for s in stops] == [100]
        assert live.http.get("/api/agents/criativo/budget").json() == {
            "agent": "criativo",
            "tokens_per_day": 100,
            "used_today": 100,
            "source": "settings",
            "raised_by": None,
        }

        for bad in (0, -5, "lots", 1.5, None):
            response = live.http.post(
                "/api/agents/criativo/budget", json={"operator": "ana", "tokens_per_day": bad}
            )
            assert response.status_code == 422, bad
        assert (
            live.http.post(
                "/api/agents/ghost/budget", json={"operator": "ana", "tokens_per_day": 5}
            ).status_code
            == 404
        )
        assert live.http.get("/api/agents/ghost/budget").status_code == 404

        raised = live.http.post(
            "/api/agents/criativo/budget",
            json={"operator": "ana", "tokens_per_day": 1000, "reason": "demo day"},
        )
        assert raised.json() == {
            "agent": "criativo",
            "tokens_per_day": 1000,
            "used_today": 100,
            "source": "operator",
            "raised_by": "ana",
        }
        assert _roster(live)["criativo"]["status"] == "idle"
        assert live.http.post(f"{base}/criativo/turns", json={"text": "c"}).is_success
        assert live.http.get("/api/agents/criativo/budget").json()["used_today"] == 115
        feed = [line["text"] for line in live.http.get("/api/activity").json()]
        assert "ana set criativo's budget to 1000 tokens/day (was 100): demo day" in feed


def test_bedrock_throttled_then_answering_is_one_turn_and_its_usage(
    tmp_path: Path, server: FakeServer
) -> None:
    model = "anthropic.claude-3-haiku-20240307-v1:0"
    client = boto3.client(
        "bedrock-runtime",
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
    answer = {
        "output": {"message": {"role": "assistant", "content": [{"text": "feito"}]}},
        "stopReason": "end_turn",
        "usage": {"inputTokens": 321, "outputTokens": 54, "totalTokens": 375},
        "metrics": {"latencyMs": 200},
    }
    with Stubber(client) as stubber:
        stubber.add_client_error(
            "converse", service_error_code="ThrottlingException", http_status_code=429
        )
        stubber.add_response("converse", answer)
        for live in _live(tmp_path, server):
            # The team's provider factory, with the stubbed client instead of a real one.
            live.backend.team.runtime.providers = lambda agent_id, _calls, s=live.settings: (
                make_provider(
                    f"bedrock:{model}", settings=s, bedrock_client=client, agent_id=agent_id
                )
            )
            _, base = _session(live)
            response = live.http.post(f"{base}/criativo/turns", json={"text": "vamos"})
            assert response.status_code == 200, response.text
            [turn] = _turns(live, "criativo")
            assert turn["payload"]["model"] == f"bedrock:{model}"
            assert turn["payload"]["usage"] == {"input_tokens": 321, "output_tokens": 54}
            got = live.http.get("/api/usage").json()["total"]
            assert got == {"input_tokens": 321, "output_tokens": 54, "turns": 1, "cost_usd": None}
        stubber.assert_no_pending_responses()
