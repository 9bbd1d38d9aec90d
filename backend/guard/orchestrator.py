"""The loop orchestrator: the teto de voltas lives here, in code, never in a prompt.

Every tool call of the customer-service agent is validated, counted against the ceiling,
checked for ownership, claimed in the idempotency ledger, run with its own credentials and
recorded as a ``TENTATIVA_DE_FERRAMENTA_REGISTRADA`` event; :class:`Orchestrator` gives
the order. ``architecture="minima"`` is Lab 87's Figure 1 (no ceiling, no idempotency, no
ownership): it exists only so ``cadencia prove`` can show what the production design
prevents.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from typing import Any, Literal

from pydantic import ValidationError as PydanticValidationError

from backend.events import TENTATIVA, EventLog, utcnow_iso
from backend.exceptions import CadenciaError, GatewayUncertainError, NotFoundError
from backend.guard.conversations import Conversations, owns
from backend.guard.interruptions import Interruptions
from backend.guard.outcomes import (
    Attempt,
    CallOutcome,
    Resultado,
    decided_by_human,
    detalhe_de_falha,
    mensagem_de_falha,
    mensagem_de_teto,
    unrecorded,
)
from backend.guard.toolbox import Toolbox
from backend.guard.uncertain import UncertainOutcomes
from backend.ledger.base import ClaimRequest, Ledger, Reservation, counter_key
from backend.metrics import Metrics
from backend.store.uow import UnitOfWork, Work
from backend.tools.registry import ToolSpec, find_tool
from backend.tools.specs import ToolArgs

log = logging.getLogger(__name__)

# Resultado, Attempt and the teto message moved to outcomes; callers still import them here.
__all__ = ["Architecture", "Attempt", "Orchestrator", "Resultado", "mensagem_de_teto"]

Architecture = Literal["minima", "producao"]


class Orchestrator:
    """Decides, runs and records every tool call of the customer-service agent.

    The ledger decision, the takeover it may open and the attempt's event are written in
    one unit of work (:class:`~backend.store.uow.UnitOfWork` on the event log's database):
    a SQL ledger on that database joins it, so they commit together or not at all.

    Order inside one call (ARCHITECTURE.md, "Where each rule lives"): schema validation
    (malformed → ``argumentos_invalidos``, nothing counted) → atomic ceiling increment (5th+
    → ``bloqueado_por_teto``: tool never built, no secret read, metric emitted, one human
    takeover per combination) → ownership (an order or client that is not the conversation's
    customer's is ``falhou`` with an unknown one's words: no claim, no tool, no secret; read
    in the same transaction as the increment) → idempotency claim → tool runs with its own
    credentials → ledger completed. Every attempt becomes a
    ``TENTATIVA_DE_FERRAMENTA_REGISTRADA`` event with the seed's fields.
    """

    def __init__(
        self,
        *,
        ledger: Ledger | None,
        events: EventLog,
        interruptions: Interruptions,
        toolbox: Toolbox,
        metrics: Metrics,
        architecture: Architecture = "producao",
        conversations: Conversations | None = None,
    ) -> None:
        if architecture == "producao" and ledger is None:
            raise ValueError("the production architecture needs a ledger")
        self.ledger = ledger
        self.events = events
        self.interruptions = interruptions
        self.toolbox = toolbox
        self.metrics = metrics
        self.architecture = architecture
        self.uow = UnitOfWork(events.db)
        self.uncertain = (
            UncertainOutcomes(ledger, toolbox, events, conversations)
            if ledger is not None
            else None
        )
        self._minima_counts: Counter[str] = Counter()
        self._minima_lock = threading.Lock()

    def call(
        self, conversa_id: str, ferramenta: str, argumentos: Any, *, operator: str | None = None
    ) -> Attempt:
        """Run one tool call through the guard and record it."""
        spec = find_tool(ferramenta)
        raw = argumentos if isinstance(argumentos, dict) else {}
        if spec is None or not isinstance(argumentos, dict):
            why = (
                f"ferramenta desconhecida: {ferramenta}"
                if spec is None
                else "argumentos devem ser um objeto"
            )
            return self._invalid(conversa_id, ferramenta, raw, why)
        try:
            args = spec.parse(argumentos)
        except PydanticValidationError as exc:
            detalhe = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or '-'}: {e['msg']}" for e in exc.errors()
            )
            return self._invalid(conversa_id, ferramenta, raw, detalhe)
        entidade = spec.entity(args)
        counter = counter_key(conversa_id, entidade, ferramenta)
        if self.architecture == "minima":
            with self._minima_lock:
                self._minima_counts[counter] += 1
                tentativa = self._minima_counts[counter]
            outcome, _ = self._run_tool(spec, args, None)
            return self._record(
                conversa_id, spec, raw, entidade, tentativa, None, outcome, operator
            )
        assert self.ledger is not None
        claim = spec.claim_for(conversa_id, args)
        if claim is not None and spec.secret == "gateway":
            # The claim names the gateway it goes to: reconcile asks that one and no other.
            claim = replace(claim, gateway=self.toolbox.gateway_identity)
        chave = claim.chave if claim else None
        with self.uow.begin() as tx:
            # Only the conversation's customer's own orders and client: another's (or an
            # unknown one) takes no claim and never runs, yet counts against the ceiling,
            # so a model looping on it still ends with a human.
            decision = tx.tx_for(self.events.db)
            assert decision is not None  # the unit of work is on the event log's database
            theirs = owns(decision, conversa_id, spec.entity_field, entidade)
            if not theirs:
                claim = chave = None
            # An operator acting on a takeover is not counted against the agent's ceiling.
            reservation = self.ledger.reserve(counter, claim, count=operator is None, tx=tx)
            blocked = None  # allowed: the tool runs outside the transaction
            if reservation.bloqueado_por_teto:
                reservation, blocked = self._past_teto(
                    conversa_id, spec, entidade, raw, counter, claim, reservation, tx
                )
            if blocked is None and not theirs:
                blocked = _not_found(spec, entidade)
            if blocked is None and reservation.claim not in ("none", "claimed"):
                blocked = self._blocked_by_ledger(
                    conversa_id, spec, entidade, raw, reservation, tx, operator
                )
            if blocked is not None:
                # Blocked: the decision, the takeover and the attempt's event commit together.
                return self._record(
                    conversa_id,
                    spec,
                    raw,
                    entidade,
                    reservation.tentativa,
                    chave,
                    blocked,
                    operator,
                    tx=tx,
                )
        outcome, settle = self._run_tool(spec, args, chave, operator)
        record = partial(
            self._record, conversa_id, spec, raw, entidade, reservation.tentativa, chave
        )
        try:
            with self.uow.begin() as tx:
                if settle is not None:
                    settle(tx)  # ledger completion and the attempt's event commit together
                return record(outcome, operator, tx=tx)
        except Exception as exc:
            if settle is None or chave is None:
                raise
            # The tool answered but its outcome could not be written down (the database
            # dropped us): never ``falhou``, which would let a retry take the claim again.
            log.warning("ledger completion of %s failed (%r): resultado_incerto", chave, exc)
            assert self.ledger is not None
            try:
                with self.uow.begin() as tx:
                    lost: dict[str, Any] = {"erro": f"completion failed: {exc!r}"}
                    self.ledger.mark_uncertain(chave, lost, tx=tx)
                    return record(unrecorded(exc), operator, tx=tx)
            except Exception as again:
                # Still down: the claim stays ``tentando`` and its lease running out makes it
                # ``resultado_incerto`` for the reconcile loop; the caller sees the failure.
                log.error("could not mark %s uncertain either (%r)", chave, again)
                raise exc from again

    # -- paths -----------------------------------------------------------------------------

    def _invalid(
        self, conversa_id: str, ferramenta: str, raw: dict[str, Any], detalhe: str
    ) -> Attempt:
        """Malformed call: recorded, never counted against the ceiling."""
        outcome = CallOutcome(
            "argumentos_invalidos",
            "Não entendi o pedido; pode confirmar os dados?",
            detalhe=detalhe,
        )
        spec = find_tool(ferramenta)
        return self._record(conversa_id, spec, raw, None, 0, None, outcome, ferramenta=ferramenta)

    def _past_teto(
        self,
        conversa_id: str,
        spec: ToolSpec,
        entidade: str,
        raw: dict[str, Any],
        counter: str,
        claim: ClaimRequest | None,
        r: Reservation,
        tx: Work,
    ) -> tuple[Reservation, CallOutcome | None]:
        """Past the ceiling: a human's grant lets it run, a human's decision answers it,
        otherwise the combination goes (or stays) with a human."""
        latest = self.interruptions.latest_for(conversa_id, entidade, spec.name, tx=tx)
        if latest is not None and latest.status == "resolved":
            if self.interruptions.use_grant(latest.id, tx=tx):
                assert self.ledger is not None
                granted = self.ledger.reserve(counter, claim, count=False, tx=tx)
                return replace(granted, tentativa=r.tentativa), None
            if latest.grant_total == 0:  # settled by a human and never reopened
                return r, decided_by_human("bloqueado_por_teto", entidade, latest)
        return r, self._teto(conversa_id, spec, entidade, raw, r, tx)

    def _teto(
        self,
        conversa_id: str,
        spec: ToolSpec,
        entidade: str,
        raw: dict[str, Any],
        r: Reservation,
        tx: Work,
    ) -> CallOutcome:
        self.metrics.interrupcao_por_teto(spec.name)
        ident, _ = self.interruptions.open(
            conversa_id=conversa_id,
            entidade_id=entidade,
            ferramenta=spec.name,
            motivo="teto_de_voltas",
            argumentos=raw,
            attempts=r.tentativa,
            tx=tx,
        )
        return CallOutcome("bloqueado_por_teto", mensagem_de_teto(entidade), interruption_id=ident)

    def _blocked_by_ledger(
        self,
        conversa_id: str,
        spec: ToolSpec,
        entidade: str,
        raw: dict[str, Any],
        r: Reservation,
        tx: Work,
        operator: str | None = None,
    ) -> CallOutcome:
        record = r.record
        if r.claim == "duplicate":
            return CallOutcome(
                "bloqueado_por_idempotencia",
                spec.repeat.format(entidade=entidade),
                dados=record.resultado if record else None,
                detalhe="ja_executado",
            )
        if r.claim == "conflict":
            latest = self.interruptions.latest_for(conversa_id, entidade, spec.name, tx=tx)
            if operator is None and latest is not None and latest.status == "resolved":
                return decided_by_human("bloqueado_por_idempotencia", entidade, latest)
            if operator is not None:  # the operator sees the ledger's facts; no new takeover
                return CallOutcome(
                    "bloqueado_por_idempotencia",
                    f"Já existe uma solicitação diferente para o pedido {entidade}.",
                    detalhe="conflito_de_valor",
                )
            ident, _ = self.interruptions.open(
                conversa_id=conversa_id,
                entidade_id=entidade,
                ferramenta=spec.name,
                motivo="conflito_de_valor",
                argumentos=raw,
                attempts=r.tentativa,
                tx=tx,
            )
            return CallOutcome(
                "bloqueado_por_idempotencia",
                f"Já existe uma solicitação diferente para o pedido {entidade}; um atendente "
                "humano vai revisar.",
                detalhe="conflito_de_valor",
                interruption_id=ident,
            )
        detalhe = "aguardando_reconciliacao" if r.claim == "uncertain" else "em_andamento"
        return CallOutcome(
            "bloqueado_por_idempotencia",
            f"A solicitação do pedido {entidade} já está em processamento; aguarde a confirmação.",
            detalhe=detalhe,
        )

    def _run_tool(
        self, spec: ToolSpec, args: ToolArgs, chave: str | None, operator: str | None = None
    ) -> tuple[CallOutcome, Callable[[Work], None] | None]:
        """Run the tool; return its outcome and how to settle the ledger claim (if any)."""
        ledger = self.ledger if chave else None
        try:
            # minima sends no Idempotency-Key: that is precisely its flaw.
            dados = spec.runner(self.toolbox.credentials(spec), args, chave)
        except GatewayUncertainError as exc:
            settle = (
                _settle(ledger.mark_uncertain, chave, {"erro": exc.message}) if ledger else None
            )
            return CallOutcome(
                "resultado_incerto",
                "Não consegui confirmar o reembolso com o banco; um atendente vai verificar "
                "antes de qualquer nova tentativa.",
                detalhe=exc.message,
                error=exc,
            ), settle
        except CadenciaError as exc:
            settle = _settle(ledger.fail, chave, detalhe_de_falha(exc)) if ledger else None
            return CallOutcome(
                "falhou", mensagem_de_falha(exc), detalhe=exc.message, error=exc
            ), settle
        # The ledger keeps who executed it when a human did (the console shows it).
        done = {**dados, "operador": operator} if operator else dados
        settle = _settle(ledger.complete, chave, done) if ledger else None
        return CallOutcome("executado", spec.success(args), dados=dados), settle

    def _record(
        self,
        conversa_id: str,
        spec: ToolSpec | None,
        raw: dict[str, Any],
        entidade: str | None,
        tentativa: int,
        chave: str | None,
        outcome: CallOutcome,
        operator: str | None = None,
        *,
        tx: Work | None = None,
        ferramenta: str | None = None,
    ) -> Attempt:
        """Record one attempt (``ferramenta`` names an unknown tool, which has no spec)."""
        ferramenta = spec.name if spec else ferramenta
        by_cliente = spec is not None and spec.entity_field == "clienteId"
        record: dict[str, Any] = {
            "evento": TENTATIVA,
            "timestamp": utcnow_iso(),
            "conversaId": conversa_id,
            "pedidoId": None if by_cliente else raw.get("pedidoId"),
            "ferramenta": ferramenta,
            "tentativaNumero": tentativa,
            "resultado": outcome.resultado,
            "chaveIdempotencia": chave,
        }
        if by_cliente:
            record["clienteId"] = entidade
        if outcome.detalhe:
            record["detalhe"] = outcome.detalhe
        if operator:
            record["operador"] = operator
        if outcome.interruption_id:
            record["interrupcaoId"] = outcome.interruption_id
        self.metrics.tentativa(record["ferramenta"], outcome.resultado)
        agent = operator or "atendimento"
        self.events.append(TENTATIVA, record, session_id=conversa_id, agent=agent, tx=tx)
        return Attempt(
            record, outcome.mensagem, outcome.dados, outcome.interruption_id, outcome.error
        )

    # -- recovery --------------------------------------------------------------------------

    def reconcile(self) -> list[tuple[str, str]]:
        """Settle every uncertain claim the gateway can tell about (see
        :meth:`backend.guard.uncertain.UncertainOutcomes.reconcile_all`)."""
        return self.uncertain.reconcile_all() if self.uncertain is not None else []


def _not_found(spec: ToolSpec, entidade: str) -> CallOutcome:
    """The answer for an order or client that is not the conversation's customer's: the
    words of an unknown one, so the answer tells nobody whether it exists."""
    word = "pedido" if spec.entity_field == "pedidoId" else "cliente"
    error = NotFoundError(f"{word} {entidade} não encontrado", entidade=entidade)
    return CallOutcome("falhou", mensagem_de_falha(error), detalhe=error.message, error=error)


def _settle(
    method: Callable[..., None], chave: str | None, detalhe: dict[str, Any]
) -> Callable[[Work], None]:
    assert chave is not None
    """``method(chave, detalhe, tx=work)`` once the caller has its unit of work."""
    return lambda work: method(chave, detalhe, tx=work)
