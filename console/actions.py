"""Operator actions: confirm or ask first, send in an App-owned worker, report the result.

Requests run in App workers, not screen workers, so popping a detail screen mid-request
never cancels an approve that is already on the wire. Every outcome is a notification
and a feed line; a 409 also refetches the item, because the operator's view was stale.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Literal

from textual import work

from console.exceptions import ApiError, ConflictError
from console.models import InfraPr, Interruption
from console.screens.modals import ConfirmScreen, PromptScreen

if TYPE_CHECKING:
    from console.app import CadenciaConsole

READONLY_REASON = "read-only console"
DANGEROUS_ACTIONS = frozenset({"approve", "reject", "claim", "execute", "deny"})


class ActionsMixin:
    """Mixed into :class:`~console.app.CadenciaConsole`."""

    def refuse_if_readonly(self: CadenciaConsole, what: str) -> bool:  # type: ignore[misc]
        """Notify and return True when the console is read-only."""
        if self.readonly:
            self.notify(f"{what} refused: {READONLY_REASON}", severity="warning")
            return True
        return False

    def request_approve(self: CadenciaConsole, pr: InfraPr) -> None:  # type: ignore[misc]
        """Ask ``y``/no, then approve (merge) ``pr``."""
        if self.refuse_if_readonly("Approve"):
            return
        if pr.gate_status != "awaiting_human":
            self.notify(
                f"PR {pr.pr_id or pr.pr_action_id} is {pr.gate_status}, not awaiting a human",
                severity="warning",
            )
            return
        body = (
            f"Merge [b]{pr.title or pr.pr_action_id}[/b]\n"
            f"branch {pr.branch} · {pr.findings_count} findings · "
            f"{pr.gate_correction_count} corrections"
        )

        def done(confirmed: bool | None) -> None:
            if confirmed:
                self._send(
                    f"pr:{pr.pr_action_id}",
                    f"Approve PR {pr.pr_id or pr.pr_action_id}",
                    lambda: self.client.approve(pr.pr_action_id, self.operator),
                )
            else:
                self.notify("Approve cancelled — nothing sent", timeout=2)

        self.push_screen(ConfirmScreen("Approve infra PR?", body), done)

    def request_reject(self: CadenciaConsole, pr: InfraPr) -> None:  # type: ignore[misc]
        """Ask for a reason (required), then send ``pr`` back to its author."""
        if self.refuse_if_readonly("Reject"):
            return

        def done(reason: str | None) -> None:
            if reason:
                self._send(
                    f"pr:{pr.pr_action_id}",
                    f"Reject PR {pr.pr_id or pr.pr_action_id}",
                    lambda: self.client.reject(pr.pr_action_id, self.operator, reason),
                )
            else:
                self.notify("Reject cancelled — nothing sent", timeout=2)

        self.push_screen(
            PromptScreen(
                "Reject infra PR",
                f"Why is [b]{pr.title or pr.pr_action_id}[/b] going back? (required)",
                placeholder="reason for the author",
                submit_label="Reject",
            ),
            done,
        )

    def request_claim(self: CadenciaConsole, item: Interruption) -> None:  # type: ignore[misc]
        """Ask ``y``/no, then take over interruption ``item``."""
        if self.refuse_if_readonly("Take over"):
            return
        if item.status != "open":
            who = f" by {item.claimed_by}" if item.claimed_by else ""
            self.notify(
                f"Interruption #{item.id} is already {item.status}{who}", severity="warning"
            )
            return

        def done(confirmed: bool | None) -> None:
            if confirmed:
                self._send(
                    f"int:{item.id}",
                    f"Take over interruption #{item.id}",
                    lambda: self.client.claim(item.id, self.operator),
                )
            else:
                self.notify("Take over cancelled — nothing sent", timeout=2)

        body = (
            f"Conversa [b]{item.conversation}[/b], {item.entity_text()}\n"
            f"{item.ferramenta} · {item.motivo} · {item.attempt_count} attempts"
        )
        self.push_screen(ConfirmScreen(f"Take over interruption #{item.id}?", body), done)

    def request_resolve(  # type: ignore[misc]
        self: CadenciaConsole,
        item: Interruption,
        action: Literal["execute", "deny"],
    ) -> None:
        """Ask for the customer reply, then execute or deny the held tool call."""
        verb = "Execute" if action == "execute" else "Deny"
        if self.refuse_if_readonly(verb):
            return
        if item.status != "claimed" or item.claimed_by != self.operator:
            self.notify(
                f"Take over interruption #{item.id} first (t); it is {item.status}"
                + (f" by {item.claimed_by}" if item.claimed_by else ""),
                severity="warning",
            )
            return

        def done(reply: str | None) -> None:
            if reply:
                self._send(
                    f"int:{item.id}",
                    f"{verb} interruption #{item.id}",
                    lambda: self.client.resolve(item.id, self.operator, action, reply),
                )
            else:
                self.notify(f"{verb} cancelled — nothing sent", timeout=2)

        what = (
            f"run [b]{item.ferramenta}[/b] once more for {item.entity_text()}"
            if action == "execute"
            else f"[b]not[/b] run {item.ferramenta} for {item.entity_text()}"
        )
        self.push_screen(
            PromptScreen(
                f"{verb} interruption #{item.id}",
                f"This will {what}. Reply to the customer (required):",
                placeholder="message the customer will read",
                submit_label=verb,
            ),
            done,
        )

    @work(group="actions", exit_on_error=False)
    async def _send(
        self: CadenciaConsole, item_key: str, label: str, call: Callable[[], Awaitable[Any]]
    ) -> None:
        try:
            await call()
        except ConflictError as exc:
            self.notify(
                f"{label}: someone else acted first — {exc.message}. Refreshed.",
                title="Conflict (409)",
                severity="warning",
                timeout=8,
            )
            self.add_feed_line("console.conflict", f"{label} → 409: {exc.message}")
        except ApiError as exc:
            self.notify(f"{label} failed: {exc.message}", severity="error", timeout=8)
            self.add_feed_line("console.error", f"{label} → failed: {exc.message}")
        else:
            self.notify(f"{label}: done", title="✓", timeout=4)
            self.add_feed_line("console.action", f"{label} by {self.operator}: done")
        self.item_changed.publish(item_key)
        self.refetch(approvals=True)
