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
from textual.widgets import DataTable, Input, Label

from console.feed import FeedLine
from console.inert import inert_text
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
    Column("agent", 12, 1),
    Column("role", 16, 1),
    Column("status", 10),
    Column("model", 13, 1),
    Column("doing", 16, 6),
    Column("tokens", 6),
    Column("autonomy", 8, 1),
)
"""Minimum widths hold the usual roles and models ("customer service", "deterministic"); a
wider terminal gives the rest mostly to what each agent is doing (an error's reason, who
paused it). Tokens are today's in + out. Autonomy (often empty) comes last: a pane narrower
than the minimums scrolls it off first."""


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
        Binding("f", "focus_feed", "Feed"),
        Binding("p", "toggle_agent_pause", "Pause/resume", tooltip="the agent (asks y/n)"),
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
            with Vertical(id="feed-pane"):
                yield Label("Activity", classes="pane-title")
                yield ActivityFeed(max_lines=self.console.settings.feed_max_lines, id="feed")
        yield KeysFooter()

    def on_mount(self) -> None:
        """Columns, subscriptions, and whatever the App already knows."""
        super().on_mount()
        table = self.query_one("#roster", DataTable)
        add_columns(table, COLUMNS)
        self._filter = ""
        self._shown: dict[str, RosterEntry] = {}
        app = self.console
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
        if action == "toggle_agent_pause" and self.console.readonly:
            return None
        return True

    def on_key(self, event: events.Key) -> None:
        """A dimmed ``p`` still answers, so the operator learns why nothing happened."""
        if event.key == "p" and self.console.readonly and not isinstance(self.focused, Input):
            event.stop()
            self.console.refuse_if_readonly("Pause agent")

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
        """``p``: pause the selected agent, or resume it when it is paused (asks first)."""
        if entry := self._selected():
            self.console.request_agent_pause(entry)

    def action_turns(self) -> None:
        """``t`` / ``enter``: the selected agent's recent turns."""
        from console.screens.agent_turns import AgentTurnsScreen

        if entry := self._selected():
            self.app.push_screen(AgentTurnsScreen(entry.id))

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

    def action_focus_feed(self) -> None:
        """``f``: focus the feed (then j/k/pgup scroll; G follows the tail again)."""
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
        wanted = {k: e for k, e in self.console.roster.items() if roster_matches(self._filter, e)}
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
            inert_text(entry.autonomy_text()),
        )
