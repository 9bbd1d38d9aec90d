"""The audit trail (command palette: "Audit trail"): every operator action — who, what,
target, reason, outcome, when — the newest of ``GET /api/audit``, newest first; ``r`` fetches
again. :func:`render_item_actions` is one item's share of it, shown in that item's detail."""

from __future__ import annotations

from typing import ClassVar

from rich.table import Table
from rich.text import Text
from textual.binding import BindingType

from console.inert import inert, inert_text
from console.models_operators import AuditEntry
from console.screens._fetched import FetchedScreen, fetched_bindings
from console.view import ConsoleView

AUDIT_SHOWN = 1000
_OUTCOME_STYLE = {"done": "green", "refused": "bold red", "failed": "red"}


def _when(e: AuditEntry) -> str:
    return e.ts.replace("T", " ")[:19]


def _who(e: AuditEntry) -> str:
    return inert(e.operator + (f" as {e.as_operator}" if e.as_operator else ""), multiline=False)


def _outcome(e: AuditEntry) -> Text:
    return inert_text(
        e.outcome + (f" {e.status}" if e.status else "") + (f" {e.error}" if e.error else ""),
        _OUTCOME_STYLE.get(e.outcome, ""),
    )


def render_audit(entries: list[AuditEntry]) -> Table | Text:
    """The entries as a table, newest first."""
    if not entries:
        return Text("No operator action recorded yet.", style="dim")
    table = Table(expand=True, show_edge=False)
    for column in ("when", "who", "action", "target", "outcome", "reason"):
        table.add_column(column)
    for e in reversed(entries):
        table.add_row(
            inert_text(_when(e)),
            inert_text(_who(e)),
            inert_text(e.action),
            inert_text(" ".join(e.target.values())),
            _outcome(e),
            inert_text(e.reason, multiline=True),
        )
    return table


ITEM_ACTIONS_SHOWN = 50
"""An item's timeline shows its newest operator actions (``GET /api/audit?target=``)."""


def render_item_actions(entries: list[AuditEntry], *, when: bool = True) -> Text:
    """An item's operator actions, oldest first, one line each: when (unless ``when`` is
    False: the takeover screen's compact lines sit under a timed transcript), who, what,
    outcome, reason (the item's own timeline; the audit screen has every item's)."""
    out = Text("Operator actions", style="bold")
    if not entries:
        out.append(": none yet", style="dim")
        return out
    out.append("\n")
    for e in entries:
        out.append(inert(f"{_when(e)}  ") if when else "")
        out.append(inert(f"{_who(e)}  {e.action}  ", multiline=False))
        out.append(_outcome(e))
        out.append(f"  {inert(e.reason, multiline=False)}\n" if e.reason else "\n")
    out.rstrip()
    return out


class AuditScreen(FetchedScreen):
    """Every operator action, scrollable."""

    TITLE = "Audit"
    BINDINGS: ClassVar[list[BindingType]] = fetched_bindings("audit")

    def __init__(self, view: ConsoleView) -> None:
        super().__init__(view)
        self.entries: list[AuditEntry] = []

    def loading_text(self) -> str:
        return "audit: loading…"

    def failed_text(self, message: str) -> str:
        return f"audit: could not load: {message}"

    async def fetch(self) -> list[AuditEntry]:
        return await self.view.client.audit(AUDIT_SHOWN)

    def present(self, data: list[AuditEntry]) -> tuple[Text, Table | Text]:
        self.entries = data
        refused = sum(1 for e in data if e.outcome == "refused")
        line = Text.assemble(
            ("Audit trail", "bold"),
            f": {len(data)} action(s), {refused} refused, newest first · r refreshes · esc back",
        )
        return line, render_audit(data)
