"""Response models of the ledger's facts and of uncertain outcomes.

:mod:`backend.api.schemas` re-exports them.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from backend.guard.orchestrator import Resultado


class _Out(BaseModel):
    model_config = ConfigDict(extra="ignore")


class LedgerFacts(_Out):
    """What the ledger holds for a takeover's entity: its claim's status, amount, when and
    in which conversation, and the operator who executed it (if a human did)."""

    status: Literal["tentando", "executado", "falhou", "resultado_incerto"]
    valor: str | None
    conversaId: str | None
    ts: str | None
    chaveIdempotencia: str
    operador: str | None
    motivo: str | None = Field(
        default=None, description="why a falhou failed: the gateway's refusal and its reason"
    )
    recusado_pelo_banco: bool = Field(
        default=False, description="the gateway refused it for good: correct the valor, or deny"
    )


class UncertainItem(_Out):
    """An uncertain outcome waiting for a human: ask the gateway, or settle it by hand."""

    id: str = Field(description="URL-safe id of the ledger key")
    chaveIdempotencia: str
    pedidoId: str | None
    valor: str | None
    conversaId: str
    since: str
    age_s: float
    actions: list[Literal["reconcile", "settle"]]


class UncertainOut(_Out):
    """``POST /api/uncertain/{id}/reconcile`` and ``.../settle``: what it came to."""

    id: str
    outcome: Resultado | None
    settled: bool
    message: str
