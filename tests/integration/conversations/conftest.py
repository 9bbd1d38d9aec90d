"""The real backend on loopback, with the customer channel each test needs."""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import pytest

from backend.channel.simulator import ChannelSimulator
from backend.settings import load_settings
from tests.integration.api.conftest import Live, live_backend

StartLive = Callable[..., AbstractContextManager[Live]]


@pytest.fixture(params=["sqlite", "postgres"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh state database: SQLite, then PostgreSQL."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'conv.sqlite3'}"
    return str(request.getfixturevalue("pg_url"))


@pytest.fixture
def start_live(db_url: str, tmp_path: Path) -> StartLive:
    """Start the backend on ``db_url`` with extra settings (e.g. the webhook URL)."""

    @contextmanager
    def start(**overrides: Any) -> Iterator[Live]:
        settings = load_settings(
            data_dir=tmp_path / "data", database_url=db_url, token="test-token-123", **overrides
        )
        running = live_backend(settings)
        got = next(running)
        try:
            yield got
        finally:
            next(running, None)  # stops the server even when the test failed

    return start


@pytest.fixture
def live(start_live: StartLive) -> Iterator[Live]:
    """The backend with its default channel (the loopback simulator it starts)."""
    with start_live() as got:
        yield got


@pytest.fixture
def webhook() -> Iterator[ChannelSimulator]:
    """A customer channel outside the backend, reached as a webhook."""
    sim = ChannelSimulator().start()
    yield sim
    sim.stop()


@pytest.fixture
def closed_port_url() -> Iterator[str]:
    """A loopback URL nobody listens on (connection refused): its port stays bound, never
    listening, for the whole test, so no server the test starts can be given it."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/v1/messages"
