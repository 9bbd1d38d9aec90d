"""Takeover actions: reply, execute (as asked or with a corrected valor), deny, hand back,
grant attempts, and reconcile / settle an uncertain outcome.

Each one asks for what the contract requires (a reply, a reason), then shows what it will
do — for an execute, what the ledger holds for the order *now*, fetched fresh — and waits
for ``y`` (default No). The result shown afterwards is the backend's ``outcome``.
"""

from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING, Literal

from rich.markup import escape
from textual import work

from console.exceptions import ApiError
from console.models import Interruption, InterruptionDetail, ResolveResult, UncertainItem
from console.screens.forms import FormField, FormScreen
from console.screens.modals import ConfirmScreen
from console.takeover import (
    Outcome,
    execute_warning,
    parse_attempts,
    parse_valor,
    resolve_outcome,
    uncertain_outcome,
)

if TYPE_CHECKING:
    from console.app import CadenciaConsole

Verb = Literal["execute", "edit", "deny", "hand_back"]
VERB_LABEL = {
    "execute": "Execute",
    "edit": "Edit & execute",
    "deny": "Deny",
    "hand_back": "Hand back",
}
SETTLE_OUTCOMES = ("executado", "falhou")


def _reply_field(required: bool) -> FormField:
    label = "Reply to the customer" + (" (required):" if required else " (optional):")
    return FormField("reply", label, "message the customer will read", required=required)


def _valor_check(text: str) -> str | None:
    got = parse_valor(text)
    return got if isinstance(got, str) else None


def _attempts_check(text: str) -> str | None:
    got = parse_attempts(text)
    return got if isinstance(got, str) else None


def _outcome_check(text: str) -> str | None:
    return None if text.strip() in SETTLE_OUTCOMES else "type executado or falhou"


