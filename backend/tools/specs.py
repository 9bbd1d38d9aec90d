"""The three customer-service tools' argument models (pydantic, the tool-call boundary).

Which tool takes which model, and every other per-tool rule, is in
:mod:`backend.tools.registry`.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from backend.erp.fields import Email, Endereco, EntityId, Telefone


class ToolArgs(BaseModel):
    """Base of every tool's arguments: unknown fields are malformed reasoning, not noise."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    def claim_payload(self) -> dict[str, Any]:
        """What the idempotency claim hashes: two calls with equal payloads are one action."""
        return self.model_dump(mode="json", exclude_none=True)

    def claim_valor(self) -> str | None:
        """The amount the ledger keeps with the claim (refunds only)."""
        return None


class ConsultarArgs(ToolArgs):
    """Arguments of ``consultar-status-pedido``."""

    pedidoId: EntityId


class ReembolsoArgs(ToolArgs):
    """Arguments of ``emitir-reembolso``."""

    pedidoId: EntityId
    valor: Annotated[Decimal, Field(gt=0, max_digits=12, decimal_places=2)]

    def claim_payload(self) -> dict[str, Any]:
        """``pedidoId`` and the amount to the cent: ``10`` and ``10.00`` are one refund."""
        return {"pedidoId": self.pedidoId, "valor": self.claim_valor()}

    def claim_valor(self) -> str:
        """The amount as stored on the claim, quantized to the cent."""
        return str(self.valor.quantize(Decimal("0.01")))


class CadastroArgs(ToolArgs):
    """Arguments of ``atualizar-cadastro``: at least one contact field."""

    clienteId: EntityId
    endereco: Endereco | None = None
    telefone: Telefone | None = None
    email: Email | None = None

    @model_validator(mode="after")
    def _some_field(self) -> CadastroArgs:
        if self.endereco is None and self.telefone is None and self.email is None:
            raise ValueError("at least one of endereco, telefone, email is required")
        return self

    def changes(self) -> dict[str, str]:
        """The contact columns to update (only the ones given)."""
        return {
            k: v
            for k, v in (
                ("endereco", self.endereco),
                ("telefone", self.telefone),
                ("email", self.email),
            )
            if v is not None
        }

    def claim_payload(self) -> dict[str, Any]:
        """The contact changes alone: the cliente is part of the claim's key."""
        return dict(self.changes())
