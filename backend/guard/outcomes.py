"""What one tool call came to: its ``resultado``, the customer's message, the record.

The orchestrator (:mod:`backend.guard.orchestrator`) decides; these are the shapes and the
fixed customer-facing wordings it answers with.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from backend.events.payloads import Resultado
from backend.exceptions import CadenciaError
from backend.gateway.exceptions import GatewayRefusedError
from backend.guard.interruptions import Interruption
from backend.ledger.base import LedgerRecord, RecordStatus
from backend.tools.exceptions import ToolRefusedError
from backend.tools.registry import find_tool


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
class CallOutcome:
    resultado: Resultado
    mensagem: str
    dados: dict[str, Any] | None = None
    detalhe: str | None = None
    interruption_id: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    error: CadenciaError | None = None


def decided_by_human(resultado: Resultado, entidade: str, settled: Interruption) -> CallOutcome:
    """The agent's answer on a combination a human settled: the human's outcome."""
    told = f": {settled.reply}" if settled.reply else "."
    return CallOutcome(
        resultado,
        f"Um atendente humano já decidiu sobre o pedido {entidade}{told}",
        detalhe=(
            f"decidido_por_operador: {settled.resolution} "
            f"({settled.outcome or 'nada executado'}, interrupção {settled.id})"
        ),
    )


def unrecorded(exc: Exception) -> CallOutcome:
    return CallOutcome(
        "resultado_incerto",
        "Não consegui confirmar o resultado; um atendente vai verificar antes de qualquer "
        "nova tentativa.",
        detalhe=f"conclusão não registrada: {type(exc).__name__}",
    )


def mensagem_de_falha(exc: CadenciaError) -> str:
    """What the customer is told when a tool call came to ``falhou``: the refusal's own
    customer words (the bank's reason, "o valor pedido é maior..."), never the internal
    text the ledger and the operator read."""
    words = exc.customer if isinstance(exc, ToolRefusedError | GatewayRefusedError) else None
    return f"Não foi possível concluir: {words or exc.message}"


def detalhe_de_falha(exc: CadenciaError) -> dict[str, Any]:
    """What the ledger keeps about a ``falhou``: the error and, for a gateway's refusal,
    its status and reason (the takeover and the Inbox show them)."""
    detalhe: dict[str, Any] = {"erro": exc.message}
    if isinstance(exc, GatewayRefusedError):
        detalhe["recusa"] = {"status": exc.status, "motivo": exc.reason}
    return detalhe


def mensagem_de_acerto(record: LedgerRecord, status: RecordStatus) -> str | None:
    """What the customer is told when an uncertain claim is settled (None: nothing to
    tell, the claim is not settled)."""
    spec = find_tool(record.ferramenta)
    pedido = spec is None or spec.entity_field == "pedidoId"
    what = f"pedido {record.entidade_id}" if pedido else f"cadastro {record.entidade_id}"
    if status == "executado":
        if record.valor is not None:
            return (
                f"Confirmamos com o banco: o reembolso de R$ {record.valor} do {what} foi emitido."
            )
        return f"Confirmamos: sua solicitação sobre o {what} foi concluída."
    if status == "falhou":
        if record.valor is not None:
            return (
                f"Verificamos com o banco: o reembolso do {what} não foi efetuado e nenhum "
                "valor foi transferido. Se ainda quiser o reembolso, é só pedir de novo."
            )
        return (
            f"Verificamos: sua solicitação sobre o {what} não foi concluída. Se quiser, é só "
            "pedir de novo."
        )
    return None
