"""Approvals (key ``3``): everything on the Inbox, grouped by kind — pull requests of every
kind, takeovers, uncertain refunds, held actions, handoffs — each group in the server's
order. The keys are the highlighted item's own, as on the Inbox."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.widgets import DataTable, Input, Label

from console.inbox_view import project_label, project_labels
from console.inert import inert_text
from console.layout import Column
from console.messages import InboxSeen
from console.models_inbox import InboxItem
from console.screens._inbox_keys import InboxKeysScreen
from console.screens._tables import add_columns, fit_columns, reconcile
from console.sla import due_cell, paint_row, sla_state
from console.state import age_text, matches
from console.widgets.footer import KeysFooter
from console.widgets.status_bar import StatusBar

GROUPS = (
    ("prs", "Pull requests", ("pr", "pr_blocked", "pr_stuck")),
    ("interruptions", "Takeovers", ("interruption",)),
    ("uncertain", "Uncertain refunds (did money move?)", ("uncertain",)),
    ("held", "Held actions (decide() asked)", ("action_approval",)),
    ("handoffs", "Handoffs", ("handoff",)),
    ("jobs", "Stopped jobs", ("job_dead",)),
)
"""Table id, title, and the Inbox kinds it lists; tab moves through them in this order."""
COLUMNS = (
    Column("id", 10, 1),
    Column("project", 10, 1),
    Column("title", 20, 6),
    Column("age", 5),
    Column("due", 8),
    Column("state", 14, 1),
)
"""``due``: the Inbox's time left before the item's deadline, or past it."""
STATE_STYLE = {
    "awaiting_human": "bold reverse red",
    "open": "bold red",
    "blocked": "bold red",
    "resultado_incerto": "bold yellow",
}


class ApprovalsScreen(InboxKeysScreen):
    """The Inbox by kind: one list per kind, the keys of the highlighted item."""

    TITLE = "Approvals"
    CSS_PATH = "approvals.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j", "cursor('down')", "Down", show=False, priority=True),
        Binding("k", "cursor('up')", "Up", show=False, priority=True),
        Binding("enter", "open", "Open", show=False),
        Binding("slash", "filter", "Filter"),
        Binding("escape", "clear_filter", "Clear filter", show=False),
    ]

    def compose(self) -> ComposeResult:
        """Status bar, one pane per kind, footer (the filter line comes with ``/``)."""
        yield StatusBar()
        with VerticalScroll(id="groups"):
            for table_id, title, _ in GROUPS:
                with Vertical(id=f"{table_id}-pane", classes="group"):
                    yield Label(title, id=f"{table_id}-title", classes="pane-title")
                    yield DataTable(id=table_id, cursor_type="row")
        yield KeysFooter()

    def on_mount(self) -> None:
        """Columns, subscriptions, and whatever the App already knows."""
        if not self.query("#prs"):
            return  # built in the background while the App quits: nothing was composed
        super().on_mount()
        self._filter = ""
        self._shown: dict[str, dict[str, tuple[object, ...]]] = {g: {} for g, _, _ in GROUPS}
        self._offered: tuple[str, ...] | None = None
        for table_id, _, _ in GROUPS:
            add_columns(self.query_one(f"#{table_id}", DataTable), COLUMNS)
        self.view.approvals_changed.subscribe(self, self._render_lists)
        self.view.clock_ticked.subscribe(self, self._tick)
        self._render_lists(None)
        self._focus_first()

    def on_screen_resume(self) -> None:
        """Catch up after another mode or a detail screen."""
        if not self.query("#prs"):
            return  # resumed while the App quits, never composed (see on_mount)
        super().on_screen_resume()
        self._render_lists(None)

    def fit(self, width: int) -> None:
        """Widen the columns once the tables have their new size."""
        self.call_after_refresh(self._fit)

    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self._filter = event.value
        self._render_lists(None)

    @on(Input.Submitted, "#filter")
    def _filter_done(self) -> None:
        self._focus_first()

    @on(DataTable.RowSelected)
    def _row_selected(self) -> None:
        self.action_open()

    @on(DataTable.RowHighlighted)
    def _row_highlighted(self) -> None:
        self._refresh_keys()

    def on_descendant_focus(self) -> None:
        """Another list took the focus: its highlighted item's keys."""
        self._refresh_keys()

    def action_cursor(self, direction: str) -> None:
        """``j``/``k`` in whichever list has focus."""
        if isinstance(self.focused, DataTable):
            getattr(self.focused, f"action_cursor_{direction}")()

    def action_open(self) -> None:
        """``enter``: the highlighted item's detail screen."""
        from console.screens.item_details import open_item

        if item := self.current_item():
            self.post_message(InboxSeen(frozenset({item.id})))
            open_item(self.app, self.view, item)

    async def action_filter(self) -> None:
        """``/``: filter every list."""
        box = await self.filter_box("filter every list (esc clears)")
        box.remove_class("hidden")
        box.focus()

    def action_clear_filter(self) -> None:
        """``esc``: clear and hide the filter."""
        self.hide_filter()
        self._filter = ""
        self._render_lists(None)
        self._focus_first()

    def current_item(self) -> InboxItem | None:
        """The highlighted item of the focused list (of the first list when none has focus)."""
        table = self.focused if isinstance(self.focused, DataTable) else None
        if table is None:
            table = next((t for t in self.query(DataTable).results(DataTable) if t.row_count), None)
        if table is None or table.row_count == 0 or not table.is_valid_row_index(table.cursor_row):
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        return next((i for i in self.view.inbox if i.id == key), None)

    def _focus_first(self) -> None:
        tables = list(self.query(DataTable).results(DataTable))
        target = next((t for t in tables if t.row_count), tables[0] if tables else None)
        if target is not None:
            target.focus()

    def _fit(self) -> None:
        for table in self.query(DataTable).results(DataTable):
            fit_columns(table, COLUMNS, table.scrollable_content_region.width)

    def _refresh_keys(self) -> None:
        item = self.current_item()
        offered = (item.id, *(a.name for a in item.actions)) if item else ()
        if offered != self._offered:
            self._offered = offered
            self.refresh_bindings()

    def _tick(self, _: object) -> None:
        if self.is_current:
            self._render_lists(None)

    def _render_lists(self, _: object) -> None:
        inbox, q = self.view.inbox, self._filter
        labels = project_labels(inbox)
        for table_id, title, kinds in GROUPS:
            items = [
                i
                for i in inbox
                if i.kind in kinds
                and matches(q, i.target_id, i.title, i.detail, i.state, i.kind, i.project_name)
            ]
            rows = [(i.id, self._cells(i, labels)) for i in items]
            table = self.query_one(f"#{table_id}", DataTable)
            reconcile(table, self._shown[table_id], rows, [c.key for c in COLUMNS])
            self.query_one(f"#{table_id}-title", Label).update(f"{title} ({len(items)})")
            self.query_one(f"#{table_id}-pane").set_class(not items, "-empty")
        self._refresh_keys()

    def _cells(self, item: InboxItem, labels: dict[str, str]) -> tuple[object, ...]:
        ident = item.target_id if item.kind != "interruption" else f"#{item.target_id}"
        kind = f" {item.pr_kind}" if item.pr_kind else ""
        now = self.view.now()
        cells = (
            inert_text(ident + kind),
            inert_text(project_label(item, labels)),
            inert_text(item.title),
            age_text(item.since, now, item.age_s),
            due_cell(item, now),
            Text(item.state, style=STATE_STYLE.get(item.state, "dim")),
        )
        return paint_row(cells, sla_state(item, now))
