"""Screens built once and rows updated in place, against the real backend: a refetch that
changes one item touches that row only (every other row object survives, the cursor stays
on its item), and a screen switch shows the same screen instance every time."""

from __future__ import annotations

from textual.widgets import DataTable
from textual.widgets._footer import FooterKey

from console.app import CadenciaConsole, make_console
from console.config import ConsoleSettings
from console.screens.inbox import InboxScreen
from console.screens.team import TeamScreen
from tests.console.conftest import until_live, wait_for
from tests.console.world import TOKEN, Live, World


def _console(live: Live) -> CadenciaConsole:
    return make_console(ConsoleSettings(url=live.url, token=TOKEN, operator="alice"))


def _rows(table: DataTable[object]) -> dict[str, object]:
    """Row key → the DataTable's own row object (a clear and refill makes new ones)."""
    return {key.value or "": row for key, row in table.rows.items()}


def _cursor_key(table: DataTable[object]) -> str:
    return table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value or ""


async def test_a_refetch_updates_the_changed_rows_and_keeps_the_rest(
    live: Live, world: World
) -> None:
    app = _console(live)
    async with app.run_test(size=(120, 40)) as pilot:
        await until_live(pilot)
        roster = app.screen.query_one("#roster", DataTable)
        await wait_for(pilot, lambda: "po" in _rows(roster) and roster.row_count >= 3)
        roster.move_cursor(row=roster.get_row_index("arquiteto"), animate=False)
        before = _rows(roster)
        live.http.post("/api/agents/po/pause", json={"operator": "bob"}).raise_for_status()
        await wait_for(pilot, lambda: "paused" in str(roster.get_cell("po", "status")))
        after = _rows(roster)
        assert after.keys() == before.keys()
        assert all(after[k] is before[k] for k in before)  # updated in place, not refilled
        assert _cursor_key(roster) == "arquiteto"

        await pilot.press("2")
        inbox = app.screen.query_one("#inbox", DataTable)
        await wait_for(pilot, lambda: inbox.row_count == len(app.inbox) > 2)
        gone = f"action_approval:{world.adr_approval}"
        kept = next(k for k in _rows(inbox) if k != gone)
        inbox.move_cursor(row=inbox.get_row_index(kept), animate=False)
        before = _rows(inbox)
        reject = {"operator": "alice", "reason": "not now"}
        live.http.post(f"/api/approvals/{world.adr_approval}/reject", json=reject)
        await wait_for(pilot, lambda: gone not in _rows(inbox))
        after = _rows(inbox)
        assert after.keys() == before.keys() - {gone}
        assert all(after[k] is before[k] for k in after)
        assert _cursor_key(inbox) == kept


async def test_screens_are_built_once_before_first_use_and_the_footer_is_kept(
    live: Live,
) -> None:
    app = _console(live)
    async with app.run_test(size=(120, 40)) as pilot:
        await until_live(pilot)
        team = app.screen
        assert isinstance(team, TeamScreen)
        # Built in the background once the first data was on screen, not on the first key.
        await wait_for(pilot, lambda: all(app.mode_screen(m) for m in ("inbox", "approvals")))
        inbox = app.mode_screen("inbox")
        assert isinstance(inbox, InboxScreen)
        keys = list(team.query(FooterKey))
        assert keys
        for _ in range(2):
            await pilot.press("2")
            assert app.screen is inbox
            await pilot.press("3")
            assert app.screen is app.mode_screen("approvals")
            await pilot.press("1")
            assert app.screen is team
        await pilot.pause()
        # Same keys on the Team screen: its footer was not rebuilt by the switches.
        assert list(team.query(FooterKey)) == keys
        assert all(a is b for a, b in zip(team.query(FooterKey), keys, strict=True))


async def test_quitting_while_the_screens_are_built_in_the_background_is_clean(
    live: Live,
) -> None:
    # The Inbox and Approvals are built in the background after the first data. An operator
    # who quit at that moment got a traceback: the screen mounted while the App closed had
    # no children, and its on_mount looked for its table (NoMatches: #inbox).
    app = _console(live)
    prebuild = app.prebuild_modes
    app.prebuild_modes = lambda: None  # type: ignore[method-assign]  # hold it back
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.ready.is_set())
        await pilot.pause()
        assert app.mode_screen("inbox") is None  # not built yet: the moment of the race
        app.exit()
        prebuild()  # the background build, right after the operator quit: builds nothing
        assert app.mode_screen("inbox") is None
        assert app.mode_screen("approvals") is None
    assert app.return_code == 0
