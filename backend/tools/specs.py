"""The three customer-service tools' argument schemas and ledger rules (Lab 87, corrected).

| tool | kind | entity | idempotency |
|---|---|---|---|
| consultar-status-pedido | read | pedidoId | none: re-reads |
| emitir-reembolso | irreversible | pedidoId | once per pedido across conversations (so also once per (conversa, pedido)); another valor → conflict, handed to a human |
| atualizar-cadastro | reversible write | clienteId | an identical payload in one conversation executes once |
"""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator

from backend.ledger.base import ClaimRequest, payload_hash

ToolName = Literal["consultar-status-pedido", "emitir-reembolso", "atualizar-cadastro"]
TOOL_NAMES: tuple[ToolName, ...] = (
    "consultar-status-pedido",
    "emitir-reembolso",
    "atualizar-cadastro",
)

EntityId = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")]


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


class ConsultarArgs(_Args):
    """Arguments of ``consultar-status-pedido``."""

    pedidoId: EntityId


class ReembolsoArgs(_Args):
    """Arguments of ``emitir-reembolso``."""

    pedidoId: EntityId
    valor: Annotated[Decimal, Field(gt=0, max_digits=12, decimal_places=2)]


class CadastroArgs(_Args):
    """Arguments of ``atualizar-cadastro``: at least one contact field."""

    clienteId: EntityId
    endereco: Annotated[str, StringConstraints(min_length=1, max_length=300)] | None = None
    telefone: Annotated[str, StringConstraints(pattern=r"^\+?[0-9 ()-]{6,25}$")] | None = None
    email: (
        Annotated[str, StringConstraints(pattern=r"^[^@\s]+@[^@\s]+\.[^@\s]+$", max_length=254)]
        | None
    ) = None

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


ARG_MODELS: dict[str, type[_Args]] = {
    "consultar-status-pedido": ConsultarArgs,
    "emitir-reembolso": ReembolsoArgs,
    "atualizar-cadastro": CadastroArgs,
}


def entity_of(args: _Args) -> str:
    """The ceiling's entity: the pedido, or the cliente for ``atualizar-cadastro``."""
    if isinstance(args, CadastroArgs):
        return args.clienteId
    return args.pedidoId  # type: ignore[attr-defined, no-any-return]


def claim_for(ferramenta: str, conversa_id: str, args: _Args) -> ClaimRequest | None:
    """The ledger claim a call needs before it runs, or None for a plain read."""
    if isinstance(args, ReembolsoArgs):
        valor = str(args.valor.quantize(Decimal("0.01")))
        return ClaimRequest(
            chave=f"reembolso#{args.pedidoId}",
            ferramenta=ferramenta,
            conversa_id=conversa_id,
            entidade_id=args.pedidoId,
            payload_hash=payload_hash({"pedidoId": args.pedidoId, "valor": valor}),
            valor=valor,
        )
    if isinstance(args, CadastroArgs):
        digest = payload_hash(args.changes())
        return ClaimRequest(
            chave=f"cadastro#{conversa_id}#{args.clienteId}#{digest[:16]}",
            ferramenta=ferramenta,
            conversa_id=conversa_id,
            entidade_id=args.clienteId,
            payload_hash=digest,
        )
    return None


def tool_json_schemas() -> dict[str, dict[str, Any]]:
    """JSON schemas of the arguments, for model providers' tool specs."""
    return {name: model.model_json_schema() for name, model in ARG_MODELS.items()}
