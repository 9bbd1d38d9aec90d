"""The loop orchestrator: the teto de voltas lives here, in code, never in a prompt.

Order inside one call (DESIGN.md):
schema validation (malformed → ``argumentos_invalidos``, nothing counted) → atomic
ceiling increment (5th+ → ``bloqueado_por_teto``: tool never built, no secret read,
metric emitted, one human takeover per combination) → idempotency claim → tool runs with
its own credentials → ledger completed. Every attempt becomes a
``TENTATIVA_DE_FERRAMENTA_REGISTRADA`` event with the seed's fields.

``architecture="minima"`` is Lab 87's Figure 1 (no ceiling, no idempotency): it exists
only so ``cadencia prove`` can show what the production design prevents.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Literal

from pydantic import ValidationError as PydanticValidationError

from backend.events import TENTATIVA, EventLog, utcnow_iso
from backend.exceptions import CadenciaError, GatewayUncertainError
from backend.guard.interruptions import Interruptions
from backend.guard.toolbox import Toolbox
from backend.ledger.base import Ledger, LedgerRecord, Reservation, counter_key
from backend.ledger.sql import SqlLedger
from backend.metrics import Metrics
from backend.store.db import Tx
from backend.tools.specs import (
    ARG_MODELS,
    CadastroArgs,
    ConsultarArgs,
    ReembolsoArgs,
    claim_for,
    entity_of,
)

Architecture = Literal["minima", "producao"]
Resultado = Literal[
    "executado",
    "bloqueado_por_idempotencia",
    "bloqueado_por_teto",
    "argumentos_invalidos",
    "falhou",
    "resultado_incerto",
]


def mensagem_de_teto(entidade: str) -> str:
    """The seed's handoff message to the customer when the ceiling stops a tool."""
    return (
        "Não consigo confirmar isso automaticamente depois de várias tentativas — vou "
        f"encaminhar para um atendente humano revisar o pedido {entidade}."
    )


@dataclass(frozen=True)
class Attempt:
    """The outcome of one tool call, as recorded and as told to the customer."""

    record: dict[str, Any]
    mensagem: str
    dados: dict[str, Any] | None = None
    interruption_id: int | None = None
    error: CadenciaError | None = None  # why it failed: a dependency, or the tool refusing

    @property
    def resultado(self) -> Resultado:
        """The attempt's ``resultado``."""
        return self.record["resultado"]  # type: ignore[no-any-return]


@dataclass
class _Outcome:
    resultado: Resultado
    mensagem: str
    dados: dict[str, Any] | None = None
    detalhe: str | None = None
    interruption_id: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    error: CadenciaError | None = None


