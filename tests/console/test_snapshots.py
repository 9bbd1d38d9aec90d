"""SVG snapshots at 120×40 of the four main screens against the real backend's built world
(fixed clock and ids, so the same bytes every run).

Regenerate after an intended UI change with ``pytest tests/console --snapshot-update``.
"""

from __future__ import annotations

from collections.abc import Callable

from textual.pilot import Pilot
from textual.widgets import DataTable

from console.app import CadenciaConsole
from console.dialogs import ConfirmScreen, FormScreen
from console.widgets.activity_feed import ActivityFeed
from tests.console.conftest import until_live, wait_for
from tests.console.fault_proxy import FaultProxy
from tests.console.world import Live, World

SIZE = (120, 40)
Factory = Callable[..., CadenciaConsole]


def _app(make_app: Factory, **fields: object) -> CadenciaConsole:
    app = make_app(**fields)
    # The backend listens on a random port; show a fixed URL so the header is stable.
    app.client.base_url = "http://127.0.0.1:8765"
    return app


async def _settled(pilot: Pilot) -> None:
    await until_live(pilot)
    pilot.app.clear_notifications()
    # The feed follows its tail one refresh after the backlog lands; on a busy machine
    # that can be after the snapshot would be taken.
    await _at_tail(pilot)
    await pilot.pause(0.2)


async def _at_tail(pilot: Pilot) -> None:
    """Every feed shows its last line. The snapshot is about the screen, not about the
    follow logic (tests/console/test_flows.py covers that): on a loaded machine a relayout
    can land mid-backlog, so the feed is asked to follow before it is waited for."""
    feeds = list(pilot.app.screen.query(ActivityFeed))
    for feed in feeds:
        feed.scroll_end(animate=False, x_axis=False)
    await wait_for(
        pilot, lambda: all(f.scroll_offset.y == f.max_scroll_y for f in feeds), timeout=30
    )


async def _delivered(pilot: Pilot) -> None:
    """The takeover screen loaded, with every outbound message past ``pending`` (the
    delivery worker runs on its own clock; a pending mark would make the bytes vary)."""

    def ready() -> bool:
        screen = pilot.app.screen
        conv = getattr(screen, "conversation", None)
        return conv is not None and all(
            m.delivery is None or m.delivery.status != "pending" for m in conv.messages
        )

    await wait_for(pilot, ready)
    await pilot.pause(0.3)


def test_team_screen(snap_compare, make_app: Factory) -> None:
    assert snap_compare(_app(make_app), terminal_size=SIZE, run_before=_settled)


def test_approvals_screen(snap_compare, make_app: Factory) -> None:
    async def run_before(pilot: Pilot) -> None:
        await _settled(pilot)
        await pilot.press("3")
        await pilot.pause(0.3)

    assert snap_compare(_app(make_app), terminal_size=SIZE, run_before=run_before)


def test_infra_pr_detail_findings(snap_compare, make_app: Factory) -> None:
    async def run_before(pilot: Pilot) -> None:
        await _settled(pilot)
        await pilot.press("3", "j", "j", "enter")  # the blocked dev PR and its QA findings
        await wait_for(pilot, lambda: getattr(pilot.app.screen, "detail", None) is not None)
        await pilot.press("right")
        await pilot.pause(0.3)

    assert snap_compare(_app(make_app), terminal_size=SIZE, run_before=run_before)


def test_interruption_detail(snap_compare, make_app: Factory) -> None:
    async def run_before(pilot: Pilot) -> None:
        await _settled(pilot)
        await pilot.press("3", "tab", "enter")  # the open teto de voltas takeover
        await _delivered(pilot)

    assert snap_compare(_app(make_app), terminal_size=SIZE, run_before=run_before)


