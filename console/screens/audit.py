"""The audit trail (command palette: "Audit trail"): every operator action — who, what,
target, reason, outcome, when — from ``GET /api/audit``, newest first; ``r`` fetches again."""

from __future__ import annotations

from typing import ClassVar

from rich.table import Table
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widgets import Static

from console.exceptions import ApiError, ContractError
from console.models_operators import AuditEntry
from console.screens._base import ConsoleScreen
from console.widgets.footer import KeysFooter
from console.widgets.status_bar import StatusBar

AUDIT_SHOWN = 1000
_OUTCOME_STYLE = {"done": "green", "refused": "bold red", "failed": "red"}


def render_audit(entries: list[AuditEntry]) -> Table | Text:
    """The entries as a table, newest first."""
    if not entries:
        return Text("No operator action recorded yet.", style="dim")
    table = Table(expand=True, show_edge=False)
    for column in ("when", "who", "action", "target", "outcome", "reason"):
        table.add_column(column)
    for e in reversed(entries):
        who = e.operator + (f" as {e.as_operator}" if e.as_operator else "")
        outcome = Text(
            e.outcome + (f" {e.status}" if e.status else "") + (f" {e.error}" if e.error else ""),
            _OUTCOME_STYLE.get(e.outcome, ""),
        )
        table.add_row(
            e.ts.replace("T", " ")[:19],
            who,
            e.action,
            " ".join(e.target.values()),
            outcome,
            e.reason or "",
        )
    return table


class AuditScreen(ConsoleScreen):
    """Every operator action, scrollable."""

    TITLE = "Audit"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "app.pop_screen", "Back"),
        Binding("r", "reload", "Refresh audit"),
        Binding("j", "scroll('down')", "Down", show=False),
        Binding("k", "scroll('up')", "Up", show=False),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.entries: list[AuditEntry] = []
        self.loads = 0
        """Completed fetches (tests wait on it)."""

    def compose(self) -> ComposeResult:
        """Status bar, summary line, the trail, footer."""
        yield StatusBar()
        yield Static("audit: loading…", id="audit-summary")
        with VerticalScroll(id="audit-pane"):
            yield Static(id="audit")
        yield KeysFooter()

    def on_mount(self) -> None:
        """Fetch the trail."""
        super().on_mount()
        self.load()

    def action_reload(self) -> None:
        """``r``: fetch the trail again."""
        self.load()

    def action_scroll(self, direction: str) -> None:
        """``j``/``k``."""
        getattr(self.query_one("#audit-pane", VerticalScroll), f"scroll_{direction}")()

    @work(exclusive=True, group="load", exit_on_error=False)
    async def load(self) -> None:
        """Screen-owned: popping the screen cancels a fetch nobody will see."""
        summary = self.query_one("#audit-summary", Static)
        try:
            entries = await self.console.client.audit(AUDIT_SHOWN)
        except ApiError as exc:
            if isinstance(exc, ContractError):
                self.console.report_contract_error(exc.route, exc.field, exc.detail)
            summary.update(Text(f"audit: could not load: {exc.message}", "red"))
            return
        self.entries = entries
        refused = sum(1 for e in entries if e.outcome == "refused")
        summary.update(
            Text.assemble(
                ("Audit trail", "bold"),
                f": {len(entries)} action(s), {refused} refused, newest first · r refreshes"
                " · esc back",
            )
        )
        self.query_one("#audit", Static).update(render_audit(entries))
        self.loads += 1
