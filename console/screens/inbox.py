"""Inbox (key ``2``): everything waiting for a human in one list, most urgent first
(the server's order), with a detail screen per kind behind ``enter``."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.widgets import DataTable, Label, Static

from console.inbox_view import (
    needs_attention,
    next_attention,
    project_label,
    project_labels,
    session_label,
)
from console.inert import inert, inert_text
from console.layout import Column
from console.messages import InboxSeen
from console.models_inbox import InboxItem
from console.screens._inbox_keys import InboxKeysScreen
from console.screens._tables import add_columns, fit_columns, reconcile
from console.sla import due_cell, due_text, paint_row, sla_state
from console.state import age_text
from console.widgets.footer import KeysFooter
from console.widgets.status_bar import StatusBar

COLUMNS = (
    Column("new", 3),
    Column("kind", 11),
    Column("project", 9, 1),
    Column("session", 7),
    Column("title", 11, 6),
    Column("age", 4),
    Column("due", 8),
    Column("state", 10, 1),
)
"""Minimum widths fill 80 columns; a wider terminal gives the rest mostly to the title.
The highlighted item's full text is shown under the list. ``due``: time left before its
deadline, or past it (``4m left``, ``12s over``)."""
KIND_LABEL = {
    "pr": "PR",
    "pr_blocked": "PR blocked",
    "pr_stuck": "PR stuck",
    "job_dead": "job stopped",
    "action_approval": "held action",
    "handoff": "handoff",
    "interruption": "takeover",
    "uncertain": "uncertain",
}
KIND_STYLE = {
    "interruption": "bold red",
    "uncertain": "bold yellow",
    "pr_stuck": "bold magenta",
    "job_dead": "bold magenta",
    "action_approval": "bold cyan",
    "pr": "bold",
    "pr_blocked": "red",
    "handoff": "green",
}


def kind_text(item: InboxItem) -> Text:
    """``PR dev`` / ``takeover``: the kind, and the PR's kind for PRs."""
    label = KIND_LABEL.get(item.kind, item.kind)
    if item.pr_kind:
        label = f"{label} {item.pr_kind}"
    return inert_text(label, KIND_STYLE.get(item.kind, ""))


