"""Operator flows driven with Pilot against the fake backend over real HTTP."""

from __future__ import annotations

from collections.abc import Callable

from textual.widgets import Button, DataTable

from console.app import CadenciaConsole
from console.screens.approvals import ApprovalsScreen
from console.screens.help import HelpScreen
from console.screens.modals import ConfirmScreen, PromptScreen
from console.widgets.activity_feed import ActivityFeed
from console.widgets.status_bar import StatusBar
from tests.console.conftest import until_live, wait_for
from tests.console.fake_backend import FakeBackend

Factory = Callable[..., CadenciaConsole]


def _pr_keys(app: CadenciaConsole) -> list[str]:
    table = app.screen.query_one("#prs", DataTable)
    return [k.value or "" for k in sorted(table.rows, key=table.get_row_index)]


async def test_approve_with_a_then_y_sends_and_the_row_goes(make_app: Factory, fake: FakeBackend):
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await until_live(pilot)
        await pilot.press("2")
        assert isinstance(app.screen, ApprovalsScreen)
        assert _pr_keys(app)[0] == "pa-1"  # awaiting_human first
        await pilot.press("a")
        assert isinstance(app.screen, ConfirmScreen)
        assert app.screen.focused is app.screen.query_one("#no", Button)  # default No
        await pilot.press("y")
        await wait_for(pilot, lambda: fake.calls("POST", "/api/infra-artifacts/pa-1/approve"))
        assert fake.calls("POST", "/api/infra-artifacts/pa-1/approve") == [{"operator": "alice"}]
        await wait_for(pilot, lambda: "pa-1" not in _pr_keys(app))
        await wait_for(pilot, lambda: app.screen.query_one(StatusBar).prs_waiting == 0)


async def test_approve_cancelled_with_n_or_esc_sends_nothing(make_app: Factory, fake: FakeBackend):
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await until_live(pilot)
        await pilot.press("2")
        for cancel in ("n", "escape", "enter"):  # enter hits the focused No button
            await pilot.press("a")
            assert isinstance(app.screen, ConfirmScreen)
            await pilot.press(cancel)
            await pilot.pause(0.2)
            assert isinstance(app.screen, ApprovalsScreen)
        await pilot.pause(0.3)
        assert fake.calls("POST", "/api/infra-artifacts") == []
        assert "pa-1" in _pr_keys(app)


async def test_reject_needs_a_reason(make_app: Factory, fake: FakeBackend):
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await until_live(pilot)
        await pilot.press("2", "x")
        assert isinstance(app.screen, PromptScreen)
        assert app.screen.query_one("#submit", Button).disabled
        await pilot.press("enter", "space", "space", "enter")  # blank and whitespace
        assert isinstance(app.screen, PromptScreen)
        await pilot.pause(0.2)
        assert fake.calls("POST", "/api/infra-artifacts") == []
        await pilot.press(*"fmt please", "enter")
        await wait_for(pilot, lambda: fake.calls("POST", "/api/infra-artifacts/pa-1/reject"))
        assert fake.calls("POST", "/api/infra-artifacts/pa-1/reject") == [
            {"operator": "alice", "reason": "fmt please"}
        ]


