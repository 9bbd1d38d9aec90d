"""The Inbox's operator actions: one flow for every action an item offers.

The item's ``actions`` list is the only source of what can be done (the server built it);
a required reason is asked for, everything else is confirmed with ``y``. Nothing is
checked against the console's copy of the item first: a stale copy must not refuse a
valid action, so the server decides and a 409 refetches and shows the server's message
(:meth:`console.actions.ActionsMixin._send`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.markup import escape

from console.models import InfraPr
from console.models_inbox import ApprovalDecisionOut, HandoffOut, InboxItem
from console.screens.modals import ConfirmScreen, PromptScreen
from console.takeover import Outcome

if TYPE_CHECKING:
    from console.app import CadenciaConsole

ITEM_KEY_PREFIX = {
    "pr": "pr",
    "pr_blocked": "pr",
    "pr_stuck": "pr",
    "action_approval": "approval",
    "handoff": "handoff",
    "interruption": "int",
    "uncertain": "unc",
}
"""Inbox kind → the prefix of the key detail screens listen on (``pr:<id>``...)."""
VERB = {
    "approve": "Approve",
    "reject": "Reject",
    "close": "Close",
    "unblock": "Unblock",
    "rerun": "Rerun the gates of",
    "accept": "Accept",
    "decline": "Decline",
    "edit": "Edit valor",
    "deny": "Deny",
}
NOUN = {
    "pr": "PR",
    "pr_blocked": "blocked PR",
    "pr_stuck": "stuck PR",
    "action_approval": "held action",
    "handoff": "handoff",
}


def item_key(item: InboxItem) -> str:
    """The key an item's detail screen and outcome are filed under."""
    return f"{ITEM_KEY_PREFIX.get(item.kind, item.kind)}:{item.target_id}"


def describe(result: Any) -> Outcome:
    """What the server says happened, in one line (never a guess)."""
    if isinstance(result, ApprovalDecisionOut):
        pr = f" · PR {result.pr_id}" if result.pr_id else ""
        text = f"{result.approval.status}: {result.message or 'no message'}{pr}"
        ok = result.executed or result.approval.status == "rejected"
        return Outcome(text, "information" if ok else "warning", "green" if ok else "bold yellow")
    if isinstance(result, InfraPr):
        note = f" ({result.blocked_reason})" if result.blocked_reason else ""
        return Outcome(f"now {result.gate_status}{note}", "information", "green")
    if isinstance(result, HandoffOut):
        return Outcome(f"handoff {result.status}", "information", "green")
    return Outcome("done", "information", "green")


class InboxActionsMixin:
    """Mixed into :class:`~console.app.CadenciaConsole`."""

    def request_inbox_action(self: CadenciaConsole, item: InboxItem, name: str) -> None:  # type: ignore[misc]
        """Run ``item``'s action ``name``: takeovers and uncertain outcomes through their own
        flows, the rest through the route the item names."""
        verb = VERB.get(name, name.replace("_", " ").capitalize())
        if self.refuse_if_readonly(verb):
            return
        if item.kind in ("interruption", "uncertain"):
            self._legacy_action(item, name)
            return
        action = item.action(name)
        if action is None:
            self.notify(f"{item.kind} {item.target_id} does not offer {name}", severity="warning")
            return
        noun = NOUN.get(item.kind, item.kind)
        if item.pr_kind and item.kind.startswith("pr"):
            noun = f"{item.pr_kind} {noun}"
        label = f"{verb} {noun} {item.target_id}"
        title = escape(item.title or item.target_id)

        def send(reason: str = "") -> None:
            self._send(
                item_key(item),
                label,
                lambda: self.client.act(item, action, self.operator, reason),
                describe,
            )

        if action.reason == "required":

            def reasoned(reason: str | None) -> None:
                if reason:
                    send(reason)
                else:
                    self.notify(f"{verb} cancelled — nothing sent", timeout=2)

            self.push_screen(
                PromptScreen(
                    f"{verb} {noun}",
                    f"Why? [b]{title}[/b] (required)",
                    placeholder="reason for the author",
                    submit_label=verb,
                ),
                reasoned,
            )
            return

        def confirmed(yes: bool | None) -> None:
            if yes:
                send()
            else:
                self.notify(f"{verb} cancelled — nothing sent", timeout=2)

        body = f"[b]{title}[/b]\n{escape(item.detail)}"
        self.push_screen(ConfirmScreen(f"{verb} {noun}?", body), confirmed)

    def _legacy_action(self: CadenciaConsole, item: InboxItem, name: str) -> None:  # type: ignore[misc]
        """Interruptions and uncertain outcomes keep the flows (and bodies) they had."""
        if item.kind == "interruption":
            takeover = next(
                (i for i in self.approvals.interruptions if str(i.id) == item.target_id), None
            )
            if takeover is not None and name == "claim":
                self.request_claim(takeover)
                return
            if takeover is not None and name == "grant":
                self.request_grant(takeover)
                return
            if takeover is not None and name in ("edit", "deny"):
                self.request_takeover_action(takeover, "edit" if name == "edit" else "deny")
                return
        else:
            uncertain = next((u for u in self.approvals.uncertain if u.id == item.target_id), None)
            if uncertain is not None and name == "reconcile":
                self.request_reconcile(uncertain)
                return
            if uncertain is not None and name == "settle":
                self.request_settle(uncertain)
                return
        self.notify(f"Open {item.kind} {item.target_id} (enter) to act on it", timeout=3)
