"""Operator flows driven with Pilot against the real backend (through the fault proxy)."""

from __future__ import annotations

from collections.abc import Callable

from textual.pilot import Pilot
from textual.widgets import Button, DataTable, Input, Label

from console.app import CadenciaConsole
from console.dialogs import ConfirmScreen, PromptScreen
from console.screens.approvals import ApprovalsScreen
from console.screens.help import HelpScreen
from console.widgets.activity_feed import ActivityFeed
from console.widgets.status_bar import StatusBar
from tests.console.conftest import until_live, wait_for
from tests.console.fault_proxy import FaultProxy
from tests.console.world import Live, World

Factory = Callable[..., CadenciaConsole]
PRS = "/api/prs"


def _pr_keys(app: CadenciaConsole) -> list[str]:
    """The PR ids on the Approvals screen's PR list, in its order."""
    table = app.screen.query_one("#prs", DataTable)
    rows = sorted(table.rows, key=table.get_row_index)
    return [(k.value or "").partition(":")[2] for k in rows]


async def _highlight(pilot: Pilot, table_id: str, key: str) -> None:
    """Focus a list of the Approvals screen and put its cursor on the item ``key``."""
    table = pilot.app.screen.query_one(f"#{table_id}", DataTable)
    await wait_for(pilot, lambda: key in {k.value for k in table.rows})
    table.focus()
    table.move_cursor(row=table.get_row_index(key), animate=False)
    await pilot.pause()


async def test_approve_with_a_then_y_merges_and_the_row_goes(
    make_app: Factory, proxy: FaultProxy, live: Live, world: World
) -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await until_live(pilot)
        await pilot.press("3")
        assert isinstance(app.screen, ApprovalsScreen)
        # Every PR kind on the Inbox, not only infra: the dev PRs are listed too.
        assert {world.pr_ready, world.dev_ready, world.dev_blocked} <= set(_pr_keys(app))
        assert world.pr_changes not in _pr_keys(app)  # the author's move, not a human's
        await _highlight(pilot, "prs", f"pr:{world.pr_ready}")
        await pilot.press("a")
        assert isinstance(app.screen, ConfirmScreen)
        assert app.screen.focused is app.screen.query_one("#no", Button)  # default No
        await pilot.press("y")
        await wait_for(pilot, lambda: world.pr_ready not in _pr_keys(app))
        assert proxy.calls("POST", f"{PRS}/{world.pr_ready}/approve") == [{"operator": "alice"}]
        assert live.backend.pipeline.get(world.pr_ready).gate_status == "merged"
        # The header counts every PR kind on the Inbox: the dev PR still waits.
        await wait_for(pilot, lambda: app.screen.query_one(StatusBar).prs_waiting == 1)


async def test_approve_cancelled_with_n_or_esc_sends_nothing(
    make_app: Factory, proxy: FaultProxy, live: Live, world: World
) -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await until_live(pilot)
        await pilot.press("3")
        await _highlight(pilot, "prs", f"pr:{world.pr_ready}")
        for cancel in ("n", "escape", "enter"):  # enter hits the focused No button
            await pilot.press("a")
            assert isinstance(app.screen, ConfirmScreen)
            await pilot.press(cancel)
            await pilot.pause(0.2)
            assert isinstance(app.screen, ApprovalsScreen)
        await pilot.pause(0.3)
        assert proxy.calls("POST", PRS) == []
        assert live.backend.pipeline.get(world.pr_ready).gate_status == "awaiting_human"
        assert world.pr_ready in _pr_keys(app)


async def test_reject_needs_a_reason(make_app: Factory, proxy: FaultProxy, world: World) -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await until_live(pilot)
        await pilot.press("3")
        await _highlight(pilot, "prs", f"pr:{world.pr_ready}")
        await pilot.press("x")
        assert isinstance(app.screen, PromptScreen)
        assert app.screen.query_one("#submit", Button).disabled
        await pilot.press("enter", "space", "space", "enter")  # blank and whitespace
        assert isinstance(app.screen, PromptScreen)
        await pilot.pause(0.2)
        assert proxy.calls("POST", PRS) == []
        await pilot.press(*"fmt please", "enter")
        await wait_for(pilot, lambda: proxy.calls("POST", f"{PRS}/{world.pr_ready}/reject"))
        assert proxy.calls("POST", f"{PRS}/{world.pr_ready}/reject") == [
            {"operator": "alice", "reason": "fmt please"}
        ]
        # The backend took it: the PR left awaiting_human for the Infra agent's correction
        # (the dev PR on the Inbox still waits).
        await wait_for(pilot, lambda: app.screen.query_one(StatusBar).prs_waiting == 1)


