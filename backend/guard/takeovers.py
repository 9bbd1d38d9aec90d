"""What an operator does with a claimed takeover: execute (maybe with a corrected amount),
deny, hand back, grant the agent more attempts — and what the ledger holds before they do.

Resolve tells the truth: only the ledger's real ``executado`` resolves a takeover as
executed. A blocked execution (already refunded, another amount claimed, still in flight
or uncertain) raises :class:`BlockedByLedgerError` with the ledger's facts and leaves the
takeover claimed; so does a tool that refused or an outcome that is uncertain
(:class:`NotExecutedError`). Every resolve returns the conversation to the bot, and the
combination it settled answers the agent with the human's outcome (see the orchestrator).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Literal

from pydantic import ValidationError as PydanticValidationError

from backend.events import EventType
from backend.exceptions import ConflictError, ValidationError, unavailable_cause
from backend.guard.conversations import Conversations
from backend.guard.exceptions import BlockedByLedgerError, NotExecutedError
from backend.guard.interruptions import Interruption, Interruptions
from backend.guard.orchestrator import Orchestrator
from backend.ledger.base import Ledger
from backend.tools.exceptions import AmountAboveOrderError
from backend.tools.registry import tool_spec

Action = Literal["execute", "deny", "hand_back"]


@dataclass(frozen=True)
class LedgerFacts:
    """What the ledger holds for a takeover's entity (its claim under the tool's key)."""

    status: str
    valor: str | None
    conversaId: str | None
    ts: str | None
    chaveIdempotencia: str
    operador: str | None
    motivo: str | None = None
    """Why a ``falhou`` failed: the gateway's refusal with its reason, or the tool's."""
    recusado_pelo_banco: bool = False
    """The gateway refused it for good (an operator may correct the amount, or deny)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON form (the API's ``LedgerFacts``)."""
        return dict(self.__dict__)


def ledger_facts(
    ledger: Ledger | None, item: Interruption, argumentos: dict[str, Any] | None = None
) -> LedgerFacts | None:
    """The ledger's record for a takeover's claim (under ``argumentos``, by default the
    agent's), or None (no ledger, no claim, no record)."""
    spec = tool_spec(item.ferramenta)
    if ledger is None:
        return None
    try:
        args = spec.parse(argumentos if argumentos is not None else item.argumentos)
    except PydanticValidationError:
        return None  # the agent's arguments were malformed: nothing was claimed
    claim = spec.claim_for(item.conversa_id, args)
    record = ledger.get(claim.chave) if claim is not None else None
    if record is None:
        return None
    resultado = record.resultado or {}
    operador = resultado.get("operador")
    motivo = resultado.get("erro") if record.status == "falhou" else None
    return LedgerFacts(
        status=record.status,
        valor=record.valor,
        conversaId=record.conversa_id,
        ts=record.updated_at,
        chaveIdempotencia=record.chave,
        operador=str(operador) if operador else None,
        motivo=str(motivo) if motivo else None,
        recusado_pelo_banco=record.status == "falhou" and "recusa" in resultado,
    )


@dataclass(frozen=True)
class Resolved:
    """A resolved takeover: the ledger's outcome (None: nothing ran) and the attempt."""

    interruption: Interruption
    outcome: str | None
    attempt: dict[str, Any] | None
    ledger: LedgerFacts | None


class Takeovers:
    """Operator actions on takeovers, through the orchestrator and the ledger."""

    def __init__(
        self,
        *,
        interruptions: Interruptions,
        conversations: Conversations,
        orchestrator: Orchestrator,
    ) -> None:
        self.interruptions = interruptions
        self.conversations = conversations
        self.orchestrator = orchestrator
        self.events = orchestrator.events

    # -- reading ------------------------------------------------------------------------------

    def ledger_facts(
        self, item: Interruption, argumentos: dict[str, Any] | None = None
    ) -> LedgerFacts | None:
        """The ledger's record for this takeover's claim, or None (no claim, no record)."""
        return ledger_facts(self.orchestrator.ledger, item, argumentos)

    # -- acting -------------------------------------------------------------------------------

    def resolve(
        self,
        ident: int,
        operator: str,
        action: Action,
        reply: str | None,
        *,
        valor: Decimal | None = None,
        reason: str | None = None,
    ) -> Resolved:
        """Execute / deny / hand back a takeover claimed by ``operator``.

        Raises:
            ValidationError: a missing reply or reason, or a corrected amount that is not
                allowed (above the order's value, or on a tool without an amount).
            ConflictError: not claimed by ``operator``; :class:`BlockedByLedgerError` /
                :class:`NotExecutedError` when an execute did not execute (stays claimed).
            UnavailableError: a dependency failed while the tool ran (stays claimed).
        """
        reply = reply.strip() if reply else None
        if action in ("execute", "deny") and not reply:
            raise ValidationError("a reply to the customer is required")
        if valor is not None and (action != "execute" or not (reason or "").strip()):
            raise ValidationError("a corrected valor is only for execute, and needs a reason")
        current = self.interruptions.get(ident)
        if current.status != "claimed" or current.claimed_by != operator:
            raise ConflictError(
                f"interruption {ident} is {current.status}"
                + (f" by {current.claimed_by}" if current.claimed_by else "")
                + f"; claim it before resolving (operator {operator})"
            )
        outcome = attempt = None
        if action == "execute":
            attempt = self._execute(current, operator, valor, reason)
            outcome = "executado"
        closed = self.interruptions.close(ident, operator, action, reply, outcome=outcome)
        if reply:
            self._say(current.conversa_id, operator, reply)
        self.conversations.hand_back(current.conversa_id)
        return Resolved(closed, outcome, attempt, self.ledger_facts(current))

    def grant(self, ident: int, operator: str, attempts: int, reason: str) -> Interruption:
        """Give the agent ``attempts`` more tries on this takeover's combination.

        A takeover still claimed by ``operator`` is handed back first (nothing executed).
        """
        if not 1 <= attempts <= 10:
            raise ValidationError("attempts must be between 1 and 10")
        current = self.interruptions.get(ident)
        if current.status == "claimed" and current.claimed_by == operator:
            self.interruptions.close(ident, operator, "hand_back", None)
            self.conversations.hand_back(current.conversa_id)
        return self.interruptions.grant(ident, operator, attempts, reason.strip())

    def _execute(
        self, current: Interruption, operator: str, valor: Decimal | None, reason: str | None
    ) -> dict[str, Any]:
        argumentos = dict(current.argumentos)
        if valor is not None:
            argumentos = self._corrected(current, operator, valor, reason or "")
        result = self.orchestrator.call(
            current.conversa_id, current.ferramenta, argumentos, operator=operator
        )
        if result.resultado == "executado":
            return result.record
        cause = unavailable_cause(result.error) if result.resultado == "falhou" else None
        if cause is not None:
            raise cause
        facts = self.ledger_facts(current, argumentos)
        ledger = facts.to_dict() if facts else None
        if result.resultado == "bloqueado_por_idempotencia":
            held = (
                f"{facts.status} {facts.valor or ''} at {facts.ts} in {facts.conversaId}"
                if facts
                else "a claim"
            )
            raise BlockedByLedgerError(
                f"the ledger blocked it: it holds {held} ({result.record.get('detalhe')}); "
                "nothing was executed",
                ledger=ledger,
            )
        raise NotExecutedError(
            f"not executed: {result.resultado} ({result.record.get('detalhe') or ''})",
            ledger=ledger,
        )

    def _corrected(
        self, current: Interruption, operator: str, valor: Decimal, reason: str
    ) -> dict[str, Any]:
        """The arguments with the operator's amount, checked against the order and audited."""
        spec = tool_spec(current.ferramenta)
        if spec.amount_limit is None or "valor" not in current.argumentos:
            raise ValidationError(f"{spec.name} has no amount an operator can correct")
        argumentos = {**current.argumentos, "valor": str(valor)}
        try:
            args = spec.parse(argumentos)
        except PydanticValidationError as exc:
            raise ValidationError(f"invalid corrected valor: {exc.errors()[0]['msg']}") from exc
        limit = spec.amount_limit(self.orchestrator.toolbox.credentials(spec), args)
        if valor > limit:
            raise AmountAboveOrderError(
                f"valor {valor} is above the order's value {limit}", valor=str(valor)
            )
        self.events.append(
            EventType.INTERRUPCAO_VALOR_CORRIGIDO,
            {
                "interrupcao_id": current.id,
                "operator": operator,
                "conversaId": current.conversa_id,
                "valor_anterior": _text(current.argumentos.get("valor")),
                "valor": str(valor),
                "reason": reason.strip(),
            },
            session_id=current.conversa_id,
            agent="operador",
        )
        return argumentos

    def _say(self, conversa_id: str, operator: str, text: str) -> None:
        # Recorded, streamed and queued for the customer's channel in one unit of work.
        self.conversations.say(conversa_id, "operador", text, agent=operator)


def _text(value: Any) -> str | None:
    return None if value is None else str(value)
