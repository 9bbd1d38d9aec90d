"""What every console screen shares: the status bar, and the guarded operator keys."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, cast

from textual import events
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import Input, Static

from console.actions import DANGEROUS_ACTIONS
from console.layout import MIN_HEIGHT, MIN_WIDTH, too_small
from console.models import InfraPr, Interruption, UncertainItem
from console.widgets.footer import KeysFooter
from console.widgets.status_bar import StatusBar

if TYPE_CHECKING:
    from console.app import CadenciaConsole

PR_BINDINGS: list[BindingType] = [
    Binding("a", "approve", "Approve", tooltip="approve the infra PR (asks y/n)"),
    Binding("x", "reject", "Reject", tooltip="reject the infra PR (reason required)"),
]
INTERRUPTION_BINDINGS: list[BindingType] = [
    Binding("t", "claim", "Take over", tooltip="claim the interruption (asks y/n)"),
    Binding("e", "execute", "Execute", tooltip="execute the held tool call (reply, then y/n)"),
    Binding("v", "edit", "Edit valor", tooltip="execute with a corrected valor and a reason"),
    Binding("d", "deny", "Deny", tooltip="deny the held tool call (reply, then y/n)"),
    Binding("h", "hand_back", "Hand back", tooltip="give the conversation back to the bot"),
    Binding("g", "grant", "Grant", tooltip="give the agent N more attempts (reason required)"),
]
OPERATOR_BINDINGS: list[BindingType] = [*PR_BINDINGS, *INTERRUPTION_BINDINGS]
UNCERTAIN_BINDINGS: list[BindingType] = [
    Binding("c", "reconcile", "Reconcile", tooltip="ask the gateway what happened (asks y/n)"),
    Binding("s", "settle", "Settle", tooltip="settle by hand (outcome and reason required)"),
]
_KEY_TO_ACTION = {
    "a": "approve",
    "x": "reject",
    "t": "claim",
    "e": "execute",
    "v": "edit",
    "d": "deny",
    "h": "hand_back",
    "g": "grant",
    "c": "reconcile",
    "s": "settle",
}


class ConsoleScreen(Screen[None]):
    """Base screen: keeps its :class:`StatusBar` in sync with the App."""

    def __init__(
        self, name: str | None = None, id: str | None = None, classes: str | None = None
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        # Textual re-parses the whole stylesheet and restyles every screen twice when a
        # mode's screen is shown the first time, because a new screen's "CSS generation"
        # starts at -1 (the app's only changes with the theme). This one is built with the
        # stylesheet as it stands (every screen's CSS is read at start, see the App's
        # CSS_PATH), so it starts current; a later theme change still refreshes it.
        with contextlib.suppress(RuntimeError):  # no running App: nothing to match
            self._css_update_count = self.app._css_update_count
            # Likewise the width class (-narrow, -wide...) the first Resize would add: given
            # now, that Resize finds it set and does not restyle the whole screen once more
            # just before the first frame. Textual's own rule picks it, so a resize agrees.
            width, breakpoints = self.app.size.width, self.app.HORIZONTAL_BREAKPOINTS or []
            self.add_class(*self._get_breakpoint_classes(width, breakpoints), update=False)

    @property
    def console(self) -> CadenciaConsole:
        """The App, typed."""
        return cast("CadenciaConsole", self.app)

    def on_mount(self) -> None:
        """Follow the App's status; cover the screen while the terminal is too small."""
        self._check_size(self.app.size.width, self.app.size.height)
        self.console.status_changed.subscribe(self, self._sync_status)
        self._sync_status(None)

    def on_resize(self, event: events.Resize) -> None:
        """Re-check the size (and let subclasses refit their columns)."""
        self._check_size(event.size.width, event.size.height)
        self.fit(event.size.width)

    def fit(self, width: int) -> None:
        """Subclasses widen their table columns to ``width``."""

    async def filter_box(self, placeholder: str) -> Input:
        """The screen's filter line (``/``), mounted the first time it is asked for, where
        compose would have put it (above the footer).

        Composed hidden with the screen, it cost every first paint the styling and layout
        of a widget most sessions never show.
        """
        found = self.query("#filter")
        if found:
            return found.first(Input)
        box = Input(placeholder=placeholder, id="filter", classes="hidden")
        await self.mount(box, before=self.query_one(KeysFooter))
        return box

    def hide_filter(self) -> None:
        """Clear the filter line and hide it (nothing to do if it was never shown)."""
        for box in self.query("#filter").results(Input):
            box.value = ""
            box.add_class("hidden")

    def _check_size(self, width: int, height: int) -> None:
        # Saying so beats silently dropping columns an operator then never knows exist.
        small = too_small(width, height)
        if small:
            self._too_small_banner().update(
                f"Terminal too small: {width}×{height}.\n"
                f"The console needs at least {MIN_WIDTH}×{MIN_HEIGHT}; enlarge the window."
            )
        self.set_class(small, "-too-small")

    def _too_small_banner(self) -> Static:
        # Mounted the first time the terminal is too small, not with every screen: most never
        # are, and a widget mounted after compose costs the first frame one more styling pass.
        found = self.query("#too-small")
        if found:
            return found.first(Static)
        banner = Static(id="too-small")
        self.mount(banner)
        return banner

    def on_screen_resume(self) -> None:
        """A screen coming back shows the current status, not the one it left with."""
        self._sync_status(None)
        self.fit(self.size.width or self.app.size.width)

    def _sync_status(self, _: object) -> None:
        app = self.console
        for bar in self.query(StatusBar):
            bar.url = app.client.base_url
            bar.connection = app.connection
            bar.stale_seconds = app.stale_seconds
            bar.prs_waiting, bar.interruptions_waiting = app.awaiting()
            bar.inbox_waiting = len(app.inbox)
            bar.paused = app.paused_count if app.paused else None
            bar.readonly = app.readonly
            bar.operator = app.operator
            bar.problem = "; ".join(
                f"{route} {field}" for route, (field, _) in app.contract_errors.items()
            )


