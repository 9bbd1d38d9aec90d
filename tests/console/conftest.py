"""Console fixtures: a fake backend on loopback and a console pointed at it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from datetime import UTC, datetime

import pytest
from textual.pilot import Pilot

from console.app import CadenciaConsole, make_console
from console.config import ConsoleSettings
from tests.console.fake_backend import TOKEN, FakeBackend, serve

FROZEN_NOW = datetime(2025, 11, 29, 12, 20, 0, tzinfo=UTC)


@pytest.fixture
def fake() -> FakeBackend:
    """Fresh deterministic state per test."""
    return FakeBackend(ping_s=1.0)


@pytest.fixture
def backend_url(fake: FakeBackend) -> Iterator[str]:
    """The fake backend served by uvicorn on 127.0.0.1:<free port>."""
    with serve(fake.app) as url:
        yield url


@pytest.fixture
def make_app(backend_url: str) -> Callable[..., CadenciaConsole]:
    """Build a console for the fake backend (operator alice, frozen wall clock)."""

    def build(**fields: object) -> CadenciaConsole:
        settings = ConsoleSettings.model_validate(
            {"url": backend_url, "token": TOKEN, "operator": "alice", **fields}
        )
        return make_console(settings, now=lambda: FROZEN_NOW)

    return build


async def wait_for(pilot: Pilot, condition: Callable[[], object], timeout: float = 5.0) -> None:
    """Pause the pilot until ``condition()`` is truthy; fail after ``timeout`` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {condition}")
        await pilot.pause(0.05)


async def until_live(pilot: Pilot) -> None:
    """Wait for snapshots, backlog and the stream."""
    app = pilot.app
    assert isinstance(app, CadenciaConsole)
    await wait_for(pilot, lambda: app.ready.is_set() and app.connection == "live")
    await pilot.pause(0.2)
