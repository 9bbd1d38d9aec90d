"""The tool registry: one frozen spec per customer-service tool (Lab 87, corrected).

Every per-tool fact lives in its :class:`ToolSpec`; the orchestrator, the takeovers, the
proof harness, the IAM model and the agent's tool list read it, and nothing outside this
package compares tool names. :data:`TOOLS` says what each of the three tools claims.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from types import MappingProxyType
from typing import Any, Literal, Protocol

from backend.erp.connections import ToolConnection
from backend.erp.grants import ROLE_CADASTRO, ROLE_CONSULTA, ROLE_REEMBOLSO
from backend.gateway.client import GatewayClient
from backend.ledger.base import ClaimRequest, LedgerRecord, payload_hash
from backend.tools.erp_tools import (
    AtualizarCadastro,
    ConsultarStatusPedido,
    EmitirReembolso,
    valor_do_pedido,
)
from backend.tools.exceptions import UnknownToolError
from backend.tools.names import (  # re-exported: the registry is where callers look
    ATUALIZAR_CADASTRO as ATUALIZAR_CADASTRO,
)
from backend.tools.names import (
    CONSULTAR_STATUS_PEDIDO as CONSULTAR_STATUS_PEDIDO,
)
from backend.tools.names import (
    EMITIR_REEMBOLSO as EMITIR_REEMBOLSO,
)
from backend.tools.names import TOOL_NAMES as TOOL_NAMES
from backend.tools.names import ToolName as ToolName
from backend.tools.specs import CadastroArgs, ConsultarArgs, ReembolsoArgs, ToolArgs

ToolKind = Literal["read", "irreversible", "reversible"]
EntityField = Literal["pedidoId", "clienteId"]
ClaimScope = Literal["none", "entity", "conversation_payload"]
SecretName = Literal["gateway"]

_ROLE_PREFIX = "cadencia_agente_"


class ToolCredentials(Protocol):
    """What a runner is handed: its own tool's credentials and nobody else's."""

    @property
    def erp(self) -> ToolConnection:
        """The ERP connection as the tool's own login role."""
        ...

    def gateway(self) -> GatewayClient:
        """The payment gateway; reads the secret, so only a tool whose spec names it may."""
        ...


Runner = Callable[[ToolCredentials, Any, "str | None"], dict[str, Any]]
"""``runner(credentials, args, idempotency_key) -> dados``; raises on failure."""
Reconciler = Callable[[ToolCredentials, LedgerRecord], "dict[str, Any] | None"]
"""Asks the outside world what happened under an uncertain claim; None: it never did."""
AmountLimit = Callable[[ToolCredentials, Any], Decimal]
"""The most an operator's corrected amount may be for these arguments (the order's value)."""


@dataclass(frozen=True)
class ClaimRule:
    """How a call's idempotency claim (and so its key) is formed.

    Attributes:
        scope: ``none`` — no claim, the call runs every time (reads).
            ``entity`` — one key per entity across every conversation: at most once per
            pedido, hence also once per (conversa, pedido); the same key with another
            payload (another ``valor``) is a conflict, blocked and handed to a human.
            ``conversation_payload`` — one key per (conversa, entity, payload): the same
            payload twice in a conversation executes once; a different payload executes.
        prefix: the key's first segment (``reembolso#4821``); stored keys depend on it.
    """

    scope: ClaimScope
    prefix: str = ""

    def request(
        self, ferramenta: str, conversa_id: str, entidade: str, args: ToolArgs
    ) -> ClaimRequest | None:
        """The claim one call needs before it runs, or None when the rule claims nothing."""
        if self.scope == "none":
            return None
        digest = payload_hash(args.claim_payload())
        if self.scope == "entity":
            chave = f"{self.prefix}#{entidade}"
        else:
            chave = f"{self.prefix}#{conversa_id}#{entidade}#{digest[:16]}"
        return ClaimRequest(
            chave=chave,
            ferramenta=ferramenta,
            conversa_id=conversa_id,
            entidade_id=entidade,
            payload_hash=digest,
            valor=args.claim_valor(),
        )