async def test_readonly_dims_and_refuses_every_action(make_app: Factory, fake: FakeBackend):
    app = make_app(readonly=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await until_live(pilot)
        await pilot.press("2")
        screen = app.screen
        active = {b.binding.action: b.enabled for b in screen.active_bindings.values()}
        assert active["approve"] is False
        assert active["claim"] is False
        for key in ("a", "x", "tab", "t", "e", "d"):
            await pilot.press(key)
            assert app.screen is screen  # no modal ever opens
        await pilot.pause(0.3)
        assert not [r for r in fake.requests if r[0] == "POST"]
        assert any("read-only console" in n.message for n in app._notifications)
        assert screen.query_one(StatusBar).readonly


async def test_dropped_stream_shows_reconnecting_and_recovers(make_app: Factory, fake: FakeBackend):
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await until_live(pilot)
        roster_gets = len(fake.calls("GET", "/api/roster"))
        fake.drop_streams(refuse=True)
        await wait_for(pilot, lambda: app.connection == "reconnecting")
        await pilot.pause(0.2)
        assert "reconnecting" in str(app.screen.query_one(StatusBar).render())
        event_id = fake.push("agent.status", "qa", status="blocked", detail="while away")
        fake.refuse_streams = False
        await wait_for(pilot, lambda: app.connection == "live", timeout=20)
        assert len(fake.calls("GET", "/api/roster")) > roster_gets  # refetched after reconnect
        await wait_for(pilot, lambda: app.last_event_id == event_id)
        feed = app.screen.query_one(ActivityFeed)
        await wait_for(pilot, lambda: feed.last_lines(1)[0].id == event_id)
        assert app.roster["qa"].status == "blocked"


async def test_live_status_change_updates_only_that_row(make_app: Factory, fake: FakeBackend):
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await until_live(pilot)
        table = app.screen.query_one("#roster", DataTable)
        fake.push("agent.status", "qa", status="working", detail="running tflint")
        await wait_for(pilot, lambda: "working" in str(table.get_cell("qa", "status")))
        assert str(table.get_cell("qa", "doing")) == "running tflint"
        assert table.row_count == 5


async def test_claim_then_execute_with_a_reply(make_app: Factory, fake: FakeBackend):
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await until_live(pilot)
        await pilot.press("2", "tab")  # focus the interruptions list; #7 (open) is first
        await pilot.press("t")
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("y")
        await wait_for(pilot, lambda: fake.calls("POST", "/api/interruptions/7/claim"))
        await wait_for(pilot, lambda: app.approvals.interruptions[0].claimed_by == "alice")
        await pilot.press("enter")  # open the detail; act from there
        await wait_for(pilot, lambda: getattr(app.screen, "detail", None) is not None)
        await pilot.press("e")
        assert isinstance(app.screen, PromptScreen)
        await pilot.press(*"reembolso feito", "enter")
        await wait_for(pilot, lambda: fake.calls("POST", "/api/interruptions/7/resolve"))
        assert fake.calls("POST", "/api/interruptions/7/resolve") == [
            {"operator": "alice", "action": "execute", "reply": "reembolso feito"}
        ]
        await wait_for(pilot, lambda: all(i.id != 7 for i in app.approvals.interruptions))


async def test_conflict_409_notifies_and_refreshes(make_app: Factory, fake: FakeBackend):
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await until_live(pilot)
        # Someone else claims #7 and the console has not heard of it yet.
        fake.state["interruptions"][7].update(status="claimed", claimed_by="carol")
        await pilot.press("2", "tab", "t", "y")
        await wait_for(pilot, lambda: any("409" in (n.title or "") for n in app._notifications))
        await wait_for(
            pilot, lambda: any(i.claimed_by == "carol" for i in app.approvals.interruptions)
        )


async def test_resync_refetches_and_jumps(make_app: Factory, fake: FakeBackend):
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await until_live(pilot)
        last = fake.push("agent.status", "qa", status="idle")
        fake.resync_below = 10_000
        fake.drop_streams(refuse=False)
        feed = app.screen.query_one(ActivityFeed)
        await wait_for(pilot, lambda: any(x.kind == "console.resync" for x in feed.last_lines(5)))
        assert app.last_event_id == last


async def test_feed_is_bounded(make_app: Factory, fake: FakeBackend):
    app = make_app(feed_max_lines=100)
    async with app.run_test(size=(120, 40)) as pilot:
        await until_live(pilot)
        for n in range(250):
            last = fake.push("agent.status", "qa", status="working", detail=f"n{n}")
        feed = app.screen.query_one(ActivityFeed)
        await wait_for(pilot, lambda: feed.last_lines(1)[0].id == last, timeout=10)
        assert feed.line_count == 100
        assert feed.following


async def test_help_lists_the_screen_bindings(make_app: Factory):
    app = make_app(readonly=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await until_live(pilot)
        await pilot.press("2", "question_mark")
        assert isinstance(app.screen, HelpScreen)
        rows = {desc: note for _, desc, note in app.screen._rows}
        assert rows["Approve"] == "off: read-only console"
        assert rows["Filter"] == ""
        await pilot.press("escape")
        assert isinstance(app.screen, ApprovalsScreen)


async def test_filter_narrows_the_lists(make_app: Factory):
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await until_live(pilot)
        await pilot.press("2", "slash", *"secret")
        await wait_for(pilot, lambda: _pr_keys(app) == ["pa-2"])
        await pilot.press("escape")
        await wait_for(pilot, lambda: _pr_keys(app) == ["pa-1", "pa-2"])


async def test_feed_stays_put_when_scrolled_up(make_app: Factory, fake: FakeBackend):
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await until_live(pilot)
        for n in range(120):
            last = fake.push("agent.status", "qa", status="working", detail=f"n{n}")
        feed = app.screen.query_one(ActivityFeed)
        await wait_for(pilot, lambda: feed.last_lines(1)[0].id == last)
        await pilot.pause(0.2)
        assert feed.scroll_offset.y == feed.max_scroll_y > 0  # followed the tail
        await pilot.press("f", "g")  # focus the feed, jump to the top
        await pilot.pause(0.2)
        assert not feed.following
        last = fake.push("agent.status", "qa", status="idle", detail="later")
        await wait_for(pilot, lambda: feed.last_lines(1)[0].id == last)
        await pilot.pause(0.2)
        assert feed.scroll_offset.y == 0
        await pilot.press("G")
        await pilot.pause(0.2)
        assert feed.following
        assert feed.scroll_offset.y == feed.max_scroll_y
