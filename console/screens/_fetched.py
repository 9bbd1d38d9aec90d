"""A read-only screen of one fetched body under a summary line: fetched on mount and on
``r``, scrolled with ``j``/``k``, left with ``esc`` (the agent's turns, the audit trail).

A subclass says what to fetch (:meth:`FetchedScreen.fetch`) and how to show it
(:meth:`FetchedScreen.present`); a failed fetch is shown in the summary line, and a
contract error is reported like everywhere else in the console.
"""

from __future__ import annotations

from typing import Any

from rich.console import RenderableType
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widgets import Static

from console.exceptions import ApiError, ContractError
from console.inert import inert_text
from console.messages import ContractBroken
from console.screens._base import ConsoleScreen
from console.view import ConsoleView
from console.widgets.footer import KeysFooter
from console.widgets.status_bar import StatusBar


def fetched_bindings(what: str) -> list[BindingType]:
    """A fetched screen's keys; the footer says what ``r`` refreshes."""
    return [
        Binding("escape", "app.pop_screen", "Back"),
        Binding("r", "reload", f"Refresh {what}"),
        Binding("j", "scroll('down')", "Down", show=False),
        Binding("k", "scroll('up')", "Up", show=False),
    ]


class FetchedScreen(ConsoleScreen):
    """Summary line, one scrollable body, footer; ``loads`` counts completed fetches.

    Styled by ``fetched.tcss`` (loaded with every screen's stylesheet, see console.modes).
    """

    def __init__(self, view: ConsoleView) -> None:
        super().__init__(view)
        self.loads = 0
        """Completed fetches (tests wait on it)."""

    def loading_text(self) -> str:
        """The summary line while the first fetch runs."""
        return "loading…"

    async def fetch(self) -> Any:
        """Ask the backend (raises :class:`~console.exceptions.ApiError`)."""
        raise NotImplementedError

    def present(self, data: Any) -> tuple[RenderableType, RenderableType]:
        """The summary line and the body for what :meth:`fetch` returned."""
        raise NotImplementedError

    def failed_text(self, message: str) -> str:
        """The summary line when the fetch failed."""
        return f"could not load: {message}"

    def compose(self) -> ComposeResult:
        """Status bar, summary line, the body, footer."""
        yield StatusBar()
        yield Static(self.loading_text(), id="summary")
        with VerticalScroll(id="fetched-pane"):
            yield Static(id="fetched-body")
        yield KeysFooter()

    def on_mount(self) -> None:
        """Fetch."""
        super().on_mount()
        self.load()

    def action_reload(self) -> None:
        """``r``: fetch again."""
        self.load()

    def action_scroll(self, direction: str) -> None:
        """``j``/``k``."""
        getattr(self.query_one("#fetched-pane", VerticalScroll), f"scroll_{direction}")()

    @work(exclusive=True, group="load", exit_on_error=False)
    async def load(self) -> None:
        """Screen-owned: popping the screen cancels a fetch nobody will see."""
        summary = self.query_one("#summary", Static)
        try:
            data = await self.fetch()
        except ApiError as exc:
            if isinstance(exc, ContractError):
                self.post_message(ContractBroken(exc.route, exc.field, exc.detail))
            summary.update(inert_text(self.failed_text(exc.message), "red"))
            return
        line, body = self.present(data)
        summary.update(line)
        self.query_one("#fetched-body", Static).update(body)
        self.loads += 1
