"""The console's issue-12 behaviour without the Inbox route: the palette keys, widths that
follow the terminal, the too-small message, PR detail screens that update live and on
``r``, and a stale screen that lets the server decide (against the real backend)."""

from __future__ import annotations

from collections.abc import Callable

from textual.command import CommandPalette
from textual.widgets import DataTable, Static

from console.app import CadenciaConsole
from console.screens.pr_detail import PrDetailScreen
from console.screens.team import COLUMNS
from tests.console.conftest import until_live, wait_for
from tests.console.fault_proxy import FaultProxy
from tests.console.world import Live, World

Factory = Callable[..., CadenciaConsole]


async def test_ctrl_p_and_colon_both_open_the_palette(make_app: Factory) -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await until_live(pilot)
        for key in ("ctrl+p", "colon"):
            await pilot.press(key)
            await wait_for(pilot, lambda: isinstance(app.screen, CommandPalette))
            await pilot.press("escape")
            await wait_for(pilot, lambda: not isinstance(app.screen, CommandPalette))


async def test_below_80x24_the_console_says_the_terminal_is_too_small(make_app: Factory) -> None:
    app = make_app()
    async with app.run_test(size=(79, 30)) as pilot:
        await until_live(pilot)
        banner = app.screen.query_one("#too-small", Static)
        assert banner.display
        assert "Terminal too small: 79×30" in str(banner.render())
        await pilot.resize_terminal(120, 40)
        await wait_for(pilot, lambda: not banner.display)
        await pilot.resize_terminal(100, 23)
        await wait_for(pilot, lambda: banner.display)


async def test_roster_columns_widen_with_the_terminal(make_app: Factory) -> None:
    app = make_app()
    async with app.run_test(size=(200, 40)) as pilot:
        await until_live(pilot)
        table = app.screen.query_one("#roster", DataTable)
        minimum = {c.key: c.min_width for c in COLUMNS}
        await wait_for(pilot, lambda: table.columns["doing"].width > minimum["doing"])
        widths = {k.value: c.width for k, c in table.columns.items()}
        assert widths["role"] > minimum["role"]
        assert widths["model"] > minimum["model"]
        for key, entry in app.roster.items():  # nothing of a role or model is cut
            assert len(entry.role) <= widths["role"], key
            assert len(entry.model or "-") <= widths["model"], key
        await pilot.resize_terminal(120, 40)
        await wait_for(pilot, lambda: table.columns["doing"].width < widths["doing"])


async def _open_ready_pr(pilot, app: CadenciaConsole, world: World) -> PrDetailScreen:  # type: ignore[no-untyped-def]
    await until_live(pilot)
    await pilot.press("3", "enter")  # Approvals: the PR awaiting a human is first
    await wait_for(pilot, lambda: getattr(app.screen, "detail", None) is not None)
    screen = app.screen
    assert isinstance(screen, PrDetailScreen)
    assert screen.pr_id == world.pr_ready
    return screen


async def test_pr_detail_updates_live_when_someone_else_acts(
    make_app: Factory, live: Live, world: World
) -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _open_ready_pr(pilot, app, world)
        assert screen.detail is not None
        assert screen.detail.gate_status == "awaiting_human"
        # Another operator rejects it through the API: the event stream brings it here.
        live.http.post(
            f"/api/prs/{world.pr_ready}/reject", json={"operator": "carol", "reason": "no"}
        ).raise_for_status()
        await wait_for(
            pilot,
            lambda: screen.detail is not None and screen.detail.gate_status != "awaiting_human",
            timeout=20,
        )
        summary = str(screen.query_one("#summary", Static).render())
        assert "awaiting_human" not in summary


async def test_r_refetches_the_detail_screen(
    make_app: Factory, proxy: FaultProxy, world: World
) -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _open_ready_pr(pilot, app, world)
        loads, gets = screen.loads, len(proxy.calls("GET", f"/api/prs/{world.pr_ready}"))
        await pilot.press("r")
        await wait_for(pilot, lambda: screen.loads > loads)
        assert len(proxy.calls("GET", f"/api/prs/{world.pr_ready}")) > gets


async def test_a_pr_merged_elsewhere_loses_its_keys_on_the_open_detail(
    make_app: Factory, live: Live, world: World
) -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _open_ready_pr(pilot, app, world)
        assert screen.current_item() is not None  # approve/reject/close offered
        live.http.post(
            f"/api/prs/{world.pr_ready}/approve", json={"operator": "carol"}
        ).raise_for_status()
        await wait_for(
            pilot,
            lambda: screen.detail is not None and screen.detail.gate_status == "merged",
            timeout=20,
        )
        assert screen.current_item() is None
        assert not [
            b for b in app.screen.active_bindings.values() if b.binding.action.startswith("act(")
        ]
