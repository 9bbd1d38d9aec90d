"""Deadlines on the console (issue: on call): the time left on every row, breached rows,
the header's count and ``--bell`` on a new breach; the ``release`` key on a claimed
takeover; the Shift screen (key ``4``). Driven with Pilot against the real backend."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import timedelta

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable, Static

from console.app import CadenciaConsole, make_console
from console.config import ConsoleSettings
from console.dialogs import PromptScreen
from console.screens.help import HelpScreen
from console.screens.inbox import InboxScreen
from console.screens.shift import ShiftScreen
from console.widgets.status_bar import StatusBar
from tests.console.conftest import Built, until_live, wait_for
from tests.console.fault_proxy import FaultProxy
from tests.console.world import FROZEN_NOW, T0, TOKEN, Live, World, live_backend, restore, serve

Factory = Callable[..., CadenciaConsole]
TAKEOVER_SLA = {"interruption": "2m"}
"""The default: the world's takeovers (opened after 12:02) are past it at 12:20, the
console's frozen clock, and within it at 12:01."""


@pytest.fixture
def live(built: Built) -> Iterator[Live]:
    """The world's backend with the takeovers' real SLA (every other kind stays far off)."""
    restore(built.pristine, built.data_dir)
    with live_backend(built.data_dir, sla=TAKEOVER_SLA) as running:
        yield running


@pytest.fixture
def proxy(live: Live) -> Iterator[FaultProxy]:
    """The fault proxy in front of this module's :func:`live`."""
    fault = FaultProxy(live.url)
    with serve(fault.app) as url:
        fault.url = url
        yield fault


def _rows(app: CadenciaConsole, table_id: str) -> list[str]:
    table = app.screen.query_one(f"#{table_id}", DataTable)
    return [k.value or "" for k in sorted(table.rows, key=table.get_row_index)]


def _cell(app: CadenciaConsole, table_id: str, item_id: str, column: str) -> str:
    return str(app.screen.query_one(f"#{table_id}", DataTable).get_cell(item_id, column))


def _header(app: CadenciaConsole) -> str:
    return str(app.screen.query_one(StatusBar).render())


async def _screen(pilot: Pilot, key: str, table_id: str) -> None:
    await until_live(pilot)
    await pilot.press(key)
    app = pilot.app
    assert isinstance(app, CadenciaConsole)
    await wait_for(pilot, lambda: len(_rows(app, table_id)) == len(app.inbox) > 0)


async def test_a_deadline_passing_with_no_event_turns_rows_breached_and_rings_once(
    proxy: FaultProxy, world: World
) -> None:
    clock = [T0 + timedelta(minutes=1)]  # before any takeover opened: nothing is late
    settings = ConsoleSettings.model_validate(
        {"url": proxy.url, "token": TOKEN, "operator": "alice", "bell": True}
    )
    app = make_console(settings, now=lambda: clock[0])
    takeovers = {f"interruption:{world.open_takeover}", f"interruption:{world.claimed_takeover}"}
    async with app.run_test(size=(120, 40)) as pilot:
        await _screen(pilot, "2", "inbox")
        assert app.breached == set()
        assert "breached" not in _header(app)
        assert all(_cell(app, "inbox", i, "due").endswith("left") for i in takeovers)
        assert app.bells == 0
        clock[0] = FROZEN_NOW  # the takeovers' 2 minutes ran out; the server says nothing
        await wait_for(pilot, lambda: app.breached == takeovers, timeout=5)
        await wait_for(pilot, lambda: "2 breached" in _header(app), timeout=5)
        assert all(_cell(app, "inbox", i, "due").endswith("over") for i in takeovers)
        assert app.bells == 1  # two breaches at one tick: one ring
        pr = f"pr:{world.dev_ready}"
        assert _cell(app, "inbox", pr, "due") == ">99d"  # PRs: the world's far SLA
        await pilot.pause(2.2)  # more ticks, a refetch: the same breaches ring no more
        app.action_refresh()
        await pilot.pause(1.0)
        assert app.bells == 1
        await pilot.press("3")
        await wait_for(pilot, lambda: _rows(app, "interruptions") == sorted(takeovers))
        assert _cell(app, "interruptions", f"interruption:{world.open_takeover}", "due").endswith(
            "over"
        )


async def test_the_holder_releases_a_claimed_takeover_with_l(
    make_app: Factory, proxy: FaultProxy, live: Live, world: World
) -> None:
    app = make_app(operator="bob")
    item = f"interruption:{world.claimed_takeover}"
    async with app.run_test(size=(120, 40)) as pilot:
        await _screen(pilot, "2", "inbox")
        screen = app.screen
        assert isinstance(screen, InboxScreen)
        table = screen.query_one("#inbox", DataTable)
        table.move_cursor(row=table.get_row_index(item), animate=False)
        await pilot.pause()
        assert "l:act('release')" in {
            f"{b.binding.key}:{b.binding.action}" for b in app.screen.active_bindings.values()
        }
        await pilot.press("l")
        await wait_for(pilot, lambda: isinstance(app.screen, PromptScreen))
        title = str(app.screen.query_one(".title").render())
        assert f"Release takeover #{world.claimed_takeover}" in title
        await pilot.press(*"off shift", "enter")
        await wait_for(
            pilot, lambda: next(i for i in app.inbox if i.id == item).state == "open", timeout=20
        )
        assert proxy.calls("POST", f"/api/interruptions/{world.claimed_takeover}/release") == [
            {"operator": "bob", "reason": "off shift"}
        ]
        served = live.http.get(f"/api/interruptions/{world.claimed_takeover}").json()
        assert served["status"] == "open"
        assert served["claimed_by"] is None


async def test_shift_lists_breached_first_and_who_holds_each_takeover(
    make_app: Factory, world: World
) -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await _screen(pilot, "4", "shift")
        assert isinstance(app.screen, ShiftScreen)
        rows = _rows(app, "shift")
        late = {f"interruption:{world.open_takeover}", f"interruption:{world.claimed_takeover}"}
        assert set(rows[:2]) == late  # breached first
        claimed = f"interruption:{world.claimed_takeover}"
        assert _cell(app, "shift", claimed, "held by") == "bob"
        assert _cell(app, "shift", claimed, "held for") != ""
        assert _cell(app, "shift", f"interruption:{world.open_takeover}", "held by") == ""
        summary = str(app.screen.query_one("#shift-summary", Static).render())
        assert f"{len(rows)} open · 2 breached · 1 claimed takeover (bob 1)" in summary
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        assert any(row[:2] == ("4", "Shift") for row in app.screen._rows)
