"""What one tool call came to: its ``resultado``, the customer's message, the record.

The orchestrator (:mod:`backend.guard.orchestrator`) decides; these are the shapes and the
fixed customer-facing wordings it answers with.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from backend.events.payloads import Resultado
from backend.exceptions import CadenciaError
from backend.guard.interruptions import Interruption


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
