"""The console against the real backend directly (no proxy): the roster, and a wrong token."""

from __future__ import annotations

from textual.widgets import DataTable

from console.app import make_console
from console.config import ConsoleSettings
from tests.console.conftest import until_live, wait_for
from tests.console.world import TOKEN, Live


async def test_console_shows_the_real_roster_and_goes_live(live: Live) -> None:
    app = make_console(ConsoleSettings(url=live.url, token=TOKEN, operator="alice"))
    async with app.run_test(size=(120, 40)) as pilot:
        await until_live(pilot)
        table = app.screen.query_one("#roster", DataTable)
        await wait_for(pilot, lambda: table.row_count >= 3)
        expected = {r["id"] for r in live.http.get("/api/roster").json()}
        assert {k.value for k in table.rows} == expected
        assert "arquiteto" in expected


async def test_wrong_token_is_reported_not_fatal(live: Live) -> None:
    app = make_console(ConsoleSettings(url=live.url, token="wrong", operator="alice"))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.ready.is_set())
        await wait_for(pilot, lambda: app.connection == "reconnecting")
        assert app.is_running
        assert any("refused the token" in n.message for n in app._notifications)
