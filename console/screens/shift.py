"""Shift (key ``4``): what is open for the next person — every Inbox item, the breached
ones first, and for each claimed takeover who holds it and for how long. The keys are the
highlighted item's own, so an operator going off shift releases their takeovers here
(``l``)."""

from __future__ import annotations

from datetime import datetime
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.widgets import DataTable, Label, Static

from console.inert import inert_text
from console.layout import Column
from console.messages import InboxSeen
from console.models import Interruption
from console.models_inbox import InboxItem
from console.screens._inbox_keys import InboxKeysScreen
from console.screens._tables import add_columns, fit_columns, reconcile
from console.screens.inbox import kind_text
from console.sla import breached_first, breached_ids, due_cell, paint_row, sla_state
from console.state import age_text, since_text
from console.widgets.footer import KeysFooter
from console.widgets.status_bar import StatusBar

COLUMNS = (
    Column("kind", 11),
    Column("title", 16, 6),
    Column("due", 8),
    Column("state", 9),
    Column("held by", 10, 1),
    Column("held for", 8),
)
"""``held for``: since the claim, or (``*``) since the takeover opened when the server
does not say when it was claimed."""
NO_CLAIM_TIME = (
    "* this server does not say when a takeover was claimed: the time shown is since it opened"
)


def _moment(stamp: str | None) -> datetime | None:
    try:
        moment = datetime.fromisoformat((stamp or "").replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else None


def holding(item: InboxItem, takeovers: dict[str, Interruption], now: datetime) -> tuple[str, str]:
    """(who holds ``item``, for how long) — blank unless it is a claimed takeover; the
    time ends in ``*`` when it is the takeover's age, not the claim's."""
    held = takeovers.get(item.target_id) if item.kind == "interruption" else None
    if held is None or held.status != "claimed":
        return "", ""
    claimed = _moment(held.claimed_at)
    if claimed is not None:
        return held.claimed_by or "?", since_text((now - claimed).total_seconds())
    return held.claimed_by or "?", age_text(item.since, now, item.age_s) + "*"


class ShiftScreen(InboxKeysScreen):
    """The handover list: what is open, what is late, who holds what."""

    TITLE = "Shift"
    CSS_PATH = "shift.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "open", "Open"),
        Binding("j", "cursor('down')", "Down", show=False, priority=True),
        Binding("k", "cursor('up')", "Up", show=False, priority=True),
    ]

    def compose(self) -> ComposeResult:
        """Status bar, the summary line, the list, the note, footer."""
        yield StatusBar()
        yield Static("", id="shift-summary")
        with Vertical(id="shift-pane"):
            yield Label("Shift — open for the next person, breached first", classes="pane-title")
            yield DataTable(id="shift", cursor_type="row")
        yield Static("", id="shift-note")
        yield KeysFooter()

    def on_mount(self) -> None:
        """Columns, subscriptions, and whatever the App already knows."""
        if not self.query("#shift"):
            return  # built in the background while the App quits: nothing was composed
        super().on_mount()
        self._shown: dict[str, tuple[object, ...]] = {}
        self._offered: tuple[str, ...] | None = None
        add_columns(self.query_one("#shift", DataTable), COLUMNS)
        self.view.approvals_changed.subscribe(self, self._render_list)
        self.view.clock_ticked.subscribe(self, self._tick)
        self._render_list(None)
        self.query_one("#shift", DataTable).focus()

    def on_screen_resume(self) -> None:
        """Back on the Shift screen: show what changed meanwhile."""
        if not self.query("#shift"):
            return
        super().on_screen_resume()
        self._render_list(None)

    @on(DataTable.RowHighlighted, "#shift")
    def _row_highlighted(self) -> None:
        self._refresh_keys()

    @on(DataTable.RowSelected, "#shift")
    def _row_selected(self) -> None:
        self.action_open()

    def fit(self, width: int) -> None:
        """Widen the columns once the table has its new size."""
        self.call_after_refresh(self._fit)

    def action_cursor(self, direction: str) -> None:
        """``j``/``k``."""
        getattr(self.query_one("#shift", DataTable), f"action_cursor_{direction}")()

    def action_open(self) -> None:
        """``enter``: the item's detail screen."""
        from console.screens.item_details import open_item

        if item := self.current_item():
            self.post_message(InboxSeen(frozenset({item.id})))
            open_item(self.app, self.view, item)

    def current_item(self) -> InboxItem | None:
        """The highlighted item."""
        table = self.query_one("#shift", DataTable)
        if table.row_count == 0 or not table.is_valid_row_index(table.cursor_row):
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        return next((i for i in self.view.inbox if i.id == key), None)

    def _fit(self) -> None:
        table = self.query_one("#shift", DataTable)
        fit_columns(table, COLUMNS, table.scrollable_content_region.width)

    def _tick(self, _: object) -> None:
        if self.is_current:
            self._render_list(None)

    def _refresh_keys(self) -> None:
        item = self.current_item()
        offered = (item.id, *(a.name for a in item.actions)) if item else ()
        if offered != self._offered:
            self._offered = offered
            self.refresh_bindings()

    def _render_list(self, _: object) -> None:
        now = self.view.now()
        takeovers = {str(i.id): i for i in self.view.approvals.interruptions}
        items = breached_first(self.view.inbox, now)
        rows = [(i.id, self._cells(i, takeovers, now)) for i in items]
        reconcile(self.query_one("#shift", DataTable), self._shown, rows, [c.key for c in COLUMNS])
        held = [holding(i, takeovers, now) for i in items]
        holders: dict[str, int] = {}
        for who, _ in held:
            if who:
                holders[who] = holders.get(who, 0) + 1
        late, claimed = len(breached_ids(items, now)), sum(holders.values())
        summary = Text.assemble(
            (f"{len(items)} open", "bold"),
            " · ",
            (f"{late} breached", "bold reverse red" if late else "dim"),
            " · ",
            f"{claimed} claimed takeover{'' if claimed == 1 else 's'}",
        )
        if holders:
            who = ", ".join(f"{w} {n}" for w, n in sorted(holders.items()))
            summary.append_text(inert_text(f" ({who})"))
        self.query_one("#shift-summary", Static).update(summary)
        aged = any(t.endswith("*") for _, t in held)
        self.query_one("#shift-note", Static).update(NO_CLAIM_TIME if aged else "")
        self._refresh_keys()

    def _cells(
        self, item: InboxItem, takeovers: dict[str, Interruption], now: datetime
    ) -> tuple[object, ...]:
        who, held = holding(item, takeovers, now)
        cells = (
            kind_text(item),
            inert_text(item.title),
            due_cell(item, now),
            Text(item.state, style="dim"),
            inert_text(who, "bold"),
            held,
        )
        return paint_row(cells, sla_state(item, now))
