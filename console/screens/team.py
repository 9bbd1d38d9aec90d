"""Team (key ``1``): the live roster beside the live activity feed.

``p`` pauses or resumes the selected agent (asks ``y``/No first); ``t`` or ``enter`` opens
its recent turns.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import DataTable, Input, Label, Static

from console.feed import FeedLine
from console.inert import inert_assemble, inert_text
from console.layout import Column
from console.models import RosterEntry
from console.screens._base import ConsoleScreen
from console.screens._tables import add_columns, fit_columns
from console.state import roster_matches
from console.widgets.activity_feed import ActivityFeed
from console.widgets.footer import KeysFooter
from console.widgets.status_bar import StatusBar

STATUS_STYLE = {
    "working": "bold green",
    "idle": "dim",
    "blocked": "bold red",
    "paused": "bold yellow",
    "error": "bold white on red",
    "offline": "dim strike",
}
STATUS_MARK = {"blocked": "■", "paused": "‖", "error": "✖"}
"""Statuses that need a person read apart without colour too (default ``●``)."""
HIGHLIGHT_S = 3.0
"""How long a changed status stays highlighted."""

COLUMNS = (
    Column("agent", 10, 1),
    Column("role", 12, 1),
    Column("status", 10),
    Column("model", 10, 1),
    Column("doing", 12, 8),
    Column("tokens", 6),
)
"""The minimums fit the roster's pane at 120 columns (72 cells) and at 80; what is left
goes mostly to what each agent is doing. Whatever a column cuts (a long role, the whole
"doing", the autonomy) is shown in full under the table for the highlighted agent."""


class TeamScreen(ConsoleScreen):
    """Who is working on what, and everything that happens, as it happens."""

    TITLE = "Team"
    CSS_PATH = "team.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        # Priority: the App runs j/k as the key arrives, instead of after the key has
        # bubbled up from the table through both panes and the screen, one message queue
        # per hop. The filter box still gets its letters: Textual leaves out the bindings
        # of keys a focused Input consumes.
        Binding("j", "cursor_down", "Down", show=False, priority=True),
        Binding("k", "cursor_up", "Up", show=False, priority=True),
        Binding("slash", "filter", "Filter"),
        Binding("escape", "clear_filter", "Clear filter", show=False),
        Binding("f", "toggle_focus", "Feed/roster", tooltip="move between the roster and the feed"),
        Binding(
            "p", "toggle_agent_pause", "Pause/resume", tooltip="the highlighted agent (asks y/n)"
        ),
        # enter opens the turns too; the footer has no room left for t at 120 columns.
        Binding("t", "turns", "Agent's turns", show=False),
        Binding("tab", "app.focus_next", "Next pane", show=False),
    ]

    def compose(self) -> ComposeResult:
        """Status bar, roster | feed, footer (the filter line comes with ``/``)."""
        yield StatusBar()
        with Horizontal(id="body"):
            with Vertical(id="roster-pane"):
                yield Label("Team", classes="pane-title")
                yield DataTable(id="roster", cursor_type="row", zebra_stripes=True)
                yield Static("", id="agent-detail")
            with Vertical(id="feed-pane"):
                yield Label("Activity", classes="pane-title")
                yield ActivityFeed(max_lines=self.view.settings.feed_max_lines, id="feed")
        yield KeysFooter()

    def on_mount(self) -> None:
        """Columns, subscriptions, and whatever the App already knows."""
        super().on_mount()
        table = self.query_one("#roster", DataTable)
        add_columns(table, COLUMNS)
        self._filter = ""
        self._shown: dict[str, RosterEntry] = {}
        app = self.view
        app.roster_changed.subscribe(self, self._render_roster)
        app.feed_appended.subscribe(self, self._append_feed)
        self._render_roster(None)
        table.focus()

    def on_screen_resume(self) -> None:
        """Catch up on anything published while another mode was showing."""
        super().on_screen_resume()
        self._render_roster(None)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Read-only: ``p`` stays visible but dimmed (None), and says why when pressed."""
        if action == "toggle_agent_pause" and self.view.actions.readonly:
            return None
        return True

    def on_key(self, event: events.Key) -> None:
        """A dimmed ``p`` still answers, so the operator learns why nothing happened."""
        if event.key == "p" and self.view.actions.readonly and not isinstance(self.focused, Input):
            event.stop()
            self.view.actions.refuse_if_readonly("Pause agent")

    @on(DataTable.RowHighlighted, "#roster")
    def _row_highlighted(self) -> None:
        self._show_agent()

    @on(DataTable.RowSelected, "#roster")
    def _row_selected(self) -> None:
        self.action_turns()

    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self._filter = event.value
        self._render_roster(None)

    @on(Input.Submitted, "#filter")
    def _filter_done(self) -> None:
        self.query_one("#roster", DataTable).focus()

    def fit(self, width: int) -> None:
        """Widen the roster's columns once the pane has its new size."""
        self.call_after_refresh(self._fit_roster)

    def _fit_roster(self) -> None:
        table = self.query_one("#roster", DataTable)
        fit_columns(table, COLUMNS, table.scrollable_content_region.width)

    def action_cursor_down(self) -> None:
        """``j``."""
        self._focused_scroller("down")

    def action_cursor_up(self) -> None:
        """``k``."""
        self._focused_scroller("up")

    async def action_filter(self) -> None:
        """``/``: filter the roster."""
        box = await self.filter_box("filter agents (esc clears)")
        box.remove_class("hidden")
        box.focus()

    def action_clear_filter(self) -> None:
        """``esc``: clear and hide the filter."""
        self.hide_filter()
        self.query_one("#roster", DataTable).focus()

    def action_toggle_agent_pause(self) -> None:
        """``p``: pause the highlighted agent, or resume it when it is paused (asks first,
        naming it). From the feed it does nothing but say where the agent is chosen."""
        if isinstance(self.focused, ActivityFeed):
            self.query_one("#roster", DataTable).focus()
            self.notify("p acts on the agent highlighted on the roster: choose it there, then p")
            return
        if entry := self._selected():
            self.view.actions.pause_agent(entry)

    def action_turns(self) -> None:
        """``t`` / ``enter``: the selected agent's recent turns."""
        from console.screens.agent_turns import AgentTurnsScreen

        if entry := self._selected():
            self.app.push_screen(AgentTurnsScreen(self.view, entry.id))

    def selected_agent(self) -> RosterEntry | None:
        """The roster row under the cursor, if any."""
        table = self.query_one("#roster", DataTable)
        if table.row_count == 0 or not table.is_valid_row_index(table.cursor_row):
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        return self._shown.get(key or "")

    def _selected(self) -> RosterEntry | None:
        entry = self.selected_agent()
        if entry is None:
            self.notify("Select an agent first", severity="warning", timeout=3)
        return entry

    def action_toggle_focus(self) -> None:
        """``f``: the feed (then j/k/pgup scroll; G follows the tail again), and back."""
        if isinstance(self.focused, ActivityFeed):
            self.query_one("#roster", DataTable).focus()
        else:
            self.query_one(ActivityFeed).focus()

    def _focused_scroller(self, direction: str) -> None:
        focused = self.focused
        if isinstance(focused, DataTable):
            getattr(focused, f"action_cursor_{direction}")()
        elif isinstance(focused, ActivityFeed):
            getattr(focused, f"action_scroll_{direction}")()

    def _append_feed(self, lines: list[FeedLine]) -> None:
        self.query_one(ActivityFeed).append_lines(lines)

    def _render_roster(self, _: object) -> None:
        """Diff the table against the App's roster by agent id: no clear, no flicker."""
        table = self.query_one("#roster", DataTable)
        wanted = {k: e for k, e in self.view.roster.items() if roster_matches(self._filter, e)}
        for gone in [k for k in self._shown if k not in wanted]:
            table.remove_row(gone)
            del self._shown[gone]
        for key, entry in wanted.items():
            old = self._shown.get(key)
            if old is None:
                table.add_row(*self._cells(entry), key=key)
            elif old != entry:
                changed_status = old.status != entry.status
                for column, value in zip(
                    (c.key for c in COLUMNS), self._cells(entry, changed_status), strict=True
                ):
                    table.update_cell(key, column, value)
                if changed_status:
                    self.set_timer(HIGHLIGHT_S, lambda k=key: self._unhighlight(k))
            self._shown[key] = entry
        self._show_agent()

    def _show_agent(self) -> None:
        """The highlighted agent in full: what a narrow column cuts is read here."""
        entry = self.selected_agent()
        box = self.query_one("#agent-detail", Static)
        if entry is None:
            box.update("", layout=False)
            return
        autonomy = entry.autonomy_text()
        box.update(
            inert_assemble(
                (entry.id, "bold"),
                f" · {entry.role} · ",
                (entry.status, STATUS_STYLE.get(entry.status, "")),
                f" · {entry.model or '-'} · tokens {entry.tokens_text()}",
                ("\ndoing: ", "dim"),
                entry.detail or "—",
                ("\nautonomy: " if autonomy else "", "dim"),
                autonomy,
            ),
            layout=False,
        )

    def _unhighlight(self, key: str) -> None:
        entry = self._shown.get(key)
        if entry is not None:
            table = self.query_one("#roster", DataTable)
            table.update_cell(key, "status", self._status_cell(entry.status, False))

    @staticmethod
    def _status_cell(status: str, highlight: bool) -> Text:
        style = STATUS_STYLE.get(status, "")
        if highlight:
            style += " reverse"
        return inert_text(f"{STATUS_MARK.get(status, '●')} {status}", style)

    def _cells(self, entry: RosterEntry, highlight: bool = False) -> tuple[object, ...]:
        return (
            inert_text(entry.id, "bold"),
            inert_text(entry.role),
            self._status_cell(entry.status, highlight),
            inert_text(entry.model or "-"),
            inert_text(entry.detail),
            Text(entry.tokens_text(), justify="right"),
        )
