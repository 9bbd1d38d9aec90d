"""Our dependencies failing is 502/503 with Retry-After, never a 400 or 500, and never text
in a customer's reply. Real sockets throughout: a loopback model server that errors or
hangs, a port where no gateway listens, a PostgreSQL that drops our connections."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest

from backend.agents.customer_service import UNAVAILABLE_REPLY, CustomerService
from backend.agents.providers.openai import OpenAIProvider
from backend.erp.seed import upsert_pedidos
from backend.secrets.base import make_secret_store
from backend.settings import Settings, load_settings
from tests.integration.api.conftest import Live, live_backend

INTERNAL = "kaboom-internal-detail"
"""Text only the failing dependency knows; it must never reach a customer."""


class _ModelServer:
    """An OpenAI-compatible endpoint on loopback that answers 500 or never in time."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.calls = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                outer.calls += 1
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if outer.mode == "hang":
                    time.sleep(3)
                body = json.dumps({"error": {"message": f"upstream {INTERNAL}"}}).encode()
                self.send_response(500)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


_HELD: list[socket.socket] = []


def _closed_port() -> int:
    """A loopback port where nothing listens (connection refused). Its socket stays bound,
    never listening, until the test process ends, so no server started later is given it."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    _HELD.append(sock)
    return int(sock.getsockname()[1])


@pytest.fixture
def model_server(request: pytest.FixtureRequest) -> Iterator[_ModelServer]:
    server = _ModelServer(getattr(request, "param", "error"))
    yield server
    server.close()


def _settings(tmp_path: Path, **overrides: object) -> Settings:
    return load_settings(
        data_dir=tmp_path / "data",
        database_url=f"sqlite:///{tmp_path / 'api.sqlite3'}",
        token="test-token-123",
        **overrides,
    )


def _unavailable(response: httpx.Response, status: int, code: str) -> dict:
    assert response.status_code == status, response.text
    assert response.json()["error"]["code"] == code
    assert int(response.headers["Retry-After"]) > 0
    return response.json()["error"]  # type: ignore[no-any-return]


def _session(live: Live) -> str:
    project = live.http.post("/api/projects", json={"name": "loja"}).json()
    session = live.http.post(f"/api/projects/{project['id']}/sessions", json={}).json()
    return f"/api/projects/{project['id']}/sessions/{session['id']}/agents"


def _agent_lines(live: Live, conversa: str) -> list[str]:
    return [
        m["text"]
        for m in live.backend.guard.conversations.transcript(conversa)
        if m["role"] == "agente"
    ]


@pytest.mark.parametrize(
    ("model_server", "code"),
    [("error", "provider_error"), ("hang", "provider_timeout")],
    indirect=["model_server"],
)
def test_a_failing_model_provider_is_502_on_the_agent_turn(
    model_server: _ModelServer, code: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CADENCIA_OPENAI_TIMEOUT_S", raising=False)
    settings = _settings(
        tmp_path,
        agent_models={"criativo": f"openai:test-model@{model_server.base_url}", "infra": "planner"},
        openai_timeout_s=0.5,
        provider_retries=1,  # issue 13: one retry, after a tiny backoff
        provider_backoff_s=0.01,
    )
    for live in live_backend(settings):
        base = _session(live)
        started = time.monotonic()
        error = _unavailable(
            live.http.post(f"{base}/criativo/turns", json={"text": "vamos"}), 502, code
        )
        assert time.monotonic() - started < 2.5  # the timeout held; no hang to the caller
        assert model_server.calls == 2  # retried once (500 and timeouts are retryable)
        assert "127.0.0.1" in error["message"]  # the operator learns which endpoint failed
        roster = {r["id"]: r for r in live.http.get("/api/roster").json()}
        assert roster["criativo"]["status"] == "error"  # issue 13: the failure is visible
        assert "127.0.0.1" in roster["criativo"]["detail"]


def test_a_failing_model_provider_is_502_on_the_customer_message_and_says_nothing_inside(
    model_server: _ModelServer, live_sqlite: Live
) -> None:
    live = live_sqlite
    backend = live.backend
    backend.customer = CustomerService(
        events=backend.events,
        orchestrator=backend.guard.orchestrator,
        conversations=backend.guard.conversations,
        model=OpenAIProvider("atendimento-llm", base_url=model_server.base_url, timeout=2),
    )
    response = live.http.post(
        "/api/conversations/conv-llm/messages", json={"text": "oi", "cliente_id": "c-1"}
    )
    error = _unavailable(response, 502, "provider_error")
    assert INTERNAL in error["message"]  # the API caller (an operator's tool) may see it...
    assert _agent_lines(live, "conv-llm") == [UNAVAILABLE_REPLY]  # ...the customer never
    events = live.http.get("/api/events", params={"limit": 1000}).json()
    said = [e["payload"]["texto"] for e in events if e["type"] == "conversa.mensagem"]
    assert said == ["oi", UNAVAILABLE_REPLY]


@pytest.fixture
def gateway_down(tmp_path: Path) -> Iterator[Live]:
    """A backend whose payment gateway URL answers nothing (connection refused)."""
    settings = _settings(tmp_path, gateway_url=f"http://127.0.0.1:{_closed_port()}")
    make_secret_store(settings).ensure(settings.gateway_secret_id)
    for live in live_backend(settings):
        upsert_pedidos(
            live.backend.db, [{"pedidoId": "4821", "valorPedido": "129.90", "clienteId": "c-1"}]
        )
        yield live


def test_a_gateway_that_is_down_is_502_on_the_customer_message(gateway_down: Live) -> None:
    live = gateway_down
    response = live.http.post(
        "/api/conversations/conv-gw/messages",
        json={"text": "Quero o reembolso do pedido 4821", "cliente_id": "c-1"},
    )
    _unavailable(response, 502, "gateway_error")
    assert _agent_lines(live, "conv-gw") == [UNAVAILABLE_REPLY]
    attempts = [
        e["payload"]
        for e in live.http.get("/api/events", params={"limit": 1000}).json()
        if e["type"] == "TENTATIVA_DE_FERRAMENTA_REGISTRADA"
    ]
    # The order was read, the refund recorded as failed (nothing debited: claim released).
    assert [(a["ferramenta"], a["resultado"]) for a in attempts] == [
        ("consultar-status-pedido", "executado"),
        ("emitir-reembolso", "falhou"),
    ]
    assert "unreachable" in attempts[-1]["detalhe"]  # operators still see why
    record = live.backend.guard.ledger.get(attempts[-1]["chaveIdempotencia"])
    assert record is not None
    assert record.status == "falhou"  # released: a retry once the gateway is back may run


def test_a_gateway_that_is_down_is_502_on_resolve_and_the_takeover_stays_claimed(
    gateway_down: Live,
) -> None:
    live = gateway_down
    live.backend.guard.conversations.bind("conv-gw2", "c-1")
    ident, _ = live.backend.guard.interruptions.open(
        conversa_id="conv-gw2",
        entidade_id="4821",
        ferramenta="emitir-reembolso",
        motivo="teto_de_voltas",
        argumentos={"pedidoId": "4821", "valor": "129.90"},
        attempts=5,
    )
    claimed = live.http.post(f"/api/interruptions/{ident}/claim", json={"operator": "ana"})
    assert claimed.json()["status"] == "claimed"
    resolve = live.http.post(
        f"/api/interruptions/{ident}/resolve",
        json={"operator": "ana", "action": "execute", "reply": "Reembolso emitido."},
    )
    _unavailable(resolve, 502, "gateway_error")
    detail = live.http.get(f"/api/interruptions/{ident}").json()
    assert (detail["status"], detail["claimed_by"]) == ("claimed", "ana")  # ana can retry
    assert detail["transcript"] == []  # the customer was not told it was done
    assert detail["attempts"][-1]["resultado"] == "falhou"
    denied = live.http.post(
        f"/api/interruptions/{ident}/resolve",
        json={"operator": "ana", "action": "deny", "reply": "Vamos verificar com o banco."},
    )
    assert denied.status_code == 200
    assert denied.json()["interruption"]["status"] == "resolved"


def test_a_database_that_drops_us_is_503_and_recovers(pg_url: str, tmp_path: Path) -> None:
    import psycopg

    settings = load_settings(data_dir=tmp_path / "data", database_url=pg_url, token="tok-503")
    dbname = pg_url.rsplit("/", 1)[-1]
    for live in live_backend(settings):
        assert live.http.get("/api/approvals").status_code == 200
        with psycopg.connect(pg_url, autocommit=True, dbname="postgres") as admin:
            admin.execute(f'ALTER DATABASE "{dbname}" ALLOW_CONNECTIONS false')
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = %s AND pid <> pg_backend_pid()",
                (dbname,),
            )
            try:
                down = live.http.get("/api/approvals")
                assert down.status_code == 503, down.text
                assert down.json()["error"]["code"] == "storage_error"
                assert int(down.headers["Retry-After"]) > 0
            finally:
                admin.execute(f'ALTER DATABASE "{dbname}" ALLOW_CONNECTIONS true')
        # The Retry-After was honest: once the database is back, so is the API.
        deadline = time.monotonic() + 60
        while live.http.get("/api/approvals").status_code != 200:
            assert time.monotonic() < deadline, "the API did not recover with the database"
            time.sleep(0.5)


def _sqlite_fails() -> None:
    import sqlite3

    sqlite3.connect("/nonexistent-dir/state.sqlite3")


def _psycopg_fails() -> None:
    import psycopg

    psycopg.connect(f"postgresql://nobody@127.0.0.1:{_closed_port()}/x", connect_timeout=2)


def _httpx_fails() -> None:
    httpx.get(f"http://127.0.0.1:{_closed_port()}/", timeout=2)


def _botocore_fails() -> None:
    import boto3
    from botocore.config import Config

    boto3.client(
        "secretsmanager",
        endpoint_url=f"http://127.0.0.1:{_closed_port()}",
        region_name="us-east-1",
        aws_access_key_id="x",
        aws_secret_access_key="x",
        config=Config(retries={"max_attempts": 0}, connect_timeout=2),
    ).get_secret_value(SecretId="x")


@pytest.mark.parametrize("fail", [_sqlite_fails, _psycopg_fails, _httpx_fails, _botocore_fails])
def test_a_driver_error_nobody_translated_is_still_503_without_its_text(
    fail: object, tmp_path: Path
) -> None:
    import asyncio

    from backend.api.app import create_app

    app = create_app(_settings(tmp_path))

    @app.get("/probe")
    def probe() -> None:
        fail()  # type: ignore[operator]

    async def get() -> httpx.Response:
        transport = httpx.ASGITransport(app=app)  # no lifespan: the probe needs no backend
        async with httpx.AsyncClient(transport=transport, base_url="http://api") as client:
            return await client.get("/probe")

    response = asyncio.run(get())
    assert response.status_code == 503, response.text
    assert response.json()["error"]["code"] == "unavailable"
    assert response.headers["Retry-After"] == "5"
    assert "127.0.0.1" not in response.text
    assert "nonexistent" not in response.text


def test_our_own_misconfiguration_is_503_without_retry_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("CADENCIA_OPENAI_API_KEY", "OPENAI_API_KEY", "CADENCIA_OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    # api.openai.com without a key: the server's settings are wrong, not the request
    settings = _settings(tmp_path, agent_models={"criativo": "openai:gpt-x", "infra": "planner"})
    for live in live_backend(settings):
        response = live.http.post(f"{_session(live)}/criativo/turns", json={"text": "vamos"})
        assert response.status_code == 503, response.text
        assert response.json()["error"]["code"] == "config_error"
        assert "API key" in response.json()["error"]["message"]
        assert "Retry-After" not in response.headers  # no retry helps until someone fixes it