class Orchestrator:
    """Decides, runs and records every tool call of the customer-service agent."""

    def __init__(
        self,
        *,
        ledger: Ledger | None,
        events: EventLog,
        interruptions: Interruptions,
        toolbox: Toolbox,
        metrics: Metrics,
        architecture: Architecture = "producao",
    ) -> None:
        if architecture == "producao" and ledger is None:
            raise ValueError("the production architecture needs a ledger")
        self.ledger = ledger
        self.events = events
        self.interruptions = interruptions
        self.toolbox = toolbox
        self.metrics = metrics
        self.architecture = architecture
        self._minima_counts: Counter[str] = Counter()
        self._minima_lock = threading.Lock()
        self._pending = threading.local()

    def call(
        self, conversa_id: str, ferramenta: str, argumentos: Any, *, operator: str | None = None
    ) -> Attempt:
        """Run one tool call through the guard and record it."""
        model = ARG_MODELS.get(ferramenta)
        raw = argumentos if isinstance(argumentos, dict) else {}
        if model is None or not isinstance(argumentos, dict):
            why = (
                f"ferramenta desconhecida: {ferramenta}"
                if model is None
                else "argumentos devem ser um objeto"
            )
            return self._record(
                conversa_id,
                ferramenta,
                raw,
                None,
                0,
                None,
                _Outcome(
                    "argumentos_invalidos",
                    "Não entendi o pedido; pode confirmar os dados?",
                    detalhe=why,
                ),
            )
        try:
            args = model.model_validate(argumentos)
        except PydanticValidationError as exc:
            detalhe = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or '-'}: {e['msg']}" for e in exc.errors()
            )
            return self._record(
                conversa_id,
                ferramenta,
                raw,
                None,
                0,
                None,
                _Outcome(
                    "argumentos_invalidos",
                    "Não entendi o pedido; pode confirmar os dados?",
                    detalhe=detalhe,
                ),
            )
        entidade = entity_of(args)
        claim = claim_for(ferramenta, conversa_id, args)
        if self.architecture == "minima":
            with self._minima_lock:
                self._minima_counts[counter_key(conversa_id, entidade, ferramenta)] += 1
                tentativa = self._minima_counts[counter_key(conversa_id, entidade, ferramenta)]
            outcome, _ = self._run_tool(ferramenta, args, None)
            return self._record(
                conversa_id, ferramenta, raw, entidade, tentativa, None, outcome, operator
            )
        assert self.ledger is not None
        chave = claim.chave if claim else None
        counter = counter_key(conversa_id, entidade, ferramenta)
        with self._decision_tx() as tx:
            # An operator acting on a takeover is not counted against the agent's ceiling.
            reservation = self.ledger.reserve(counter, claim, count=operator is None)
            if reservation.bloqueado_por_teto:
                blocked = self._teto(conversa_id, ferramenta, entidade, raw, reservation, tx)
            elif reservation.claim not in ("none", "claimed"):
                blocked = self._blocked_by_ledger(
                    conversa_id, ferramenta, entidade, raw, reservation, tx
                )
            else:
                blocked = None  # allowed: the tool runs outside the transaction
            if blocked is not None:
                # Blocked: the decision, the takeover and the attempt's event commit together.
                return self._record(
                    conversa_id,
                    ferramenta,
                    raw,
                    entidade,
                    reservation.tentativa,
                    chave,
                    blocked,
                    operator,
                    tx=tx,
                )
        outcome, settle = self._run_tool(ferramenta, args, chave)
        with self._decision_tx() as tx:
            if settle is not None:
                settle()  # ledger completion and the attempt's event commit together
            return self._record(
                conversa_id,
                ferramenta,
                raw,
                entidade,
                reservation.tentativa,
                chave,
                outcome,
                operator,
                tx=tx,
            )

    @contextmanager
    def _decision_tx(self) -> Iterator[Tx | None]:
        """One transaction for the ledger decision and its event, when they share a database."""
        ledger = self.ledger
        if not isinstance(ledger, SqlLedger) or ledger.db is not self.events.db:
            yield None
            return
        self._pending.events = []
        with self.events.db.transaction() as tx, ledger.using(tx):
            yield tx
        self.events.publish(self._pending.events)
        self._pending.events = []

    # -- paths -----------------------------------------------------------------------------

    def _open_takeover(self, tx: Tx | None, **kwargs: Any) -> int:
        if tx is None:
            ident, _ = self.interruptions.open(**kwargs)
            return ident
        ident, _, events = self.interruptions.open_in(tx, **kwargs)
        self._pending.events.extend(events)
        return ident

    def _teto(
        self,
        conversa_id: str,
        ferramenta: str,
        entidade: str,
        raw: dict[str, Any],
        r: Reservation,
        tx: Tx | None,
    ) -> _Outcome:
        self.metrics.interrupcao_por_teto(ferramenta)
        ident = self._open_takeover(
            tx,
            conversa_id=conversa_id,
            entidade_id=entidade,
            ferramenta=ferramenta,
            motivo="teto_de_voltas",
            argumentos=raw,
            attempts=r.tentativa,
        )
        return _Outcome("bloqueado_por_teto", mensagem_de_teto(entidade), interruption_id=ident)

    def _blocked_by_ledger(
        self,
        conversa_id: str,
        ferramenta: str,
        entidade: str,
        raw: dict[str, Any],
        r: Reservation,
        tx: Tx | None,
    ) -> _Outcome:
        record = r.record
        if r.claim == "duplicate":
            return _Outcome(
                "bloqueado_por_idempotencia",
                _ja_processado(ferramenta, entidade, record),
                dados=record.resultado if record else None,
                detalhe="ja_executado",
            )
        if r.claim == "conflict":
            ident = self._open_takeover(
                tx,
                conversa_id=conversa_id,
                entidade_id=entidade,
                ferramenta=ferramenta,
                motivo="conflito_de_valor",
                argumentos=raw,
                attempts=r.tentativa,
            )
            return _Outcome(
                "bloqueado_por_idempotencia",
                f"Já existe uma solicitação diferente para o pedido {entidade}; um atendente "
                "humano vai revisar.",
                detalhe="conflito_de_valor",
                interruption_id=ident,
            )
        detalhe = "aguardando_reconciliacao" if r.claim == "uncertain" else "em_andamento"
        return _Outcome(
            "bloqueado_por_idempotencia",
            f"A solicitação do pedido {entidade} já está em processamento; aguarde a confirmação.",
            detalhe=detalhe,
        )

    def _run_tool(
        self, ferramenta: str, args: Any, chave: str | None
    ) -> tuple[_Outcome, Callable[[], None] | None]:
        """Run the tool; return its outcome and how to settle the ledger claim (if any)."""
        ledger = self.ledger if chave else None
        try:
            dados = self._execute(args, chave)
        except GatewayUncertainError as exc:
            settle = (
                partial(ledger.mark_uncertain, chave, {"erro": exc.message})
                if ledger and chave
                else None
            )
            return _Outcome(
                "resultado_incerto",
                "Não consegui confirmar o reembolso com o banco; um atendente vai verificar "
                "antes de qualquer nova tentativa.",
                detalhe=exc.message,
                error=exc,
            ), settle
        except CadenciaError as exc:
            settle = (
                partial(ledger.fail, chave, {"erro": exc.message}) if ledger and chave else None
            )
            return _Outcome(
                "falhou",
                f"Não foi possível concluir: {exc.message}",
                detalhe=exc.message,
                error=exc,
            ), settle
        settle = partial(ledger.complete, chave, dados) if ledger and chave else None
        return _Outcome("executado", _executado(ferramenta, args), dados=dados), settle

    def _execute(self, args: Any, chave: str | None) -> dict[str, Any]:
        if isinstance(args, ConsultarArgs):
            return self.toolbox.consulta().run(args)
        if isinstance(args, ReembolsoArgs):
            # minima sends no Idempotency-Key: that is precisely its flaw.
            return self.toolbox.reembolso().run(args, chave)
        if isinstance(args, CadastroArgs):
            return self.toolbox.cadastro().run(args)
        raise TypeError(f"no tool for {type(args).__name__}")

    def _record(
        self,
        conversa_id: str,
        ferramenta: str,
        raw: dict[str, Any],
        entidade: str | None,
        tentativa: int,
        chave: str | None,
        outcome: _Outcome,
        operator: str | None = None,
        *,
        tx: Tx | None = None,
    ) -> Attempt:
        record: dict[str, Any] = {
            "evento": TENTATIVA,
            "timestamp": utcnow_iso(),
            "conversaId": conversa_id,
            "pedidoId": raw.get("pedidoId") if ferramenta != "atualizar-cadastro" else None,
            "ferramenta": ferramenta,
            "tentativaNumero": tentativa,
            "resultado": outcome.resultado,
            "chaveIdempotencia": chave,
        }
        if ferramenta == "atualizar-cadastro":
            record["clienteId"] = entidade
        if outcome.detalhe:
            record["detalhe"] = outcome.detalhe
        if operator:
            record["operador"] = operator
        if outcome.interruption_id:
            record["interrupcaoId"] = outcome.interruption_id
        self.metrics.tentativa(ferramenta, outcome.resultado)
        agent = operator or "atendimento"
        if tx is None:
            self.events.append(TENTATIVA, record, session_id=conversa_id, agent=agent)
        else:
            self._pending.events.append(
                self.events.append_in(tx, TENTATIVA, record, session_id=conversa_id, agent=agent)
            )
        return Attempt(
            record, outcome.mensagem, outcome.dados, outcome.interruption_id, outcome.error
        )

    # -- recovery --------------------------------------------------------------------------

    def reconcile(self) -> list[tuple[str, str]]:
        """Settle every uncertain refund by asking the gateway what happened under its key.

        Returns ``(chave, new status)`` pairs. A refund the gateway did perform is completed
        (and written on the order); one it never saw is released for a later retry.
        """
        if self.ledger is None:
            return []
        self.ledger.expire_stale()
        settled: list[tuple[str, str]] = []
        for record in self.ledger.uncertain():
            if record.ferramenta != "emitir-reembolso":
                continue
            tool = self.toolbox.reembolso()
            found = tool._gateway.lookup(record.chave)
            if found is not None and record.valor is not None:
                from decimal import Decimal

                tool.record(record.entidade_id, Decimal(record.valor))
            status = self.ledger.reconcile(
                record.chave, happened=found is not None, detalhe={"gateway": found}
            )
            settled.append((record.chave, status))
        return settled


def _executado(ferramenta: str, args: Any) -> str:
    if isinstance(args, ReembolsoArgs):
        return f"Reembolso de R$ {args.valor} do pedido {args.pedidoId} emitido."
    if isinstance(args, CadastroArgs):
        return f"Cadastro do cliente {args.clienteId} atualizado."
    return f"Consultei o pedido {getattr(args, 'pedidoId', '')}."


def _ja_processado(ferramenta: str, entidade: str, record: LedgerRecord | None) -> str:
    if ferramenta == "emitir-reembolso":
        return f"O reembolso do pedido {entidade} já foi processado."
    return "Essa atualização de cadastro já foi feita."
