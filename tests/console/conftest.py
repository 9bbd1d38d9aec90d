"""Console fixtures: the real backend on loopback (a fresh copy of one built world per test),
the fault proxy in front of it, and a console pointed at the proxy."""

from __future__ import annotations

import asyncio
import fcntl
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from textual.pilot import Pilot

from console.app import CadenciaConsole, make_console
from console.config import ConsoleSettings
from tests.console.fault_proxy import FaultProxy
from tests.console.world import (
    FROZEN_NOW,
    TOKEN,
    Live,
    World,
    build_world,
    live_backend,
    restore,
    serve,
)


@dataclass(frozen=True)
class Built:
    """The world's ids, where its backend lives, and the pristine copy to restore from."""

    world: World
    data_dir: Path
    pristine: Path


WORLD_DIR = Path(
    os.environ.get("CADENCIA_CONSOLE_WORLD_DIR")
    or Path(tempfile.gettempdir()) / "cadencia-console-world"
)
"""A fixed place: a PR's id is a digest of its repository's absolute path, and the snapshots
show it. Two sessions at once take turns (the lock), they never share a world; a session
that need not match the snapshots may build its own elsewhere (``CADENCIA_CONSOLE_WORLD_DIR``)
instead of waiting for the lock."""


@pytest.fixture(scope="session")
def built() -> Iterator[Built]:
    """Build the world once per session (real gates take seconds)."""
    WORLD_DIR.parent.mkdir(parents=True, exist_ok=True)
    with open(WORLD_DIR.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            shutil.rmtree(WORLD_DIR, ignore_errors=True)
            data_dir, pristine = WORLD_DIR / "data", WORLD_DIR / "pristine"
            world = build_world(data_dir)
            shutil.copytree(data_dir, pristine, symlinks=True)
            yield Built(world, data_dir, pristine)
        finally:
            shutil.rmtree(WORLD_DIR, ignore_errors=True)
            fcntl.flock(lock, fcntl.LOCK_UN)


@pytest.fixture
def world(built: Built) -> World:
    """Ids of the PRs and takeovers every test starts with."""
    return built.world


@pytest.fixture
def live(built: Built) -> Iterator[Live]:
    """``create_app(settings)`` on a fresh copy of the world, served on loopback."""
    restore(built.pristine, built.data_dir)
    with live_backend(built.data_dir) as running:
        yield running


@pytest.fixture
def proxy(live: Live) -> Iterator[FaultProxy]:
    """The fault proxy in front of :func:`live` (forwards everything until told otherwise)."""
    fault = FaultProxy(live.url)
    with serve(fault.app) as url:
        fault.url = url
        yield fault


@pytest.fixture
def make_app(proxy: FaultProxy) -> Callable[..., CadenciaConsole]:
    """Build a console for the backend behind the proxy (operator alice, frozen wall clock)."""

    def build(**fields: object) -> CadenciaConsole:
        settings = ConsoleSettings.model_validate(
            {"url": proxy.url, "token": TOKEN, "operator": "alice", **fields}
        )
        return make_console(settings, now=lambda: FROZEN_NOW)

    return build


async def wait_for(pilot: Pilot, condition: Callable[[], object], timeout: float = 10.0) -> None:
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


def toasts(app: CadenciaConsole) -> list[str]:
    """Every notification the App shows, as ``title | message``."""
    return [f"{n.title or ''} | {n.message}" for n in app._notifications]
