"""What a new operator tripped on, tried again against the real backend at 120×40 and 80×24:
Approvals shows every kind, columns and lines are readable in full, focus is shown and
actions name their target, one PR has one id, ages move, "new" stays until opened, the
header names the token's operator."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest
from textual.widgets import DataTable, Label, Static

from console.app import CadenciaConsole, make_console
from console.config import ConsoleSettings
from console.dialogs import ConfirmScreen
from console.screens.approvals import ApprovalsScreen
from console.screens.pr_detail import PrDetailScreen
from console.screens.team import TeamScreen
from console.widgets.activity_feed import ActivityFeed
from console.widgets.status_bar import StatusBar
from tests.console.conftest import until_live, wait_for
from tests.console.fault_proxy import FaultProxy
from tests.console.world import FROZEN_NOW, TOKEN, Live, World

Factory = Callable[..., CadenciaConsole]
SIZES = [(120, 40), (80, 24)]


def _keys(app: CadenciaConsole, table_id: str) -> set[str]:
    return {str(k.value) for k in app.screen.query_one(table_id, DataTable).rows}


@pytest.mark.parametrize("size", SIZES)
async def test_approvals_is_the_inbox_by_kind(
    make_app: Factory, world: World, size: tuple[int, int]
) -> None:
    app = make_app()
    async with app.run_test(size=size) as pilot:
        await until_live(pilot)
        await pilot.press("3")
        assert isinstance(app.screen, ApprovalsScreen)
        await wait_for(pilot, lambda: f"pr:{world.dev_ready}" in _keys(app, "#prs"))
        assert f"pr_blocked:{world.dev_blocked}" in _keys(app, "#prs")
        assert f"action_approval:{world.adr_approval}" in _keys(app, "#held")
        assert f"handoff:{world.offered_handoff}" in _keys(app, "#handoffs")
        assert f"interruption:{world.claimed_takeover}" in _keys(app, "#interruptions")
        shown = sum(len(_keys(app, f"#{t}")) for t in ("prs", "interruptions", "uncertain"))
        shown += len(_keys(app, "#held")) + len(_keys(app, "#handoffs"))
        assert shown == len(app.inbox)  # everything the header counts, nothing else
        title = str(app.screen.query_one("#held-title", Label).content)
        assert title.endswith(f"({len(_keys(app, '#held'))})")


async def test_a_long_feed_line_wraps_and_the_team_shows_the_whole_doing(
    make_app: Factory, live: Live
) -> None:
    long = "running tflint on modules/networking/vpc and modules/storage, then checkov END"
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await until_live(pilot)
        from backend.prs.gating import agent_at_work

        table = app.screen.query_one("#roster", DataTable)
        table.move_cursor(row=table.get_row_index("qa"), animate=False)
        with agent_at_work(live.backend.events, "qa", None, long):
            await wait_for(pilot, lambda: "working" in str(table.get_cell("qa", "status")))
            detail = app.screen.query_one("#agent-detail", Static)
            await wait_for(pilot, lambda: "END" in str(detail.content))  # the whole "doing"
            feed = app.screen.query_one(ActivityFeed)
            await wait_for(pilot, lambda: any("END" in x.text for x in feed.last_lines(3)))
            await pilot.pause(0.3)
            assert feed.virtual_size.height > feed.line_count  # a line took several rows
            rows = "".join(
                "".join(s.text for s in feed.render_line(y)) for y in range(feed.size.height)
            )
            assert "END" in rows  # the end of the line is on screen, under its start


async def test_f_goes_to_the_feed_and_back_and_p_names_its_agent(make_app: Factory) -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await until_live(pilot)
        screen = app.screen
        assert isinstance(screen, TeamScreen)
        table = screen.query_one("#roster", DataTable)
        feed = screen.query_one(ActivityFeed)
        await pilot.press("f")
        assert screen.focused is feed
        assert feed.parent is not None
        assert feed.parent.has_pseudo_class("focus-within")
        await pilot.press("p")  # from the feed: no agent is meant, nothing is asked
        assert app.screen is screen
        assert screen.focused is table  # ...and the roster, where agents are chosen, has focus
        await pilot.press("f", "f")
        assert screen.focused is table
        table.move_cursor(row=table.get_row_index("po"), animate=False)
        await pilot.press("p")
        assert isinstance(app.screen, ConfirmScreen)
        assert "po" in str(app.screen.query_one(".title", Label).content)
        await pilot.press("n")


async def test_the_age_column_moves_with_the_clock(proxy: FaultProxy, world: World) -> None:
    clock = [FROZEN_NOW]
    settings = ConsoleSettings(url=proxy.url, token=TOKEN, operator="alice")
    app = make_console(settings, now=lambda: clock[0])
    async with app.run_test(size=(120, 40)) as pilot:
        await until_live(pilot)
        await pilot.press("2")
        key = f"action_approval:{world.adr_approval}"
        table = app.screen.query_one("#inbox", DataTable)
        await wait_for(pilot, lambda: key in {k.value for k in table.rows})
        before = str(table.get_cell(key, "age"))
        clock[0] = FROZEN_NOW + timedelta(hours=3)
        await wait_for(pilot, lambda: str(table.get_cell(key, "age")) != before, timeout=4)


async def test_the_header_names_the_tokens_operator(proxy: FaultProxy) -> None:
    # No --operator: the console acts as, and says, who the token is.
    settings = ConsoleSettings.model_validate({"url": proxy.url, "token": TOKEN})
    app = make_console(settings, now=lambda: datetime.now(UTC))
    async with app.run_test(size=(160, 40)) as pilot:
        await until_live(pilot)
        await wait_for(pilot, lambda: app.me is not None)
        assert app.operator == app.me
        bar = app.screen.query_one(StatusBar)
        await wait_for(pilot, lambda: bar.me == app.me)
        assert f"{app.me}@" in str(bar.render())


async def test_a_merged_pr_still_shows_the_diff_it_was_merged_with(
    make_app: Factory, live: Live, world: World
) -> None:
    live.http.post(
        f"/api/prs/{world.pr_ready}/approve", json={"operator": "alice"}
    ).raise_for_status()
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await until_live(pilot)
        screen = PrDetailScreen(app, world.pr_ready)
        app.push_screen(screen)
        await wait_for(pilot, lambda: screen.loads >= 1)
        assert screen.detail is not None
        assert screen.detail.gate_status == "merged"
        shown = screen.query_one("#diff", Static).content
        diff = str(getattr(shown, "code", shown))  # a Syntax (the diff) or a plain text
        assert "(no diff)" not in diff
        assert "diff --git" in diff  # what the PR was merged with, not an empty diff
        summary = str(screen.query_one("#summary", Static).content)
        assert world.pr_ready in summary
        # A merged PR offers nothing: no key of the Inbox's is shown.
        assert not any(b.binding.action.startswith("act(") for b in screen.active_bindings.values())