class OperatorScreen(ConsoleScreen):
    """A screen with the operator keys; subclasses list the keys that apply and say what
    is selected (Textual merges inherited BINDINGS, so the base declares none)."""

    def selected_pr(self) -> InfraPr | None:
        """The infra PR the keys act on, if any."""
        return None

    def selected_interruption(self) -> Interruption | None:
        """The interruption the keys act on, if any."""
        return None

    def selected_uncertain(self) -> UncertainItem | None:
        """The uncertain outcome the keys act on, if any."""
        return None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Read-only: dangerous keys stay visible but dimmed (None), and are refused."""
        if action in DANGEROUS_ACTIONS and self.console.readonly:
            return None
        return True

    def on_key(self, event: events.Key) -> None:
        """A dimmed key still answers, so the operator learns why nothing happened."""
        action = _KEY_TO_ACTION.get(event.key)
        if action and self.console.readonly and self._has_binding(action):
            event.stop()
            self.console.refuse_if_readonly(action.replace("_", " ").capitalize())

    def action_approve(self) -> None:
        """``a``: approve the selected PR after a ``y`` confirmation."""
        if pr := self._need_pr():
            self.console.request_approve(pr)

    def action_reject(self) -> None:
        """``x``: reject the selected PR with a required reason."""
        if pr := self._need_pr():
            self.console.request_reject(pr)

    def action_claim(self) -> None:
        """``t``: take over the selected interruption."""
        if item := self._need_interruption():
            self.console.request_claim(item)

    def action_execute(self) -> None:
        """``e``: execute the held call of a claimed interruption, with a reply."""
        if item := self._need_interruption():
            self.console.request_takeover_action(item, "execute")

    def action_edit(self) -> None:
        """``v``: execute with a corrected valor (reason required), with a reply."""
        if item := self._need_interruption():
            self.console.request_takeover_action(item, "edit")

    def action_deny(self) -> None:
        """``d``: deny the held call of a claimed interruption, with a reply."""
        if item := self._need_interruption():
            self.console.request_takeover_action(item, "deny")

    def action_hand_back(self) -> None:
        """``h``: give the conversation back to the bot, reply optional."""
        if item := self._need_interruption():
            self.console.request_takeover_action(item, "hand_back")

    def action_grant(self) -> None:
        """``g``: let the agent try the combination N more times, with a reason."""
        if item := self._need_interruption():
            self.console.request_grant(item)

    def action_reconcile(self) -> None:
        """``c``: ask the gateway about the selected uncertain outcome."""
        if item := self._need_uncertain():
            self.console.request_reconcile(item)

    def action_settle(self) -> None:
        """``s``: settle the selected uncertain outcome by hand."""
        if item := self._need_uncertain():
            self.console.request_settle(item)

    def _need_pr(self) -> InfraPr | None:
        pr = self.selected_pr()
        if pr is None:
            self.notify("Select an infra PR first", severity="warning", timeout=3)
        return pr

    def _need_uncertain(self) -> UncertainItem | None:
        item = self.selected_uncertain()
        if item is None:
            self.notify("Select an uncertain outcome first", severity="warning", timeout=3)
        return item

    def _has_binding(self, action: str) -> bool:
        return any(isinstance(b, Binding) and b.action == action for b in type(self).BINDINGS)

    def _need_interruption(self) -> Interruption | None:
        item = self.selected_interruption()
        if item is None:
            self.notify("Select an interruption first", severity="warning", timeout=3)
        return item
