"""``CadenciaConsole``: the operator console App, and the factories that build and run it.

The App owns the data (roster, approvals, the event cursor) and the one worker that
follows the backend's event stream; screens subscribe to its signals and diff their
widgets by key. Importing this module starts nothing (STYLE rule 2).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import ClassVar

from textual import work
from textual.app import App
from textual.binding import Binding, BindingType
from textual.notifications import SeverityLevel
from textual.signal import Signal
from textual.worker import Worker

from console.actions import ActionsMixin
from console.actions_agents import AgentActionsMixin
from console.actions_inbox import InboxActionsMixin
from console.actions_takeover import TakeoverActionsMixin
from console.client import ConsoleClient
from console.commands import ConsoleCommands
from console.config import ConsoleSettings
from console.exceptions import ApiError
from console.feed import AUDIT, FeedLine, from_event
from console.inbox_state import InboxStateMixin
from console.inert import inert
from console.models import Approvals, RosterEntry, StreamEvent
from console.models_operators import Role
from console.modes import SCREEN_CSS, ModesMixin
from console.screens.approvals import ApprovalsScreen
from console.screens.help import HelpScreen, binding_rows
from console.screens.inbox import InboxScreen
from console.screens.team import TeamScreen
from console.snapshots import PERSISTENT_TOAST_S as PERSISTENT_TOAST_S  # re-exported
from console.snapshots import SnapshotsMixin
from console.state import (
    awaiting_counts,
    inbox_awaiting_counts,
    needs_approvals_refetch,
    needs_inbox_refetch,
    needs_roster_refetch,
    touched_items,
)
from console.stream import FEED_TAIL as FEED_TAIL  # re-exported
from console.stream import StreamMixin
from console.takeover import Outcome

FLUSH_INTERVAL_S = 0.1
"""Events are applied to widgets in batches at most this often: bursts cost one redraw."""


class CadenciaConsole(
    ActionsMixin,
    AgentActionsMixin,
    TakeoverActionsMixin,
    InboxActionsMixin,
    InboxStateMixin,
    SnapshotsMixin,
    StreamMixin,
    ModesMixin,
    App[int],
):
    """Keyboard-driven console for on-call operators."""

    TITLE = "Cadência Ops"
    CSS_PATH = SCREEN_CSS
    CSS = """
    Screen { layers: base overlay; }
    #too-small {
        display: none; dock: top; layer: overlay; width: 100%; height: 100%;
        content-align: center middle; text-align: center; text-style: bold;
        background: $error-darken-3; color: $text;
    }
    Screen.-too-small #too-small { display: block; }
    """
    MODES = {
        "team": TeamScreen,
        "inbox": InboxScreen,
        "approvals": ApprovalsScreen,
    }
    DEFAULT_MODE = "team"
    COMMANDS = App.COMMANDS | {ConsoleCommands}
    HORIZONTAL_BREAKPOINTS = [  # type: ignore[misc]
        (0, "-narrow"),
        (110, "-wide"),
        (160, "-xwide"),
    ]
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("1", "show('team')", "Team"),
        Binding("2", "show('inbox')", "Inbox"),
        Binding("3", "show('approvals')", "Approvals"),
        Binding("question_mark", "help", "Help"),
        # Declaring any command_palette binding stops Textual adding its ctrl+p one, so
        # both keys are named here; ctrl+p has priority (it types nothing in an Input).
        Binding("ctrl+p", "command_palette", "Palette", show=False, priority=True),
        Binding("colon", "command_palette", "Palette", show=False),
        Binding("r", "refresh", "Refresh"),
        Binding("space", "toggle_pause", "Pause"),
        Binding("ctrl+q", "quit", "Quit", priority=True),
    ]

    def __init__(
        self,
        settings: ConsoleSettings,
        *,
        client: ConsoleClient | None = None,
        now: Callable[[], datetime] | None = None,
    ) -> None:
        super().__init__()
        self.settings = settings
        self.client = client or ConsoleClient(settings.url, settings.token)
        self.operator = settings.operator
        self.readonly = settings.readonly
        self.role: Role | None = None  # the token's role (GET /api/me); a viewer is read-only
        self.now = now or (lambda: datetime.now(UTC))
        """Wall clock for "waiting since" ages (frozen in snapshot tests)."""
        self.roster: dict[str, RosterEntry] = {}
        self.approvals = Approvals()
        self._init_inbox()
        self.last_event_id: int | None = None
        self.connection = "connecting"
        self.stale_seconds = 0
        self.paused = False
        self.paused_count = 0
        self.stream_connects = 0
        """How many times the stream (re)opened — tests and the bench watch it."""
        self.contract_errors: dict[str, tuple[str, str]] = {}
        """Route → (field, what was wrong) for every response the console could not read;
        a route's entry goes when the route answers well again (refresh with ``r``)."""
        self.outcomes: dict[str, Outcome] = {}
        """Item key → the real outcome of the operator's last action on it (shown on screen)."""
        self._pending_feed: list[FeedLine] = []
        self._touched: set[str] = set()
        self._roster_dirty = False
        self._approvals_dirty = False
        self._refetch_roster = False
        self._refetch_approvals = False
        self._refetching: Worker[None] | None = None
        self.roster_changed: Signal[None] = Signal(self, "roster_changed")
        self.approvals_changed: Signal[None] = Signal(self, "approvals_changed")
        """Published after Approvals *and* the Inbox were refetched (they move together)."""
        self.feed_appended: Signal[list[FeedLine]] = Signal(self, "feed_appended")
        self.status_changed: Signal[None] = Signal(self, "status_changed")
        self.item_changed: Signal[str] = Signal(self, "item_changed")
        """Published with ``"pr:<id>"``, ``"int:<id>"``, ``"approval:<id>"``, ``"task:<id>"``,
        ``"handoff:<id>"`` (or ``"*"`` on ``r``) when a detail screen should refetch."""
        self.conversation_changed: Signal[str] = Signal(self, "conversation_changed")
        """Published with a conversa id when an event says it changed (a message, a
        delivery, a takeover): the takeover screen refetches it."""
        self.ready = asyncio.Event()
        """Set once the first snapshots and backlog are rendered."""

    def on_mount(self) -> None:
        """Load snapshots and backlog, then follow the stream."""
        self.set_interval(FLUSH_INTERVAL_S, self._flush_pending)
        self.set_interval(1.0, self._tick)
        self._bootstrap()
        self.learn_role()
        self.prebuild_when_ready()

    async def on_unmount(self) -> None:
        """Release the HTTP pool."""
        await self.client.aclose()

    # -- actions -----------------------------------------------------------------------

    async def action_show(self, mode: str) -> None:
        """Jump to a top-level screen (keeps each screen's state)."""
        if self.current_mode != mode:
            await self.switch_mode(mode)
        else:
            # Already there: drop detail screens pushed on top.
            while len(self.screen_stack) > 1:
                self.pop_screen()

    def action_help(self) -> None:
        """List every binding of the current screen."""
        title = self.screen.title or self.current_mode
        self.push_screen(HelpScreen(title, binding_rows(self, self.screen)))

    def action_refresh(self) -> None:
        """Refetch roster, approvals and the Inbox now, and the detail screen on top."""
        self.notify("Refreshing…", timeout=1.5)
        self.refetch(roster=True, approvals=True)
        self.item_changed.publish("*")

    def action_toggle_pause(self) -> None:
        """Freeze the screens (events keep being received and are applied on resume)."""
        self.paused = not self.paused
        if not self.paused:
            self.paused_count = 0
            self._flush_pending()
        self.notify("Live updates paused" if self.paused else "Live updates resumed", timeout=2)
        self.status_changed.publish(None)

    # -- workers -----------------------------------------------------------------------

    @work(group="refetch", exit_on_error=False)
    async def _refetch_worker(self) -> None:
        # One fetch in flight at a time; what is asked meanwhile is fetched right after it.
        # (A newer refetch used to cancel the one in flight: under steady traffic, with a
        # flush every 100 ms and a roster that takes longer than that to answer, no fetch
        # ever finished and the roster froze, while the backend kept computing each one.)
        while self._refetch_roster or self._refetch_approvals:
            roster, approvals = self._refetch_roster, self._refetch_approvals
            self._refetch_roster = self._refetch_approvals = False
            try:
                await self._load_snapshots(roster=roster, approvals=approvals)
            except ApiError as exc:
                self.log.warning(f"refetch failed: {exc.message}")
                self._flush_pending()  # what did load (or report) is shown
                return
            self._flush_pending()

    # -- public ------------------------------------------------------------------------

    def refetch(self, *, roster: bool = False, approvals: bool = False) -> None:
        """Fetch fresh snapshots in an App-owned worker (coalesced with the one in flight)."""
        self._refetch_roster |= roster
        self._refetch_approvals |= approvals
        idle = self._refetching is None or self._refetching.is_finished
        if idle and (self._refetch_roster or self._refetch_approvals):
            # Wishes left by a worker that ended just now are picked up by the next flush.
            self._refetching = self._refetch_worker()

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """Every toast of the console (screens' included): its words are often the
        backend's, so they are shown inert and never read as markup, whatever ``markup``."""
        super().notify(
            inert(message),
            title=inert(title, multiline=False),
            severity=severity,
            timeout=timeout,
            markup=False,
        )

    def add_feed_line(self, kind: str, text: str) -> None:
        """Put a console-side line (an operator action's result) in the feed."""
        ts = self.now().isoformat()
        self._pending_feed.append(FeedLine(self.last_event_id or 0, ts, kind, text))
        self._flush_pending()

    # -- private -----------------------------------------------------------------------

    def _on_event(self, event: StreamEvent) -> None:
        self.last_event_id = event.id
        self._pending_feed.append(from_event(event))
        if (
            event.type == "agent.status"
            and event.agent in self.roster
            and self.roster[event.agent].status != "paused"  # a turn ending does not resume it
        ):
            entry = self.roster[event.agent]
            update = {"status": str(event.payload.get("status", entry.status))}
            if "detail" in event.payload:
                update["detail"] = str(event.payload.get("detail") or "")
            self.roster[event.agent] = entry.model_copy(update=update)
            self._roster_dirty = True
        elif event.type == "agent.status" or needs_roster_refetch(event.type):
            self._refetch_roster = True
        if needs_approvals_refetch(event.type, event.payload) or needs_inbox_refetch(
            event.type, event.payload
        ):
            self._refetch_approvals = True
        self._touched |= touched_items(event.type, event.payload)
        if self.paused:
            self.paused_count += 1

    def _flush_pending(self) -> None:
        if self._refetch_roster or self._refetch_approvals:
            self.refetch()
        if self.paused:
            return
        if self._pending_feed:
            # The audit trail has its own screen; the feed keeps the actions' own events.
            batch, self._pending_feed = [x for x in self._pending_feed if x.kind not in AUDIT], []
            self.feed_appended.publish(batch)
        if self._roster_dirty:
            self._roster_dirty = False
            self.roster_changed.publish(None)
        if self._approvals_dirty:
            self._approvals_dirty = False
            self.approvals_changed.publish(None)
            self.status_changed.publish(None)
        if self._touched:
            touched, self._touched = self._touched, set()
            for key in sorted(touched):
                if key.startswith("conv:"):
                    self.conversation_changed.publish(key.removeprefix("conv:"))
                else:
                    self.item_changed.publish(key)

    def _tick(self) -> None:
        if self.connection in ("live", "stale"):
            quiet = time.monotonic() - self.client.last_line_at
            if quiet > self.settings.stale_after_s:
                self.stale_seconds = int(quiet)
                self._set_connection("stale")
            elif self.connection == "stale":
                self._set_connection("live")
        if self.paused:
            self.status_changed.publish(None)

    def _set_connection(self, state: str) -> None:
        if state != self.connection or state == "stale":
            self.connection = state
            self.status_changed.publish(None)

    def awaiting(self) -> tuple[int, int]:
        """(PRs awaiting a human, unclaimed interruptions) for the header: from the Inbox
        (infra, dev and ADR PRs), or from Approvals on a backend without the Inbox."""
        if self.inbox_problem:
            return awaiting_counts(self.approvals)
        return inbox_awaiting_counts(self.inbox)


def make_console(settings: ConsoleSettings, **kwargs: object) -> CadenciaConsole:
    """Build (not run) a console for ``settings``; ``kwargs`` go to the App (tests)."""
    return CadenciaConsole(settings, **kwargs)  # type: ignore[arg-type]


def run_console(
    url: str,
    token: str | None = None,
    readonly: bool = False,
    operator: str | None = None,
    *,
    bell: bool = False,
) -> int:
    """Run the console in this terminal until the operator quits; return an exit code."""
    fields: dict[str, object] = {"url": url, "token": token, "readonly": readonly, "bell": bell}
    if operator:
        fields["operator"] = operator
    app = make_console(ConsoleSettings.model_validate(fields))
    return int(app.run() or 0)
