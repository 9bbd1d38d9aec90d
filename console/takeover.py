"""Pure takeover logic: what the ledger says before an execute, what really happened after,
and the checks on what the operator types. No Textual (tested with plain asserts).

The console never words an outcome on its own: every sentence here is built from the
backend's ``outcome`` / ``ledger`` fields, so "done" is only ever said of an ``executado``.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Literal

from console.models import Delivery, LedgerFacts, ResolveResult, UncertainOut

Severity = Literal["information", "warning", "error"]
MAX_GRANT = 10
"""The contract's ceiling for one grant (``attempts`` 1..10)."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """A sentence for the toast, the feed and the screen, and how loud it is."""

    text: str
    severity: Severity
    style: str


def hhmm(ts: str | None) -> str:
    """``09:14`` out of an ISO timestamp; the input (or ``?``) when it is not one."""
    if not ts:
        return "?"
    if "T" in ts:
        return ts.split("T", 1)[1][:5]
    return ts


def ledger_text(facts: LedgerFacts | None) -> str:
    """One line of what the ledger holds for the takeover's entity."""
    if facts is None:
        return "ledger: no record for this order yet"
    parts = [f"ledger: {facts.status}"]
    if facts.valor is not None:
        parts.append(facts.valor)
    parts.append(f"at {hhmm(facts.ts)}")
    if facts.conversaId:
        parts.append(f"in {facts.conversaId}")
    if facts.operador:
        parts.append(f"by {facts.operador}")
    line = " ".join(parts) + f" (key {facts.chaveIdempotencia})"
    if facts.motivo:
        line += f" — {facts.motivo}"
    return line


def execute_warning(facts: LedgerFacts | None, ferramenta: str) -> tuple[str, str]:
    """What an execute will meet in the ledger, as (sentence, Rich style), before confirming.

    Example: ``emitir-reembolso already ran: 129.90 at 09:14 in conv-77f1 — a second
    emitir-reembolso will be blocked``.
    """
    if facts is None:
        return f"The ledger has no record: {ferramenta} will run for the first time.", "green"
    where = _where(facts)
    if facts.status == "executado":
        return (
            f"{ferramenta} already ran: {where} — a second {ferramenta} will be blocked.",
            "bold red",
        )
    if facts.status == "tentando":
        return f"{ferramenta} is running right now ({where}): an execute will be blocked.", "red"
    if facts.status == "resultado_incerto":
        return (
            f"{ferramenta} outcome unknown ({where}): reconcile it in Approvals first; "
            "an execute now will be blocked.",
            "bold yellow",
        )
    if facts.recusado_pelo_banco:
        return (
            f"the bank refused {ferramenta} ({where}): {facts.motivo or 'no reason given'} — "
            "edit the valor (v) or deny (d); the same valor will likely be refused again.",
            "bold yellow",
        )
    return (
        f"{ferramenta} failed earlier ({where}): released, an execute can go through.",
        "yellow",
    )


def resolve_outcome(action: str, result: ResolveResult, ferramenta: str) -> Outcome:
    """The real result of a resolve, from the response's ``outcome``."""
    if action == "deny":
        return Outcome(f"denied: {ferramenta} not run; back to the bot", "information", "green")
    if action == "hand_back":
        return Outcome("handed back to the bot", "information", "green")
    outcome = result.outcome
    if outcome == "executado":
        return Outcome(f"executado: {ferramenta} ran once", "information", "bold green")
    if outcome is None:
        return Outcome(
            f"the backend did not say whether {ferramenta} ran: check the ledger",
            "error",
            "bold red",
        )
    facts = f" — {ledger_text(result.ledger)}" if result.ledger else ""
    if outcome == "resultado_incerto":
        return Outcome(
            f"resultado_incerto: nobody knows yet whether {ferramenta} moved money; "
            f"listed in Approvals to reconcile{facts}",
            "warning",
            "bold yellow",
        )
    if outcome.startswith("bloqueado"):
        return Outcome(f"{outcome}: nothing ran{facts}", "warning", "bold red")
    return Outcome(f"{outcome}: {ferramenta} did not go through{facts}", "error", "bold red")


def blocked_outcome(facts: LedgerFacts, ferramenta: str, code: str = "") -> Outcome:
    """A 409 carrying the ledger's facts: what the ledger holds, never "done"."""
    what = "not executed" if code == "not_executed" else "blocked by the ledger, nothing ran"
    return Outcome(
        f"{what}: {ferramenta} {facts.status} {_where(facts)}; the takeover is still yours",
        "warning",
        "bold red",
    )


def uncertain_outcome(result: UncertainOut) -> Outcome:
    """What reconcile / settle found."""
    text = result.message or (f"settled as {result.outcome}" if result.settled else "still unknown")
    if result.settled:
        return Outcome(text, "information", "green")
    return Outcome(f"not settled: {text}", "warning", "yellow")


def delivery_mark(delivery: Delivery | None) -> tuple[str, str]:
    """A short delivery state for an outbound message, as (text, Rich style)."""
    if delivery is None:
        return "", ""
    if delivery.status == "delivered":
        return "✓ delivered", "green"
    if delivery.status == "failed":
        why = f": {delivery.last_error}" if delivery.last_error else ""
        return f"✗ failed after {delivery.attempts}{why}", "bold red"
    tries = f" (try {delivery.attempts})" if delivery.attempts else ""
    return f"… pending{tries}", "yellow"


def parse_valor(text: str) -> Decimal | str:
    """A corrected amount: a positive decimal with at most two places.

    Returns the amount, or the sentence that says why it is refused. The ceiling
    (``valor_pedido``) is the backend's to check: the console does not hold the order.
    """
    try:
        value = Decimal(text.strip().replace(",", "."))
    except InvalidOperation:
        return "the valor must be a number like 119.90"
    if not value.is_finite() or value <= 0:
        return "the valor must be more than 0"
    exponent = value.as_tuple().exponent
    if isinstance(exponent, int) and exponent < -2:
        return "at most two decimal places"
    return value


def parse_attempts(text: str) -> int | str:
    """How many more attempts to grant (1..10), or why not."""
    try:
        n = int(text.strip())
    except ValueError:
        return f"a whole number from 1 to {MAX_GRANT}"
    if not 1 <= n <= MAX_GRANT:
        return f"a whole number from 1 to {MAX_GRANT}"
    return n


def _where(facts: LedgerFacts) -> str:
    parts = [facts.valor] if facts.valor is not None else []
    parts.append(f"at {hhmm(facts.ts)}")
    if facts.conversaId:
        parts.append(f"in {facts.conversaId}")
    return " ".join(parts)