class TakeoverActionsMixin:
    """Mixed into :class:`~console.app.CadenciaConsole` beside the PR actions."""

    def request_takeover_action(  # type: ignore[misc]
        self: CadenciaConsole, item: Interruption, verb: Verb
    ) -> None:
        """Start ``verb`` on a takeover the operator holds (``e``, ``v``, ``d``, ``h``)."""
        label = VERB_LABEL[verb]
        if self.refuse_if_readonly(label):
            return
        if item.status != "claimed" or item.claimed_by != self.operator:
            self.notify(
                f"Take over interruption #{item.id} first (t); it is {item.status}"
                + (f" by {item.claimed_by}" if item.claimed_by else ""),
                severity="warning",
            )
            return
        self._takeover_form(item.id, verb)

    def send_reply(self: CadenciaConsole, item: Interruption, text: str) -> bool:  # type: ignore[misc]
        """Send one operator message now; False (and why) when it cannot be sent."""
        if self.refuse_if_readonly("Reply"):
            return False
        if item.status != "claimed" or item.claimed_by != self.operator:
            self.notify(f"Take over interruption #{item.id} first (t)", severity="warning")
            return False
        self._send(
            f"int:{item.id}",
            f"Reply in {item.conversation}",
            lambda: self.client.reply(item.id, self.operator, text),
            lambda _: Outcome("sent to the customer's channel", "information", "green"),
        )
        return True

    def request_grant(self: CadenciaConsole, item: Interruption) -> None:  # type: ignore[misc]
        """``g``: give the agent N more attempts on the combination, with a reason."""
        if self.refuse_if_readonly("Grant"):
            return
        fields = [
            FormField("attempts", "How many more attempts (1..10):", "3", check=_attempts_check),
            FormField("reason", "Why (required, audited):", "reason for the record"),
        ]

        def confirm(answers: dict[str, str] | None) -> None:
            if not answers:
                self.notify("Grant cancelled — nothing sent", timeout=2)
                return
            n = int(answers["attempts"])
            body = (
                f"The agent may try [b]{escape(item.ferramenta)}[/b] for "
                f"{escape(item.entity_text())} "
                f"[b]{n}[/b] more time{'s' if n != 1 else ''}.\n"
                f"Reason: {escape(answers['reason'])}"
            )

            def done(ok: bool | None) -> None:
                if not ok:
                    self.notify("Grant cancelled — nothing sent", timeout=2)
                    return
                self._send(
                    f"int:{item.id}",
                    f"Grant {n} attempts on #{item.id}",
                    lambda: self.client.grant(item.id, self.operator, n, answers["reason"]),
                    lambda got: Outcome(
                        f"granted {n} more attempts (now {got.attempt_count} counted)",
                        "information",
                        "green",
                    ),
                )

            self.push_screen(ConfirmScreen(f"Grant {n} attempts?", body), done)

        self.push_screen(
            FormScreen(
                f"Grant attempts on #{item.id}",
                f"{item.ferramenta} · {item.entity_text()} · {item.attempt_count} attempts so far",
                fields,
            ),
            confirm,
        )

    def request_reconcile(self: CadenciaConsole, item: UncertainItem) -> None:  # type: ignore[misc]
        """``c``: ask the gateway, by idempotency key, what happened (after ``y``)."""
        if self.refuse_if_readonly("Reconcile"):
            return

        def done(ok: bool | None) -> None:
            if not ok:
                self.notify("Reconcile cancelled — nothing sent", timeout=2)
                return
            self._send(
                f"unc:{item.id}",
                f"Reconcile pedido {item.pedidoId}",
                lambda: self.client.reconcile(item.id, self.operator),
                uncertain_outcome,
            )

        body = f"Ask the gateway about key [b]{escape(item.chaveIdempotencia)}[/b]\n" + escape(
            f"pedido {item.pedidoId} · {item.valor} · conversa {item.conversaId}"
        )
        self.push_screen(ConfirmScreen("Reconcile with the gateway?", body), done)

    def request_settle(self: CadenciaConsole, item: UncertainItem) -> None:  # type: ignore[misc]
        """``s``: settle an uncertain outcome by hand (executado or falhou, with a reason)."""
        if self.refuse_if_readonly("Settle"):
            return
        fields = [
            FormField(
                "outcome", "Outcome (executado or falhou):", "executado", check=_outcome_check
            ),
            FormField("reason", "Why (required, audited):", "e.g. checked the gateway dashboard"),
        ]

        def confirm(answers: dict[str, str] | None) -> None:
            if not answers:
                self.notify("Settle cancelled — nothing sent", timeout=2)
                return
            outcome: Literal["executado", "falhou"] = (
                "executado" if answers["outcome"] == "executado" else "falhou"
            )
            body = (
                f"Record {escape(f'pedido {item.pedidoId} ({item.valor})')} as [b]{outcome}[/b] "
                "by hand.\n"
                f"Reason: {escape(answers['reason'])}"
            )

            def done(ok: bool | None) -> None:
                if not ok:
                    self.notify("Settle cancelled — nothing sent", timeout=2)
                    return
                self._send(
                    f"unc:{item.id}",
                    f"Settle pedido {item.pedidoId}",
                    lambda: self.client.settle(item.id, self.operator, outcome, answers["reason"]),
                    uncertain_outcome,
                )

            self.push_screen(ConfirmScreen(f"Settle as {outcome}?", body), done)

        self.push_screen(
            FormScreen(
                f"Settle pedido {item.pedidoId} by hand",
                escape(f"key {item.chaveIdempotencia} · {item.valor} · conversa {item.conversaId}"),
                fields,
            ),
            confirm,
        )

    @work(group="takeover-form", exclusive=True, exit_on_error=False)
    async def _takeover_form(self: CadenciaConsole, interruption_id: int, verb: Verb) -> None:
        # Fetched fresh: the ledger may have moved since the screen last loaded.
        try:
            detail = await self.client.interruption(interruption_id)
        except ApiError as exc:
            self.notify(f"Could not read the takeover: {exc.message}", severity="error")
            return
        warning, _ = execute_warning(detail.ledger, detail.ferramenta)
        fields: list[FormField] = []
        if verb == "edit":
            asked = str(detail.argumentos.get("valor", ""))
            fields += [
                FormField(
                    "valor",
                    f"Corrected valor (the agent asked {asked or '?'}):",
                    "119.90",
                    check=_valor_check,
                    value=asked,
                ),
                FormField("reason", "Why this valor (required, audited):", "reason for the record"),
            ]
        fields.append(_reply_field(required=verb != "hand_back"))
        intro = {
            "execute": escape(
                f"Run {detail.ferramenta} for {detail.entity_text()} as the agent asked."
            ),
            "edit": escape(
                f"Run {detail.ferramenta} for {detail.entity_text()} with a corrected valor."
            ),
            "deny": f"Do [b]not[/b] run {escape(detail.ferramenta)} for "
            f"{escape(detail.entity_text())}.",
            "hand_back": "Give the conversation back to the bot without running anything.",
        }[verb]
        body = intro + (f"\n{escape(warning)}" if verb in ("execute", "edit") else "")

        def answered(answers: dict[str, str] | None) -> None:
            if answers is None:
                self.notify(f"{VERB_LABEL[verb]} cancelled — nothing sent", timeout=2)
                return
            self._confirm_resolve(detail, verb, answers, warning)

        self.push_screen(FormScreen(f"{VERB_LABEL[verb]} #{detail.id}", body, fields), answered)

    def _confirm_resolve(  # type: ignore[misc]
        self: CadenciaConsole,
        detail: InterruptionDetail,
        verb: Verb,
        answers: dict[str, str],
        warning: str,
    ) -> None:
        valor = parse_valor(answers["valor"]) if verb == "edit" else None
        lines = []
        if verb in ("execute", "edit"):
            what = f" with valor [b]{valor}[/b]" if isinstance(valor, Decimal) else ""
            lines.append(
                f"Run [b]{escape(detail.ferramenta)}[/b] for {escape(detail.entity_text())}{what}."
            )
            lines.append(escape(warning))
        elif verb == "deny":
            lines.append(f"Do [b]not[/b] run {escape(detail.ferramenta)}; back to the bot.")
        else:
            lines.append("The bot takes the conversation back; nothing runs.")
        if answers.get("reason"):
            lines.append(f"Reason: {escape(answers['reason'])}")
        if answers.get("reply"):
            lines.append(f"Customer reads: “{escape(answers['reply'])}”")
        action: Literal["execute", "deny", "hand_back"] = "execute" if verb == "edit" else verb
        label = f"{VERB_LABEL[verb]} #{detail.id}"

        def done(ok: bool | None) -> None:
            if not ok:
                self.notify(f"{VERB_LABEL[verb]} cancelled — nothing sent", timeout=2)
                return
            self._send(
                f"int:{detail.id}",
                label,
                lambda: self.client.resolve(
                    detail.id,
                    self.operator,
                    action,
                    answers.get("reply", ""),
                    valor=valor if isinstance(valor, Decimal) else None,
                    reason=answers.get("reason", ""),
                ),
                lambda got: _described(action, got, detail.ferramenta),
                detail.ferramenta,
            )

        self.push_screen(ConfirmScreen(f"{label}?", "\n".join(lines)), done)


def _described(action: str, result: ResolveResult, ferramenta: str) -> Outcome:
    return resolve_outcome(action, result, ferramenta)
