"""The off switch (``p``) and an agent's turns (``t``) on the Team screen, against the real
backend through the fault proxy."""

from __future__ import annotations

from collections.abc import Callable

from rich.console import Console
from textual.widgets import Button, DataTable, Static

from console.app import CadenciaConsole
from console.dialogs import ConfirmScreen
from console.screens.agent_turns import AgentTurnsScreen
from console.screens.team import TeamScreen
from console.widgets.activity_feed import ActivityFeed
from tests.console.conftest import toasts, until_live, wait_for
from tests.console.fault_proxy import FaultProxy
from tests.console.world import Live

Factory = Callable[..., CadenciaConsole]


def _select(app: CadenciaConsole, agent: str) -> None:
    table = app.screen.query_one("#roster", DataTable)
    table.move_cursor(row=table.get_row_index(agent), animate=False)


def _status_cell(app: CadenciaConsole, agent: str) -> str:
    return str(app.screen.query_one("#roster", DataTable).get_cell(agent, "status"))


def _feed(app: CadenciaConsole) -> str:
    return "\n".join(line.text for line in app.screen.query_one(ActivityFeed).last_lines(400))


async def test_p_pauses_then_resumes_the_selected_agent(
    make_app: Factory, proxy: FaultProxy, live: Live
) -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await until_live(pilot)
        _select(app, "po")
        await pilot.press("p")
        assert isinstance(app.screen, ConfirmScreen)
        assert app.screen.focused is app.screen.query_one("#no", Button)  # default No
        await pilot.press("enter")  # the focused No: nothing is sent
        await pilot.pause(0.2)
        assert proxy.calls("POST", "/api/agents") == []
        await pilot.press("p", "y")
        await wait_for(pilot, lambda: app.roster["po"].status == "paused")
        assert proxy.calls("POST", "/api/agents/po/pause") == [{"operator": "alice"}]
        assert live.backend.pauses.is_paused("po")
        assert app.roster["po"].paused_by == "alice"
        assert isinstance(app.screen, TeamScreen)
        await wait_for(pilot, lambda: _status_cell(app, "po") == "‖ paused")
        assert "paused by alice" in str(
            app.screen.query_one("#roster", DataTable).get_cell("po", "doing")
        )
        assert any("po paused by alice" in t for t in toasts(app))

        await pilot.press("p")
        assert isinstance(app.screen, ConfirmScreen)
        assert "Resume agent po?" in str(app.screen.query_one(".title", Static).content)
        await pilot.press("y")
        await wait_for(pilot, lambda: app.roster["po"].status == "idle")
        assert proxy.calls("POST", "/api/agents/po/resume") == [{"operator": "alice"}]
        assert not live.backend.pauses.is_paused("po")
        assert app.roster["po"].paused_by is None
        await wait_for(pilot, lambda: "po resumed by alice" in _feed(app))


async def test_p_on_a_stale_roster_reports_the_409_and_changes_nothing(
    make_app: Factory, proxy: FaultProxy, live: Live
) -> None:
    live.backend.pauses.pause("criativo", "bob", "custo")

    def hide_the_pause(body: list[dict[str, object]]) -> list[dict[str, object]]:
        return [
            {**r, "status": "idle", "paused_by": None} if r["id"] == "criativo" else r for r in body
        ]

    proxy.set_field("/api/roster", hide_the_pause)
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await until_live(pilot)
        assert app.roster["criativo"].status == "idle"  # what the (rewritten) roster says
        _select(app, "criativo")
        await pilot.press("p", "y")
        await wait_for(pilot, lambda: any("409" in t for t in toasts(app)))
        assert any("already paused by bob" in t for t in toasts(app))
        await wait_for(pilot, lambda: "Pause criativo → 409" in _feed(app))
        state = live.backend.pauses.state("criativo")
        assert (state.paused, state.paused_by, state.reason) == (True, "bob", "custo")


async def test_t_shows_the_agents_recent_turns_with_their_tool_calls(
    make_app: Factory, proxy: FaultProxy
) -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await until_live(pilot)
        _select(app, "atendimento")
        await pilot.press("t")
        assert isinstance(app.screen, AgentTurnsScreen)
        screen = app.screen
        await wait_for(pilot, lambda: screen.loads >= 1)
        assert proxy.calls("GET", "/api/agents/atendimento/turns")
        assert screen.turns
        assert any(t.tool_calls for t in screen.turns)
        out = Console(width=160, record=True, color_system=None)
        out.print(screen.query_one("#fetched-body", Static).content)
        text = out.export_text()
        assert "→ emitir-reembolso(" in text  # the call, with its arguments
        assert '"pedidoId": "' in text
        assert "← emitir-reembolso" in text  # and what the tool answered
        assert "user " in text
        await pilot.press("r")
        await wait_for(pilot, lambda: screen.loads >= 2)
        await pilot.press("escape")
        assert isinstance(app.screen, TeamScreen)


async def test_p_on_a_read_only_console_says_why_and_sends_nothing(
    make_app: Factory, proxy: FaultProxy
) -> None:
    app = make_app(readonly=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await until_live(pilot)
        _select(app, "po")
        await pilot.press("p")
        await pilot.pause(0.2)
        assert isinstance(app.screen, TeamScreen)
        assert any("Pause agent refused: read-only console" in t for t in toasts(app))
        assert proxy.calls("POST", "/api/agents") == []