async def test_readonly_dims_and_refuses_every_action(make_app: Factory, proxy: FaultProxy) -> None:
    app = make_app(readonly=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await until_live(pilot)
        await pilot.press("3")
        screen = app.screen
        active = {b.binding.action: b.enabled for b in screen.active_bindings.values()}
        assert active["act('approve')"] is False  # shown, dimmed
        await pilot.press("tab")  # the takeovers
        active = {b.binding.action: b.enabled for b in screen.active_bindings.values()}
        assert active["act('claim')"] is False
        await pilot.press("shift+tab")
        for key in ("a", "x", "tab", "t", "e", "d"):
            await pilot.press(key)
            assert app.screen is screen  # no modal ever opens
        await pilot.pause(0.3)
        assert not [r for r in proxy.requests if r[0] == "POST"]
        assert any("read-only console" in n.message for n in app._notifications)
        assert screen.query_one(StatusBar).readonly


async def test_dropped_stream_shows_reconnecting_and_recovers(
    make_app: Factory, proxy: FaultProxy, live: Live, world: World
) -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await until_live(pilot)
        roster_gets = len(proxy.calls("GET", "/api/roster"))
        proxy.drop_streams(refuse=True)
        await wait_for(pilot, lambda: app.connection == "reconnecting")
        await pilot.pause(0.2)
        assert "reconnecting" in str(app.screen.query_one(StatusBar).render())
        # While the console is away, the QA gate works (a real agent.status pair).
        event_id = live.agent_status("qa", "while away")
        proxy.refuse_streams = False
        await wait_for(pilot, lambda: app.connection == "live", timeout=20)
        assert len(proxy.calls("GET", "/api/roster")) > roster_gets  # refetched after reconnect
        await wait_for(pilot, lambda: app.last_event_id == event_id)
        feed = app.screen.query_one(ActivityFeed)
        await wait_for(pilot, lambda: feed.last_lines(1)[0].id == event_id)
        # Nothing was lost while away: both lines, as the server renders them.
        assert [x.text for x in feed.last_lines(2)] == ["qa is working: while away", "qa is idle"]


async def test_live_status_change_updates_only_that_row(make_app: Factory, live: Live) -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await until_live(pilot)
        table = app.screen.query_one("#roster", DataTable)
        rows = table.row_count
        from backend.prs.gating import agent_at_work

        with agent_at_work(live.backend.events, "qa", None, "running tflint"):
            await wait_for(pilot, lambda: "working" in str(table.get_cell("qa", "status")))
            assert str(table.get_cell("qa", "doing")) == "running tflint"
        await wait_for(pilot, lambda: "idle" in str(table.get_cell("qa", "status")))
        assert table.row_count == rows


async def test_claim_from_approvals_then_the_takeover_screen_is_yours(
    make_app: Factory, proxy: FaultProxy, live: Live, world: World
) -> None:
    app = make_app()
    takeover = world.open_takeover
    async with app.run_test(size=(120, 40)) as pilot:
        await until_live(pilot)
        await pilot.press("3")
        await _highlight(pilot, "interruptions", f"interruption:{takeover}")
        await pilot.press("t")
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("y")
        await wait_for(
            pilot,
            lambda: any(
                i.id == takeover and i.claimed_by == "alice" for i in app.approvals.interruptions
            ),
        )
        assert proxy.calls("POST", f"/api/interruptions/{takeover}/claim") == [
            {"operator": "alice"}
        ]
        await pilot.press("enter")  # open the takeover screen; act from there
        await wait_for(pilot, lambda: getattr(app.screen, "conversation", None) is not None)
        title = str(app.screen.query_one("#conversation-title", Label).content)
        assert "held by human: alice" in title  # the conversation changed hands
        assert not app.screen.query_one("#reply", Input).disabled


async def test_conflict_409_notifies_and_refreshes(
    make_app: Factory, live: Live, world: World
) -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await until_live(pilot)
        # Someone else claims the open takeover and the console has not heard of it yet.
        await pilot.press("3")
        await _highlight(pilot, "interruptions", f"interruption:{world.open_takeover}")
        live.http.post(
            f"/api/interruptions/{world.open_takeover}/claim", json={"operator": "carol"}
        ).raise_for_status()
        await pilot.press("t", "y")
        await wait_for(pilot, lambda: any("409" in (n.title or "") for n in app._notifications))
        await wait_for(
            pilot, lambda: any(i.claimed_by == "carol" for i in app.approvals.interruptions)
        )


async def test_resync_refetches_and_jumps(make_app: Factory, proxy: FaultProxy, live: Live) -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await until_live(pilot)
        proxy.drop_streams(refuse=True)
        await wait_for(pilot, lambda: app.connection == "reconnecting")
        # The backend keeps a bounded backfill; fall further behind than it.
        live.backend.broadcaster.max_backfill = 3
        for n in range(3):
            last = live.agent_status("qa", f"step {n}")
        proxy.refuse_streams = False
        feed = app.screen.query_one(ActivityFeed)
        await wait_for(
            pilot, lambda: any(x.kind == "console.resync" for x in feed.last_lines(5)), timeout=20
        )
        assert app.last_event_id == last


async def test_feed_is_bounded(make_app: Factory, live: Live) -> None:
    app = make_app(feed_max_lines=100)
    async with app.run_test(size=(120, 40)) as pilot:
        await until_live(pilot)
        for n in range(80):
            last = live.agent_status("qa", f"n{n}")
        feed = app.screen.query_one(ActivityFeed)
        await wait_for(pilot, lambda: feed.last_lines(1)[0].id == last, timeout=20)
        assert feed.line_count == 100
        assert feed.following


async def test_help_lists_the_screen_bindings(make_app: Factory) -> None:
    app = make_app(readonly=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await until_live(pilot)
        await pilot.press("3", "question_mark")
        assert isinstance(app.screen, HelpScreen)
        rows = {desc: note for _, desc, note in app.screen._rows}
        assert rows["Approve"] == "off: read-only console"
        assert rows["Filter"] == ""
        await pilot.press("escape")
        assert isinstance(app.screen, ApprovalsScreen)


async def test_filter_narrows_the_lists(make_app: Factory, world: World) -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await until_live(pilot)
        await pilot.press("3", "slash", *"blocked")
        await wait_for(pilot, lambda: _pr_keys(app) == [world.dev_blocked])
        assert app.screen.query_one("#interruptions", DataTable).row_count == 0
        await pilot.press("escape")
        await wait_for(pilot, lambda: world.pr_ready in _pr_keys(app))
        assert world.dev_blocked in _pr_keys(app)


async def test_team_filter_takes_j_and_k_as_letters(make_app: Factory) -> None:
    # j/k are priority bindings on the Team (run as the key arrives, before the focused
    # widget): the filter box must still get them as letters, and once it is closed they
    # move the cursor again.
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await until_live(pilot)
        table = app.screen.query_one("#roster", DataTable)
        await wait_for(pilot, lambda: table.row_count > 1)
        await pilot.press("slash", "j", "k")
        assert app.screen.query_one("#filter", Input).value == "jk"
        await pilot.press("escape")
        await wait_for(pilot, lambda: table.row_count > 1 and app.screen.focused is table)
        row = table.cursor_row
        await pilot.press("j")
        assert table.cursor_row == row + 1


async def test_feed_stays_put_when_scrolled_up(make_app: Factory, live: Live) -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await until_live(pilot)
        for n in range(30):
            last = live.agent_status("qa", f"n{n}")
        feed = app.screen.query_one(ActivityFeed)
        await wait_for(pilot, lambda: feed.last_lines(1)[0].id == last)
        await pilot.pause(0.2)
        assert feed.scroll_offset.y == feed.max_scroll_y > 0  # followed the tail
        await pilot.press("f", "g")  # focus the feed, jump to the top
        await pilot.pause(0.2)
        assert not feed.following
        last = live.agent_status("qa", "later")
        await wait_for(pilot, lambda: feed.last_lines(1)[0].id == last)
        await pilot.pause(0.2)
        assert feed.scroll_offset.y == 0
        await pilot.press("G")
        await pilot.pause(0.2)
        assert feed.following
        assert feed.scroll_offset.y == feed.max_scroll_y
