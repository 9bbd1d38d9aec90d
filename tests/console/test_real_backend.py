"""The console against the real backend: the roster, a wrong token, the feed's first load."""

from __future__ import annotations

from collections.abc import Callable

from textual.widgets import DataTable

from backend.events import EventType
from console.app import FEED_TAIL, CadenciaConsole, make_console
from console.config import ConsoleSettings
from console.widgets.activity_feed import ActivityFeed
from console.widgets.status_bar import StatusBar
from tests.console.conftest import until_live, wait_for
from tests.console.fault_proxy import FaultProxy
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


async def test_a_refused_token_is_said_once_and_not_retried(live: Live) -> None:
    app = make_console(ConsoleSettings(url=live.url, token="wrong", operator="alice"))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.ready.is_set())
        await wait_for(pilot, lambda: app.connection == "token refused")
        # App.notify posts a message: the toast lands a moment after the state changes.
        await wait_for(
            pilot,
            lambda: any("refused this console's token" in n.message for n in app._notifications),
        )
        toast = next(n for n in app._notifications if n.title == "Token refused")
        assert "start the console again with a valid token" in toast.message
        assert "token refused" in str(app.screen.query_one(StatusBar).render())
        await pilot.pause(1.5)
        assert app.stream_connects == 0  # no endless "reconnecting": nothing to retry
        assert app.connection == "token refused"
        assert app.is_running  # the operator reads why, then quits


async def test_feed_starts_from_the_tail_of_a_long_log(
    live: Live, proxy: FaultProxy, make_app: Callable[..., CadenciaConsole]
) -> None:
    # More history than the feed loads: the console must read the newest lines once, not
    # page the log from event 1 (with a month of history that kept the Team screen empty).
    with live.backend.events.db.transaction() as tx:
        for i in range(FEED_TAIL + 150):
            live.backend.events.append_in(tx, EventType.BENCH_TICK, {"i": i, "t": 0.0})
    last = int(live.backend.events.last_id())
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await until_live(pilot)
        feed = app.screen.query_one(ActivityFeed)
        await wait_for(pilot, lambda: feed.line_count >= FEED_TAIL)
        assert feed.line_count == FEED_TAIL
        assert [x.id for x in feed.last_lines(FEED_TAIL)] == list(
            range(last - FEED_TAIL + 1, last + 1)
        )
        assert app.last_event_id == last  # the stream resumes right after the tail
        assert len(proxy.calls("GET", "/api/activity")) == 1
        assert [p for _, p, _ in proxy.requests if p == "/api/events"] == []
        assert app.screen.query_one("#roster", DataTable).row_count >= 3
