"""Operator actions: confirm or ask first, send in an App-owned worker, report the result.

Requests run in App workers, not screen workers, so popping a detail screen mid-request
never cancels an approve that is already on the wire. Every outcome is a notification
and a feed line; a 409 also refetches the item, because the operator's view was stale.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from rich.markup import escape
from textual import work

from console.exceptions import ApiError, BlockedByLedgerError, ConflictError
from console.models import InfraPr, Interruption
from console.models_operators import Role
from console.screens.modals import ConfirmScreen, PromptScreen
from console.takeover import Outcome, blocked_outcome

if TYPE_CHECKING:
    from console.app import CadenciaConsole

READONLY_REASON = "read-only console"
DANGEROUS_ACTIONS = frozenset(
    {
        "approve",
        "reject",
        "claim",
        "execute",
        "edit",
        "deny",
        "hand_back",
        "grant",
        "reply",
        "reconcile",
        "settle",
        "act",
    }
)
"""Actions a read-only console shows dimmed and refuses (with the reason)."""


class ActionsMixin:
    """Mixed into :class:`~console.app.CadenciaConsole`."""

    readonly: bool
    role: Role | None

    @work(group="role", exclusive=True, exit_on_error=False)
    async def learn_role(self: CadenciaConsole) -> None:  # type: ignore[misc]
        """Ask the backend who the token names: a viewer gets the read-only console without
        ``--readonly`` (the server refuses a viewer's actions anyway, with 403)."""
        try:
            me = await self.client.me()
        except ApiError:
            return  # unreachable for now: the bootstrap's own notice says so; --readonly stands
        self.role = me.role
        if me.role == "viewer" and not self.readonly:
            self.readonly = True
            self.screen.refresh_bindings()
            self.status_changed.publish(None)

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
        # No check against the console's copy of the PR: a stale copy would refuse a valid
        # approve with a false reason. The server decides; a 409 refetches and says why.
        body = (
            f"Merge [b]{escape(pr.title or pr.pr_action_id)}[/b]\n"
            f"branch {escape(pr.branch)} · {pr.findings_count} findings · "
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
                f"Why is [b]{escape(pr.title or pr.pr_action_id)}[/b] going back? (required)",
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
            f"Conversa [b]{escape(item.conversation)}[/b], {escape(item.entity_text())}\n"
            f"{escape(item.ferramenta)} · {escape(item.motivo)} · {item.attempt_count} attempts"
        )
        self.push_screen(ConfirmScreen(f"Take over interruption #{item.id}?", body), done)

    @work(group="actions", exit_on_error=False)
    async def _send(
        self: CadenciaConsole,
        item_key: str,
        label: str,
        call: Callable[[], Awaitable[Any]],
        describe: Callable[[Any], Outcome] | None = None,
        ferramenta: str = "",
    ) -> None:
        """Send ``call``; report what the backend says happened, never a guess.

        ``describe`` turns the response into the real outcome (a resolve's ``outcome``);
        without it a 2xx is reported as done. A 409 ``blocked_by_ledger`` is reported with
        what the ledger holds, and the item stays as it was.
        """
        try:
            result = await call()
        except BlockedByLedgerError as exc:
            outcome = blocked_outcome(exc.ledger, ferramenta or "the tool", exc.code)
            self.outcomes[item_key] = outcome
            blocked = exc.code != "not_executed"
            self.notify(
                f"{label}: {outcome.text}",
                title="Blocked by the ledger (409)" if blocked else "Not executed (409)",
                severity="warning",
                timeout=12,
            )
            self.add_feed_line("console.blocked", f"{label} → 409: {outcome.text}")
        except ConflictError as exc:
            self.notify(
                f"{label}: someone else acted first — {exc.message}. Refreshed.",
                title="Conflict (409)",
                severity="warning",
                timeout=8,
            )
            self.add_feed_line("console.conflict", f"{label} → 409: {exc.message}")
        except ApiError as exc:
            self.outcomes[item_key] = Outcome(f"failed: {exc.message}", "error", "bold red")
            self.notify(f"{label} failed: {exc.message}", severity="error", timeout=8)
            self.add_feed_line("console.error", f"{label} → failed: {exc.message}")
        else:
            outcome = describe(result) if describe else Outcome("done", "information", "green")
            self.outcomes[item_key] = outcome
            title = "✓" if outcome.severity == "information" else label
            self.notify(f"{label}: {outcome.text}", title=title, severity=outcome.severity)
            self.add_feed_line("console.action", f"{label} by {self.operator}: {outcome.text}")
        self.item_changed.publish(item_key)
        self.refetch(approvals=True)
