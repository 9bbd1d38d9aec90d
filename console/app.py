"""``CadenciaConsole``: the operator console App, and the factories that build and run it.

The App owns the data (roster, Approvals, the Inbox, the event cursor), the workers that
read the backend (the start, the SSE stream, refetches) and the :class:`OperatorActions`.
It hands all of it down to the screens it builds (:class:`console.view.ConsoleView`) and
hears back from them through messages (:mod:`console.messages`). Importing this module
starts nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from datetime import UTC, datetime
from functools import partial
from pathlib import Path, PurePath
from typing import ClassVar, cast

from textual import on, work
from textual.app import App
from textual.binding import Binding, BindingType
from textual.notifications import SeverityLevel
from textual.screen import Screen
from textual.signal import Signal
from textual.timer import Timer
from textual.worker import Worker

from console.client import ConsoleClient
from console.commands import ConsoleCommands
from console.config import ConsoleSettings
from console.exceptions import ApiError, AuthError, ContractError, NotFoundError
from console.feed import AUDIT, FeedLine, from_activity, from_event
from console.inbox_view import arrivals
from console.inert import inert
from console.messages import ActionReported, ContractBroken, InboxSeen
from console.models import Approvals, Connected, Malformed, Resync, RosterEntry, StreamEvent
from console.models_inbox import InboxItem
from console.operator_actions import OperatorActions
from console.screens.approvals import ApprovalsScreen
from console.screens.help import HelpScreen, binding_rows
from console.screens.inbox import InboxScreen
from console.screens.shift import ShiftScreen
from console.screens.team import TeamScreen
from console.sla import BreachWatch, breached_ids
from console.state import (
    awaiting_counts,
    backoff_delay,
    inbox_awaiting_counts,
    needs_approvals_refetch,
    needs_inbox_refetch,
    needs_roster_refetch,
    touched_items,
)
from console.takeover import Outcome

FLUSH_INTERVAL_S = 0.1
"""Events are applied to widgets in batches at most this often: bursts cost one redraw. The
timer runs only while something waits to be shown, so an idle console wakes for nothing."""
FEED_TAIL = 200
"""Feed lines loaded at start (the newest); the live stream follows from the last of them."""
PERSISTENT_TOAST_S = 24 * 3600.0
"""A toast that stays until the operator dismisses it (click), not 5 s."""
ROSTER_ROUTE = "GET /api/roster"
APPROVALS_ROUTE = "GET /api/approvals"
INBOX_ROUTE = "GET /api/inbox"
MODE_SCREENS = {
    "team": TeamScreen,
    "inbox": InboxScreen,
    "approvals": ApprovalsScreen,
    "shift": ShiftScreen,
}
"""The top-level screens (number keys), each built with the App as its view."""
SCREENS_DIR = Path(__file__).parent / "screens"
SCREEN_CSS: list[str | PurePath] = [
    SCREENS_DIR / name
    for name in (
        "team.tcss",
        "inbox.tcss",
        "approvals.tcss",
        "shift.tcss",
        "detail.tcss",
        "fetched.tcss",
    )
]
"""Every screen's stylesheet, read once at start: a screen's own ``CSS_PATH`` read on first
show re-parses the whole stylesheet and restyles every widget of every screen."""


class CadenciaConsole(App[int]):
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
        Binding("4", "show('shift')", "Shift"),
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
        self.actions = OperatorActions(
            self, self.client, settings.operator, readonly=settings.readonly
        )
        self.me: str | None = None
        self.now = now or (lambda: datetime.now(UTC))
        self.roster: dict[str, RosterEntry] = {}
        self.approvals = Approvals()
        self.inbox: list[InboxItem] = []
        """``GET /api/inbox``, most urgent first, as the server ordered it."""
        self.inbox_seen: set[str] = set()
        """Items the operator opened, or read on the list (it had the Inbox's focus)."""
        self.inbox_problem = ""
        """Why the Inbox could not be fetched (an older backend without the route)."""
        self.bells = 0
        """Bells rung for arrivals and new breaches (``--bell``); tests read it."""
        self.breached: set[str] = set()
        """Inbox items past their deadline by the console's clock (the header counts them)."""
        self._breaches = BreachWatch()
        self._inbox_known: set[str] | None = None
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
        self._flush_timer: Timer | None = None
        self.roster_changed: Signal[None] = Signal(self, "roster_changed")
        self.approvals_changed: Signal[None] = Signal(self, "approvals_changed")
        """Published after Approvals *and* the Inbox were refetched (they move together)."""
        self.feed_appended: Signal[list[FeedLine]] = Signal(self, "feed_appended")
        self.status_changed: Signal[None] = Signal(self, "status_changed")
        self.item_changed: Signal[str] = Signal(self, "item_changed")
        """Published with ``"pr:<id>"``, ``"int:<id>"``, ``"approval:<id>"``, ``"task:<id>"``,
        ``"handoff:<id>"`` (or ``"*"`` on ``r``) when a detail screen should refetch."""
        self.conversation_changed: Signal[str] = Signal(self, "conversation_changed")
        """Published with a conversa id when an event says it changed."""
        self.clock_ticked: Signal[None] = Signal(self, "clock_ticked")
        """Published every second: ages on screen move with the clock."""
        self.ready = asyncio.Event()
        """Set once the first snapshots and backlog are rendered."""
        for mode, screen in MODE_SCREENS.items():
            self.add_mode(mode, partial(screen, self))

    @property
    def operator(self) -> str:
        """Who the actions are sent as."""
        return self.actions.operator

    @property
    def readonly(self) -> bool:
        """A read-only console refuses every action (``--readonly``, or a viewer's token)."""
        return self.actions.readonly

    def on_mount(self) -> None:
        """Load snapshots and backlog, then follow the stream."""
        self.set_interval(1.0, self._tick)
        self._bootstrap()
        self.learn_role()
        self.prebuild_when_ready()

    async def on_unmount(self) -> None:
        """Release the HTTP pool."""
        await self.client.aclose()

    # -- messages from screens and actions ------------------------------------------------

    @on(InboxSeen)
    def _inbox_seen(self, message: InboxSeen) -> None:
        self.inbox_seen |= message.ids

    @on(ContractBroken)
    def _contract_broken(self, message: ContractBroken) -> None:
        self.report_contract_error(message.route, message.field, message.detail)

    @on(ActionReported)
    def _action_reported(self, message: ActionReported) -> None:
        if message.outcome is not None:
            self.outcomes[message.item_key] = message.outcome
        if message.feed is not None:
            self.add_feed_line(*message.feed)
        if message.roster:
            self.refetch(roster=True)
        else:
            self.item_changed.publish(message.item_key)
            self.refetch(approvals=True)

    # -- key actions ----------------------------------------------------------------------

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

    # -- what screens read ----------------------------------------------------------------

    def awaiting(self) -> tuple[int, int]:
        """(PRs awaiting a human, unclaimed interruptions) for the header: from the Inbox
        (infra, dev and ADR PRs), or from Approvals on a backend without the Inbox."""
        if self.inbox_problem:
            return awaiting_counts(self.approvals)
        return inbox_awaiting_counts(self.inbox)

    def breached_count(self) -> int:
        """How many Inbox items are past their deadline now."""
        return len(self.breached)

    def inbox_is_new(self, item: InboxItem) -> bool:
        """True while the operator has not opened ``item`` nor read it on the list."""
        return item.id not in self.inbox_seen

    def mode_screen(self, mode: str) -> Screen[object] | None:
        """The screen ``mode`` shows, once it is built (the same instance every time)."""
        stack = getattr(self, "_screen_stacks", {}).get(mode)
        return stack[0] if stack else None

    # -- state the App keeps --------------------------------------------------------------

    def refetch(self, *, roster: bool = False, approvals: bool = False) -> None:
        """Fetch fresh snapshots in an App-owned worker (coalesced with the one in flight)."""
        self._refetch_roster |= roster
        self._refetch_approvals |= approvals
        idle = self._refetching is None or self._refetching.is_finished
        if idle and (self._refetch_roster or self._refetch_approvals):
            self._refetching = self._refetch_worker()
        elif self._refetch_roster or self._refetch_approvals:
            self._flush_soon()  # a worker ending just now leaves them to the next flush

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
        """Put a console-side line (an action the server did not record) in the feed."""
        ts = self.now().isoformat()
        self._pending_feed.append(FeedLine(self.last_event_id or 0, ts, kind, text))
        self._flush_pending()

    def apply_inbox(self, items: list[InboxItem]) -> None:
        """Take a fresh Inbox; ring the bell once if something arrived since the last one
        or breached its deadline (an item arriving breached rings once, not twice)."""
        arrived = arrivals(self._inbox_known, items)
        self._inbox_known = {i.id for i in items}
        self.inbox = items
        self.inbox_problem = ""
        breached = self._watch_deadlines()
        if arrived or breached:
            self._ring()

    def _watch_deadlines(self) -> set[str]:
        """Recount the breached items by the clock; the ones never reported before."""
        now = self.now()
        current = breached_ids(self.inbox, now)
        if current != self.breached:
            self.breached = current
            self.status_changed.publish(None)
        return self._breaches.new(self.inbox, now)

    def _ring(self) -> None:
        if self.settings.bell:
            self.bells += 1
            self.bell()

    def report_contract_error(self, route: str, field: str, detail: str) -> None:
        """Show a response the console cannot read: in the status bar and in a toast that
        stays until dismissed, naming the route and the field. Everything else goes on."""
        if self.contract_errors.get(route) == (field, detail):
            return  # already on screen; a refetch loop must not stack toasts
        self.contract_errors[route] = (field, detail)
        self.notify(
            f"{route}\nfield {field}: {detail}\n(click, or : → Dismiss notifications)",
            title="Backend sent data this console cannot read",
            severity="error",
            timeout=PERSISTENT_TOAST_S,
        )
        self.status_changed.publish(None)

    # -- workers ----------------------------------------------------------------------------

    @work(group="role", exclusive=True, exit_on_error=False)
    async def learn_role(self) -> None:
        """Ask the backend who the token names: the header shows that operator, actions go
        out in its name unless one was given, and a viewer gets the read-only console."""
        try:
            me = await self.client.me()
        except AuthError as exc:
            self._token_refused(exc)
            return
        except ApiError:
            return  # unreachable for now: the bootstrap's own notice says so
        self.me = me.name
        self.actions.role = me.role
        if "operator" not in self.settings.model_fields_set:
            self.actions.operator = me.name
        if me.role == "viewer" and not self.actions.readonly:
            self.actions.readonly = True
            self.screen.refresh_bindings()
        self.status_changed.publish(None)

    @work(group="bootstrap", exclusive=True, exit_on_error=False)
    async def _bootstrap(self) -> None:
        # The feed starts from the log's tail (one bounded read), never from event 1.
        # Snapshots and the tail load side by side; one failing does not hide the other.
        results = await asyncio.gather(
            self._load_snapshots(), self.client.activity_tail(FEED_TAIL), return_exceptions=True
        )
        tail = results[1]
        if isinstance(tail, list):
            self._pending_feed.extend(from_activity(x) for x in tail)
            self.last_event_id = tail[-1].id if tail else self.last_event_id
        for failure in results:
            if isinstance(failure, ContractError):
                self.report_contract_error(failure.route, failure.field, failure.detail)
            elif isinstance(failure, AuthError):
                self._token_refused(failure)
                break
            elif isinstance(failure, ApiError):
                self.notify(f"Backend not reachable yet: {failure.message}", severity="warning")
                break
            elif isinstance(failure, BaseException):
                raise failure
        self._flush_pending()
        self.ready.set()
        if self.connection != "token refused":
            self.follow_stream()

    @work(group="stream", exclusive=True, exit_on_error=False)
    async def follow_stream(self) -> None:
        """Consume the SSE stream: resume by id, back off with jitter; stop only when the
        backend refuses the token (retrying cannot fix that)."""
        failures = 0
        while True:
            resync = False
            try:
                stream = self.client.stream_events(self.last_event_id)
                async with contextlib.aclosing(stream):
                    async for item in stream:
                        if isinstance(item, Connected):
                            self.stream_connects += 1
                            if failures:
                                await self._load_snapshots()
                                self._flush_soon()
                            failures = 0
                            self._set_connection("live")
                        elif isinstance(item, Malformed):
                            self.report_contract_error(
                                item.route, f"event {item.id}: {item.field}", item.message
                            )
                            self.last_event_id = item.id or self.last_event_id
                        elif isinstance(item, Resync):
                            self._pending_feed.append(
                                FeedLine(
                                    item.last_id,
                                    "",
                                    "console.resync",
                                    f"fell behind; resynced at event {item.last_id}",
                                )
                            )
                            self.last_event_id = item.last_id
                            await self._load_snapshots()
                            self._flush_soon()
                            resync = True
                        else:
                            self._on_event(item)
            except AuthError as exc:
                self._token_refused(exc)
                return
            except ApiError:
                failures += 1
            except Exception as exc:
                failures += 1
                self.log.error(f"stream: {exc!r}")
            if resync:
                continue
            self._set_connection("reconnecting")
            await asyncio.sleep(backoff_delay(failures))

    @work(group="refetch", exit_on_error=False)
    async def _refetch_worker(self) -> None:
        # One fetch in flight at a time; what is asked meanwhile is fetched right after it
        # (cancelling the one in flight starves every fetch under steady traffic).
        while self._refetch_roster or self._refetch_approvals:
            roster, approvals = self._refetch_roster, self._refetch_approvals
            self._refetch_roster = self._refetch_approvals = False
            try:
                await self._load_snapshots(roster=roster, approvals=approvals)
            except AuthError as exc:
                self._token_refused(exc)
                return
            except ApiError as exc:
                self.log.warning(f"refetch failed: {exc.message}")
                self._flush_pending()  # what did load (or report) is shown
                return
            self._flush_pending()

    @work(group="prebuild", exclusive=True, exit_on_error=False)
    async def prebuild_when_ready(self) -> None:
        """Once the first snapshots are on screen, build the other modes' screens, one a
        frame, so the first ``2`` or ``3`` does not pay for building one."""
        await self.ready.wait()
        self.call_after_refresh(self.prebuild_modes)

    def prebuild_modes(self) -> None:
        """Build the next mode screen not built yet, then the next one after a frame.

        Textual has no public way to mount a screen without showing it; ``_init_mode`` is
        what ``switch_mode`` itself calls the first time. Without it the screens are simply
        built on first use.
        """
        init = getattr(self, "_init_mode", None)
        stacks = getattr(self, "_screen_stacks", None)
        if init is None or stacks is None:
            return
        if getattr(self, "_exit", False) or not self.is_running:
            return  # quitting: a screen mounted now gets no children
        for mode in MODE_SCREENS:
            if mode != self.current_mode and mode not in stacks:
                init(mode)
                self.call_after_refresh(self.prebuild_modes)
                return

    # -- private ----------------------------------------------------------------------------

    async def _load_snapshots(self, *, roster: bool = True, approvals: bool = True) -> None:
        """Fetch the snapshots independently: one unreadable route must not hide the other.

        Raises:
            ApiError: the first failure that is not a contract error (those are reported).
        """
        calls = {ROSTER_ROUTE: roster, APPROVALS_ROUTE: approvals, INBOX_ROUTE: approvals}
        fetch = {
            ROSTER_ROUTE: self.client.roster,
            APPROVALS_ROUTE: self.client.approvals,
            INBOX_ROUTE: self.client.inbox,
        }
        wanted = [route for route, on in calls.items() if on]
        results = await asyncio.gather(*(fetch[r]() for r in wanted), return_exceptions=True)
        failure: BaseException | None = None
        for route, result in zip(wanted, results, strict=True):
            if isinstance(result, ContractError):
                self.report_contract_error(result.route, result.field, result.detail)
            elif route == INBOX_ROUTE and isinstance(result, NotFoundError):
                # A backend older than the Inbox: Approvals still works; the Inbox says why.
                self.inbox_problem = f"{INBOX_ROUTE}: {result.message} ({result.status})"
                self._approvals_dirty = True
            elif isinstance(result, BaseException):
                failure = failure or result
            elif route == ROSTER_ROUTE:
                self._contract_ok(route)
                self.roster = {e.id: e for e in cast("list[RosterEntry]", result)}
                self._roster_dirty = True
            elif route == INBOX_ROUTE:
                self._contract_ok(route)
                self.apply_inbox(cast("list[InboxItem]", result))
                self._approvals_dirty = True
            else:
                self._contract_ok(route)
                self.approvals = cast("Approvals", result)
                self._approvals_dirty = True
        if failure is not None:
            raise failure

    def _contract_ok(self, route: str) -> None:
        if self.contract_errors.pop(route, None) is not None:
            self.status_changed.publish(None)

    def _token_refused(self, exc: ApiError) -> None:
        """No retry can fix a refused token: say so once, stop following, offer the way out."""
        if self.connection == "token refused":
            return
        self._set_connection("token refused")
        self.notify(
            f"The backend refused this console's token ({exc.status}): {exc.message}\n"
            "Nothing more will load. Quit (ctrl+q) and start the console again with a valid "
            "token (CADENCIA_TOKEN or --token).",
            title="Token refused",
            severity="error",
            timeout=PERSISTENT_TOAST_S,
        )

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
        self._flush_soon()

    def _flush_soon(self) -> None:
        """Apply what is pending within :data:`FLUSH_INTERVAL_S` (one timer per batch)."""
        if self._flush_timer is None:
            self._flush_timer = self.set_timer(FLUSH_INTERVAL_S, self._timed_flush)

    def _timed_flush(self) -> None:
        self._flush_timer = None
        self._flush_pending()

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
        if self._watch_deadlines():
            self._ring()  # a deadline passed with no event: nothing else would say so
        if self.paused:
            self.status_changed.publish(None)
        else:
            self.clock_ticked.publish(None)

    def _set_connection(self, state: str) -> None:
        if state != self.connection or state == "stale":
            self.connection = state
            self.status_changed.publish(None)


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