class InboxScreen(InboxKeysScreen):
    """One list of what waits on people; keys act on the highlighted item."""

    TITLE = "Inbox"
    CSS_PATH = "inbox.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "open", "Open"),
        Binding("n", "next_attention", "Next", tooltip="next item that needs you"),
        # Priority: the App runs j/k as the key arrives, not after it bubbled up from the
        # table through its pane and the screen, one message queue per hop.
        Binding("j", "cursor('down')", "Down", show=False, priority=True),
        Binding("k", "cursor('up')", "Up", show=False, priority=True),
    ]

    def compose(self) -> ComposeResult:
        """Status bar, the list, the highlighted item's full text, footer."""
        yield StatusBar()
        yield Static("", id="inbox-problem", classes="hidden")
        with Vertical(id="inbox-pane"):
            yield Label("Inbox — what waits on you, most urgent first", classes="pane-title")
            yield DataTable(id="inbox", cursor_type="row")
        yield Static("", id="item-detail")
        yield KeysFooter()

    def on_mount(self) -> None:
        """Columns, subscriptions, and whatever the App already knows."""
        if not self.query("#inbox"):
            return  # built in the background while the App quits: nothing was composed
        super().on_mount()
        self._shown: dict[str, tuple[object, ...]] = {}
        self._offered: tuple[str, ...] | None = None
        add_columns(self.query_one("#inbox", DataTable), COLUMNS)
        self.view.approvals_changed.subscribe(self, self._render_list)
        self.view.clock_ticked.subscribe(self, self._tick)
        self._render_list(None)
        self.query_one("#inbox", DataTable).focus()

    def on_screen_resume(self) -> None:
        """Back on the Inbox: show what changed meanwhile."""
        if not self.query("#inbox"):
            return  # resumed while the App quits, never composed (see on_mount)
        super().on_screen_resume()
        self._render_list(None)

    @on(DataTable.RowHighlighted, "#inbox")
    def _row_highlighted(self) -> None:
        self._show_detail()
        self._refresh_keys()

    @on(DataTable.RowSelected, "#inbox")
    def _row_selected(self) -> None:
        self.action_open()

    def fit(self, width: int) -> None:
        """Widen the columns once the table has its new size."""
        self.call_after_refresh(self._fit)

    def action_cursor(self, direction: str) -> None:
        """``j``/``k``."""
        getattr(self.query_one("#inbox", DataTable), f"action_cursor_{direction}")()

    def action_open(self) -> None:
        """``enter``: the item's detail screen."""
        from console.screens.item_details import open_item

        if item := self.current_item():
            self.post_message(InboxSeen(frozenset({item.id})))
            open_item(self.app, self.view, item)

    def action_next_attention(self) -> None:
        """``n``: the next item (after the highlighted one) whose next move is a human's."""
        item = self.current_item()
        target = next_attention(self.view.inbox, item.id if item else None)
        if target is None:
            self.notify("Nothing needs you right now", timeout=2)
            return
        table = self.query_one("#inbox", DataTable)
        table.move_cursor(row=table.get_row_index(target), animate=False)

    def current_item(self) -> InboxItem | None:
        """The highlighted item."""
        table = self.query_one("#inbox", DataTable)
        if table.row_count == 0 or not table.is_valid_row_index(table.cursor_row):
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        return next((i for i in self.view.inbox if i.id == key), None)

    def _fit(self) -> None:
        table = self.query_one("#inbox", DataTable)
        fit_columns(table, COLUMNS, table.scrollable_content_region.width)

    def _tick(self, _: object) -> None:
        if self.is_current:
            self._render_list(None)

    def _render_list(self, _: object) -> None:
        app = self.view
        problem = self.query_one("#inbox-problem", Static)
        problem.update(inert_text(app.inbox_problem, multiline=True))
        problem.set_class(not app.inbox_problem, "hidden")
        labels = project_labels(app.inbox)
        rows = [(item.id, self._cells(item, labels)) for item in app.inbox]
        reconcile(self.query_one("#inbox", DataTable), self._shown, rows, [c.key for c in COLUMNS])
        self._show_detail()
        self._refresh_keys()

    def _refresh_keys(self) -> None:
        # Redrawing the footer costs more than moving the cursor: only when the keys differ.
        item = self.current_item()
        offered = tuple(a.name for a in item.actions) if item else ()
        if offered != self._offered:
            self._offered = offered
            self.refresh_bindings()

    def _cells(self, item: InboxItem, labels: dict[str, str]) -> tuple[object, ...]:
        new = self.view.inbox_is_new(item)
        state_style = "bold reverse red" if needs_attention(item) else "dim"
        now = self.view.now()
        cells = (
            Text("●" if new else "", style="bold yellow"),
            kind_text(item),
            inert_text(project_label(item, labels)),
            inert_text(session_label(item.session_id), "dim"),
            inert_text(item.title, "bold" if new else ""),
            age_text(item.since, now, item.age_s),
            due_cell(item, now),
            Text(item.state, style=state_style),
        )
        return paint_row(cells, sla_state(item, now))

    def _show_detail(self) -> None:
        item = self.current_item()
        box = self.query_one("#item-detail", Static)
        if item is None:
            box.update(Text("Nothing waits on you.", style="dim"), layout=False)
            return
        due = (
            ("  due ", "dim"),
            inert(item.due_at or ""),
            (f" ({due_text(item, self.view.now())})", "dim"),
        )
        box.update(
            Text.assemble(
                (inert(item.title), "bold"),
                "\n",
                (inert(item.detail), ""),
                ("  since ", "dim"),
                inert(item.since),
                *(due if item.due_at else ()),
            ),
            layout=False,
        )