@dataclass(frozen=True)
class ToolSpec:
    """Everything the product knows about one tool.

    Attributes:
        name: the tool's name as the model calls it.
        kind: ``read``, ``irreversible`` (money moves) or ``reversible`` (a write a human
            can undo).
        entity_field: the argument naming the entity the ceiling counts per
            (conversa, entity, ferramenta) and a takeover is about.
        arguments: the pydantic model a call's arguments must validate against.
        claim: how the idempotency claim is formed.
        runner: runs the tool with its own credentials.
        success: the customer-facing message after it executed.
        repeat: the message when the claim shows it already happened (``{entidade}``).
        description: the one line the model sees in its tool list.
        role: the PostgreSQL login role (and IAM role word) the tool runs as.
        secret: the secret the tool reads when it runs, if any (the payment gateway's).
        reconciler: settles an uncertain claim by asking the gateway, if the tool can
            leave one.
        amount_limit: for a tool whose ``valor`` an operator may correct before executing,
            the ceiling of that correction, read with the tool's own credentials.
    """

    name: ToolName
    kind: ToolKind
    entity_field: EntityField
    arguments: type[ToolArgs]
    claim: ClaimRule
    runner: Runner
    success: Callable[[Any], str]
    repeat: str
    description: str
    role: str
    secret: SecretName | None = None
    reconciler: Reconciler | None = None
    amount_limit: AmountLimit | None = None

    @property
    def short(self) -> str:
        """The word in the tool's role, user and resource names (``consulta``...)."""
        return self.role.removeprefix(_ROLE_PREFIX)

    def parse(self, argumentos: Any) -> ToolArgs:
        """Validate raw arguments; raises pydantic's ``ValidationError`` when malformed."""
        return self.arguments.model_validate(argumentos)

    def entity(self, args: ToolArgs) -> str:
        """The entity id a validated call is about."""
        return str(getattr(args, self.entity_field))

    def claim_for(self, conversa_id: str, args: ToolArgs) -> ClaimRequest | None:
        """The ledger claim this call needs before it runs, or None for a plain read."""
        return self.claim.request(self.name, conversa_id, self.entity(args), args)

    def json_schema(self) -> dict[str, Any]:
        """JSON schema of the arguments, for model providers' tool specs."""
        return self.arguments.model_json_schema()


def _run_consulta(creds: ToolCredentials, args: ConsultarArgs, chave: str | None) -> dict[str, Any]:
    return ConsultarStatusPedido(creds.erp).run(args)


def _run_reembolso(
    creds: ToolCredentials, args: ReembolsoArgs, chave: str | None
) -> dict[str, Any]:
    # Architecture "minima" passes no key: the gateway then cannot deduplicate (its flaw).
    return EmitirReembolso(creds.erp, creds.gateway()).run(args, chave)


def _reconcile_reembolso(creds: ToolCredentials, record: LedgerRecord) -> dict[str, Any] | None:
    tool = EmitirReembolso(creds.erp, creds.gateway())
    return tool.reconcile(record.chave, record.entidade_id, record.valor)


def _limit_reembolso(creds: ToolCredentials, args: ReembolsoArgs) -> Decimal:
    return valor_do_pedido(creds.erp, args.pedidoId)


def _run_cadastro(creds: ToolCredentials, args: CadastroArgs, chave: str | None) -> dict[str, Any]:
    return AtualizarCadastro(creds.erp).run(args)


_SPECS = (
    ToolSpec(
        name=CONSULTAR_STATUS_PEDIDO,
        kind="read",
        entity_field="pedidoId",
        arguments=ConsultarArgs,
        claim=ClaimRule("none"),
        runner=_run_consulta,
        success=lambda a: f"Consultei o pedido {a.pedidoId}.",
        repeat="Já consultei o pedido {entidade}.",
        description="Read the status of one order (pedido).",
        role=ROLE_CONSULTA,
    ),
    ToolSpec(
        name=EMITIR_REEMBOLSO,
        kind="irreversible",
        entity_field="pedidoId",
        arguments=ReembolsoArgs,
        claim=ClaimRule("entity", "reembolso"),
        runner=_run_reembolso,
        success=lambda a: f"Reembolso de R$ {a.valor} do pedido {a.pedidoId} emitido.",
        repeat="O reembolso do pedido {entidade} já foi processado.",
        description="Refund an order. Irreversible: at most once per pedido.",
        role=ROLE_REEMBOLSO,
        secret="gateway",
        reconciler=_reconcile_reembolso,
        amount_limit=_limit_reembolso,
    ),
    ToolSpec(
        name=ATUALIZAR_CADASTRO,
        kind="reversible",
        entity_field="clienteId",
        arguments=CadastroArgs,
        claim=ClaimRule("conversation_payload", "cadastro"),
        runner=_run_cadastro,
        success=lambda a: f"Cadastro do cliente {a.clienteId} atualizado.",
        repeat="Essa atualização de cadastro já foi feita.",
        description="Update a customer's contact data (endereco, telefone, email).",
        role=ROLE_CADASTRO,
    ),
)

TOOLS: Mapping[ToolName, ToolSpec] = MappingProxyType({s.name: s for s in _SPECS})
"""Every tool by name:

- ``consultar-status-pedido``: read, per pedidoId, no claim (every call re-reads).
- ``emitir-reembolso``: irreversible, per pedidoId, at most once per pedido across
  conversations (so also once per (conversa, pedido)); another valor is a conflict,
  blocked and handed to a human.
- ``atualizar-cadastro``: reversible, per clienteId; an identical payload in one
  conversation executes once, another payload executes.
"""
_BY_NAME: dict[str, ToolSpec] = {s.name: s for s in _SPECS}  # the same, keyed by any str


def find_tool(name: str) -> ToolSpec | None:
    """The spec of tool ``name``, or None when no tool has that name (e.g. a model's typo)."""
    return _BY_NAME.get(name)


def tool_spec(name: str) -> ToolSpec:
    """The spec of tool ``name``.

    Raises:
        UnknownToolError: ``name`` is not a registered tool (the message lists them).
    """
    spec = _BY_NAME.get(name)
    if spec is None:
        raise UnknownToolError(
            f"unknown tool {name!r}; expected one of: {', '.join(TOOLS)}", tool=name
        )
    return spec
