"""The console never freezes on bad data: through the fault proxy, one unreadable field, a
garbled body, a 5xx or a slow route are shown for what they are, and the rest keeps working."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.widgets import DataTable, Static

from console.app import PERSISTENT_TOAST_S, CadenciaConsole
from console.widgets.activity_feed import ActivityFeed
from console.widgets.status_bar import StatusBar
from tests.console.conftest import until_live, wait_for
from tests.console.fault_proxy import FaultProxy
from tests.console.world import Live, World

Factory = Callable[..., CadenciaConsole]


def _first_status_is_3(body: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{**body[0], "status": 3}, *body[1:]]


def _keys(app: CadenciaConsole, table_id: str) -> list[str]:
    table = app.screen.query_one(table_id, DataTable)
    return [k.value or "" for k in sorted(table.rows, key=table.get_row_index)]


async def test_roster_status_3_is_shown_and_everything_else_works(
    make_app: Factory, proxy: FaultProxy, live: Live, world: World
) -> None:
    proxy.set_field("/api/roster", _first_status_is_3)
    app = make_app()
    async with app.run_test(size=(160, 40)) as pilot:
        await until_live(pilot)  # not stuck on "connecting": the stream is up
        assert app.is_running
        bar = str(app.screen.query_one(StatusBar).render())
        assert "GET /api/roster [0].status" in bar
        # App.notify posts a message: wait for the toast rather than race it.
        await wait_for(
            pilot, lambda: any("GET /api/roster" in n.message for n in app._notifications)
        )
        [toast] = [n for n in app._notifications if "GET /api/roster" in n.message]
        assert "field [0].status" in toast.message
        assert "got 3" in toast.message
        assert toast.severity == "error"
        assert toast.timeout >= PERSISTENT_TOAST_S  # stays until the operator dismisses it
        # The backlog and the live stream still render...
        feed = app.screen.query_one(ActivityFeed)
        assert feed.line_count > 100
        last = live.agent_status("qa", "still here")
        await wait_for(pilot, lambda: feed.last_lines(1)[0].id == last)
        # ...and so do the other screens.
        await pilot.press("3")
        await wait_for(pilot, lambda: f"pr:{world.pr_ready}" in _keys(app, "#prs"))
        assert f"interruption:{world.open_takeover}" in _keys(app, "#interruptions")
        # A refresh after the backend is fixed clears the status bar; the toast stays.
        del proxy.rewrites["/api/roster"]
        await pilot.press("r")
        await wait_for(pilot, lambda: not app.contract_errors)
        await pilot.pause(0.2)
        assert "unreadable" not in str(app.screen.query_one(StatusBar).render())
        assert toast in app._notifications
        assert app.roster  # the roster loaded this time
        await pilot.press("colon", *"dismiss notif")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await wait_for(pilot, lambda: toast not in app._notifications)


async def test_garbled_approvals_body_is_a_contract_error_roster_still_loads(
    make_app: Factory, proxy: FaultProxy
) -> None:
    proxy.garbled.add("/api/approvals")
    app = make_app()
    async with app.run_test(size=(160, 40)) as pilot:
        await until_live(pilot)
        assert app.contract_errors["GET /api/approvals"][0] == "(body)"
        assert "GET /api/approvals (body)" in str(app.screen.query_one(StatusBar).render())
        table = app.screen.query_one("#roster", DataTable)
        await wait_for(pilot, lambda: table.row_count >= 3)


async def test_approvals_503_warns_and_the_console_keeps_going(
    make_app: Factory, proxy: FaultProxy
) -> None:
    proxy.failures["/api/approvals"] = 503
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await until_live(pilot)
        await wait_for(
            pilot,
            lambda: any("injected by the fault proxy" in n.message for n in app._notifications),
        )
        assert not app.contract_errors  # a 503 is not the backend breaking the contract
        table = app.screen.query_one("#roster", DataTable)
        await wait_for(pilot, lambda: table.row_count >= 3)
        del proxy.failures["/api/approvals"]
        await pilot.press("r")
        await wait_for(pilot, lambda: len(app.approvals.infra_prs) == 2)


async def test_slow_detail_shows_loading_and_can_be_left(
    make_app: Factory, proxy: FaultProxy, world: World
) -> None:
    proxy.delays[f"/api/prs/{world.pr_ready}"] = 1.5
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await until_live(pilot)
        await pilot.press("3", "enter")
        await pilot.pause(0.3)
        assert "Loading" in str(app.screen.query_one("#summary", Static).render())
        await pilot.press("escape")  # leaving cancels the screen's own fetch
        await pilot.pause(2.0)
        assert app.is_running
        await pilot.press("enter")
        await wait_for(pilot, lambda: getattr(app.screen, "detail", None) is not None)


async def test_an_unreadable_live_event_is_shown_skipped_and_the_stream_goes_on(
    make_app: Factory, proxy: FaultProxy, live: Live
) -> None:
    def break_working_lines(event: dict[str, Any]) -> dict[str, Any]:
        if event.get("payload", {}).get("status") == "working":
            return {**event, "ts": 12}
        return event

    app = make_app()
    async with app.run_test(size=(160, 40)) as pilot:
        await until_live(pilot)
        connects = app.stream_connects
        proxy.stream_rewrite = break_working_lines
        proxy.drop_streams(refuse=False)  # the next stream carries the rewrite
        await wait_for(pilot, lambda: app.stream_connects > connects)
        last = live.agent_status("qa", "bad then good")  # working (broken), then idle
        feed = app.screen.query_one(ActivityFeed)
        await wait_for(pilot, lambda: feed.last_lines(1)[0].id == last)
        assert feed.last_lines(1)[0].text == "qa is idle"
        [(route, (field, detail))] = app.contract_errors.items()
        assert route == "GET /api/events/stream"
        assert field == f"event {last - 1}: ts"
        assert "got 12" in detail
        assert app.is_running
        assert app.connection == "live"
        assert app.stream_connects == connects + 1  # skipped, not a reconnect loop


def _toasts(app: CadenciaConsole, text: str) -> list[Any]:
    """The notifications whose message holds ``text``."""
    return [n for n in app._notifications if text in n.message]