def test_takeover_claimed_with_the_ledger_state(
    snap_compare, make_app: Factory, live: Live, world: World
) -> None:
    live.http.post(
        f"/api/interruptions/{world.open_takeover}/claim", json={"operator": "alice"}
    ).raise_for_status()

    async def run_before(pilot: Pilot) -> None:
        await _settled(pilot)
        await pilot.press("3", "tab", "enter")
        await _delivered(pilot)

    assert snap_compare(_app(make_app), terminal_size=SIZE, run_before=run_before)


def test_execute_confirmation_shows_what_the_ledger_holds(
    snap_compare, make_app: Factory, live: Live, world: World
) -> None:
    live.http.post(
        f"/api/interruptions/{world.open_takeover}/claim", json={"operator": "alice"}
    ).raise_for_status()

    async def run_before(pilot: Pilot) -> None:
        await _settled(pilot)
        await pilot.press("3", "tab", "enter")
        await _delivered(pilot)
        await pilot.press("e")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, FormScreen))
        await pilot.press(*"reembolso feito", "enter")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, ConfirmScreen))
        await pilot.pause(0.3)

    assert snap_compare(_app(make_app), terminal_size=SIZE, run_before=run_before)


def test_approvals_at_80x24_readonly(snap_compare, make_app: Factory) -> None:
    async def run_before(pilot: Pilot) -> None:
        await _settled(pilot)
        await pilot.press("3")
        await pilot.pause(0.3)

    assert snap_compare(
        _app(make_app, readonly=True), terminal_size=(80, 24), run_before=run_before
    )


def test_contract_error_in_status_bar_and_toast(
    snap_compare, make_app: Factory, proxy: FaultProxy
) -> None:
    proxy.set_field("/api/roster", lambda body: [{**body[0], "status": 3}, *body[1:]])

    async def run_before(pilot: Pilot) -> None:
        await until_live(pilot)  # the toast is what this snapshot is about: keep it
        await _at_tail(pilot)
        await pilot.pause(0.2)

    assert snap_compare(_app(make_app), terminal_size=SIZE, run_before=run_before)


async def _on_inbox(pilot: Pilot) -> None:
    await _settled(pilot)
    await pilot.press("2")
    table = pilot.app.screen.query_one("#inbox", DataTable)
    await wait_for(pilot, lambda: table.row_count == len(pilot.app.inbox) > 0)  # type: ignore[attr-defined]
    # The columns take the terminal's width one refresh after the resize; wait for it.
    await wait_for(pilot, lambda: table.columns["title"].width > 20)
    await pilot.pause(0.3)


def test_inbox_screen(snap_compare, make_app: Factory) -> None:
    assert snap_compare(_app(make_app), terminal_size=SIZE, run_before=_on_inbox)


def test_inbox_at_200_columns_shows_whole_titles(snap_compare, make_app: Factory) -> None:
    assert snap_compare(_app(make_app), terminal_size=(200, 40), run_before=_on_inbox)


def test_approval_detail(snap_compare, make_app: Factory, world: World) -> None:
    async def run_before(pilot: Pilot) -> None:
        await _on_inbox(pilot)
        screen = pilot.app.screen
        target = f"action_approval:{world.adr_approval}"
        while (item := screen.current_item()) is not None and item.id != target:  # type: ignore[attr-defined]
            await pilot.press("j")
        await pilot.press("enter")
        await wait_for(pilot, lambda: getattr(pilot.app.screen, "loads", 0) > 0)
        await pilot.pause(0.3)

    assert snap_compare(_app(make_app), terminal_size=SIZE, run_before=run_before)


def test_terminal_too_small(snap_compare, make_app: Factory) -> None:
    assert snap_compare(_app(make_app), terminal_size=(79, 23), run_before=_settled)


def test_shift_screen(snap_compare, make_app: Factory) -> None:
    async def run_before(pilot: Pilot) -> None:
        await _settled(pilot)
        await pilot.press("4")
        await pilot.pause(0.3)

    assert snap_compare(_app(make_app), terminal_size=SIZE, run_before=run_before)
