"""A real backend on loopback (uvicorn in a thread) for API tests, and a customer to talk
to it."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from backend.api.app import create_app
from backend.settings import Settings, load_settings

ASKS = [  # the customer asks for the same refund five times: the teto de voltas stops it
    "Quero o reembolso do pedido 4821",
    "Já caiu?",
    "Ainda não vi o dinheiro",
    "Faz o estorno de novo",
    "Olá? saiu o reembolso?",
]


@dataclass
class Live:
    """A running backend: its URL, token, and an authenticated client."""

    url: str
    token: str
    http: httpx.Client
    settings: Settings
    app: object

    @property
    def backend(self):  # type: ignore[no-untyped-def]
        return self.app.state.backend  # type: ignore[attr-defined]


def start_server(
    settings: Settings, *, demo: bool = False
) -> tuple[uvicorn.Server, threading.Thread, str, object]:
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    app = create_app(settings, demo=demo)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=5))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive(), "backend died while starting"
        assert time.monotonic() < deadline, "backend did not start"
        time.sleep(0.02)
    return server, thread, f"http://127.0.0.1:{sock.getsockname()[1]}", app


def live_backend(settings: Settings, *, demo: bool = False) -> Iterator[Live]:
    server, thread, url, app = start_server(settings, demo=demo)
    token = settings.token or (settings.data_dir / "token").read_text().strip()
    with httpx.Client(
        base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=30
    ) as http:
        yield Live(url, token, http, settings, app)
    server.should_exit = True
    thread.join(15)


def live_settings(request: pytest.FixtureRequest, tmp_path: Path, **overrides: Any) -> Settings:
    """A test backend's settings on the database a ``["sqlite", "postgres"]``-parametrized
    fixture's ``request.param`` names, with ``overrides``."""
    url = (
        f"sqlite:///{tmp_path / 'api.sqlite3'}"
        if request.param == "sqlite"
        else str(request.getfixturevalue("pg_url"))
    )
    return load_settings(
        data_dir=tmp_path / "data", database_url=url, token="test-token-123", **overrides
    )


@pytest.fixture(params=["sqlite", "postgres"])
def live(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Live]:
    """The backend on SQLite, then on PostgreSQL."""
    yield from live_backend(live_settings(request, tmp_path))


@pytest.fixture
def live_sqlite(tmp_path: Path) -> Iterator[Live]:
    """The backend on SQLite only (cheaper)."""
    settings = load_settings(
        data_dir=tmp_path / "data",
        database_url=f"sqlite:///{tmp_path / 'api.sqlite3'}",
        token="test-token-123",
    )
    yield from live_backend(settings)


def say(live: Live, conversa: str, text: str) -> dict[str, Any]:
    """Customer ``c-1``'s message ``text`` in ``conversa``; the agent's answer (200 asserted)."""
    response = live.http.post(
        f"/api/conversations/{conversa}/messages", json={"text": text, "cliente_id": "c-1"}
    )
    assert response.status_code == 200, response.text
    return dict(response.json())


def refund_attempts(reply: dict[str, Any]) -> list[dict[str, Any]]:
    """The ``emitir-reembolso`` attempts of an answer from :func:`say`."""
    return [a for a in reply["attempts"] if a["ferramenta"] == "emitir-reembolso"]
