"""The console's one key system: an item's keys come from its server-built ``actions``.

The Inbox, Approvals and every detail screen act on one :class:`InboxItem` through these
bindings. A key shows and acts only where the item offers it; one letter that means
different things per kind (``c`` close / reconcile, ``g`` rerun / grant, ``d`` decline /
deny) is separate bindings, and only the one the item offers is active. Read-only, a key
stays visible but dimmed, and pressing it says why.
"""

from __future__ import annotations

from typing import ClassVar

from textual import events
from textual.binding import Binding, BindingType
from textual.widgets import Input

from console.models_inbox import InboxItem
from console.screens._base import ConsoleScreen

INBOX_ACTION_BINDINGS: list[BindingType] = [
    Binding("a", "act('approve')", "Approve", tooltip="approve (asks y/n)"),
    Binding("a", "act('accept')", "Accept", tooltip="accept the handoff (asks y/n)"),
    Binding("x", "act('reject')", "Reject", tooltip="reject (reason required)"),
    Binding("d", "act('decline')", "Decline", tooltip="decline the handoff (asks y/n)"),
    Binding("u", "act('unblock')", "Unblock", tooltip="unblock the PR (asks y/n)"),
    Binding("c", "act('close')", "Close", tooltip="close the PR without merging (asks y/n)"),
    Binding("c", "act('reconcile')", "Reconcile", tooltip="ask the gateway (asks y/n)"),
    Binding("g", "act('rerun')", "Rerun gates", tooltip="run the PR's gates again (asks y/n)"),
    Binding("g", "act('grant')", "Grant", tooltip="more attempts for the agent (reason)"),
    Binding("t", "act('claim')", "Take over", tooltip="claim the interruption (asks y/n)"),
    Binding("l", "act('release')", "Release", tooltip="give the takeover back to the queue (asks)"),
    Binding("s", "act('settle')", "Settle", tooltip="settle by hand (reason required)"),
    Binding("v", "act('edit')", "Edit valor", tooltip="execute with a corrected valor (reason)"),
    Binding("d", "act('deny')", "Deny", tooltip="deny the held call (reply, then y/n)"),
    Binding("e", "act('execute')", "Execute", tooltip="run the held call (reply, then y/n)"),
    Binding("x", "act('drop')", "Drop", tooltip="drop the stopped job (asks y/n)"),
    Binding("h", "act('hand_back')", "Hand back", tooltip="give the conversation to the bot"),
    Binding("o", "act('resume')", "Resume agent", tooltip="resume atendimento (asks y/n)"),
]
_KEYS = {b.key for b in INBOX_ACTION_BINDINGS if isinstance(b, Binding)}


class InboxKeysScreen(ConsoleScreen):
    """A screen whose keys act on one Inbox item (:meth:`current_item`)."""

    BINDINGS: ClassVar[list[BindingType]] = INBOX_ACTION_BINDINGS

    def current_item(self) -> InboxItem | None:
        """The item the keys act on (the highlighted row, the item on screen)."""
        return None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """``act(name)`` shows only when the item offers ``name``; dimmed when read-only."""
        if action != "act":
            return True
        item = self.current_item()
        if item is None or not parameters or item.action(str(parameters[0])) is None:
            return False
        return None if self.view.actions.readonly else True

    def on_key(self, event: events.Key) -> None:
        """A dimmed key still answers, so the operator learns why nothing happened."""
        item = self.current_item()
        if not self.view.actions.readonly or item is None or event.key not in _KEYS:
            return
        if isinstance(self.focused, Input):
            return  # typing in the filter or the reply box
        for binding in INBOX_ACTION_BINDINGS:
            if isinstance(binding, Binding) and binding.key == event.key:
                name = str(binding.action)[5:-2]
                if item.action(name):
                    event.stop()
                    self.view.actions.act(item, name)  # refuses, and says why
                    return

    def action_act(self, name: str) -> None:
        """Run the current item's action ``name`` (confirm, reason or form first)."""
        item = self.current_item()
        if item is None:
            self.notify("Select an item first", severity="warning", timeout=3)
            return
        self.view.actions.act(item, name)
