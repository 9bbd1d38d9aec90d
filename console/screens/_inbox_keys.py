"""The keys every Inbox item offers, shared by the Inbox list and the detail screens.

A key shows and acts only where the item's ``actions`` (built by the server) offer it;
keys of one letter that mean different things per kind (``c`` close / reconcile, ``g``
rerun / grant) are separate bindings, and only the one the item offers is active.
"""

from __future__ import annotations

from typing import ClassVar

from textual import events
from textual.binding import Binding, BindingType

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
    Binding("s", "act('settle')", "Settle", tooltip="settle by hand (reason required)"),
    Binding("v", "act('edit')", "Edit valor", tooltip="execute with a corrected valor (reason)"),
    Binding("d", "act('deny')", "Deny", tooltip="deny the held call (reply, then y/n)"),
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
        return None if self.console.readonly else True

    def on_key(self, event: events.Key) -> None:
        """A dimmed key still answers, so the operator learns why nothing happened."""
        item = self.current_item()
        if self.console.readonly and event.key in _KEYS and item is not None:
            names = [
                str(b.action)[5:-2]
                for b in INBOX_ACTION_BINDINGS
                if isinstance(b, Binding) and b.key == event.key
            ]
            if any(item.action(n) for n in names):
                event.stop()
                self.console.refuse_if_readonly(names[0].capitalize())

    def action_act(self, name: str) -> None:
        """Run the current item's action ``name`` (confirm or reason first)."""
        item = self.current_item()
        if item is None:
            self.notify("Select an item first", severity="warning", timeout=3)
            return
        self.console.request_inbox_action(item, name)
