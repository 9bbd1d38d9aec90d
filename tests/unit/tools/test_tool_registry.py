"""The tool registry holds every per-tool rule of DESIGN.md's "Tool-execution rules" table."""

from __future__ import annotations

import dataclasses
from typing import get_args

import pytest
from pydantic import ValidationError as PydanticValidationError

from backend.erp.grants import TOOL_ROLES
from backend.exceptions import ValidationError
from backend.posture.iam_tools import TOOLS as IAM_TOOLS
from backend.tools.exceptions import UnknownToolError
from backend.tools.registry import TOOL_NAMES, TOOLS, ToolName, find_tool, tool_spec

# The table in DESIGN.md, written out once more on purpose: the registry must match it.
DESIGN = {
    "consultar-status-pedido": ("read", "pedidoId"),
    "emitir-reembolso": ("irreversible", "pedidoId"),
    "atualizar-cadastro": ("reversible", "clienteId"),
}


def test_every_tool_has_exactly_one_spec() -> None:
    assert set(get_args(ToolName)) == set(TOOL_NAMES) == set(TOOLS) == set(DESIGN)
    for name, spec in TOOLS.items():
        assert spec.name == name
        assert tool_spec(name) is spec


@pytest.mark.parametrize("name", list(DESIGN))
def test_kind_and_entity_field_are_those_of_the_design(name: str) -> None:
    spec = tool_spec(name)
    assert (spec.kind, spec.entity_field) == DESIGN[name]
    assert spec.entity_field in spec.arguments.model_fields


def test_unknown_tool_is_a_clear_validation_error() -> None:
    with pytest.raises(UnknownToolError) as caught:
        tool_spec("emitir-reembolsos")
    assert isinstance(caught.value, ValidationError)
    assert "emitir-reembolsos" in caught.value.message
    assert all(name in caught.value.message for name in TOOLS)
    assert find_tool("emitir-reembolsos") is None


def test_specs_are_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        tool_spec("emitir-reembolso").kind = "read"  # type: ignore[misc]


def test_read_claims_nothing() -> None:
    spec = tool_spec("consultar-status-pedido")
    assert spec.claim_for("conv-1", spec.parse({"pedidoId": "4821"})) is None


def test_refund_is_claimed_once_per_pedido_across_conversations() -> None:
    spec = tool_spec("emitir-reembolso")
    first = spec.claim_for("conv-1", spec.parse({"pedidoId": "4821", "valor": "129.9"}))
    other_conv = spec.claim_for("conv-2", spec.parse({"pedidoId": "4821", "valor": "129.90"}))
    other_valor = spec.claim_for("conv-1", spec.parse({"pedidoId": "4821", "valor": "99.00"}))
    other_order = spec.claim_for("conv-1", spec.parse({"pedidoId": "4822", "valor": "129.90"}))
    assert first is not None
    assert other_conv is not None
    assert other_valor is not None
    assert other_order is not None
    # Stored keys depend on this shape: it must never change.
    assert first.chave == other_conv.chave == other_valor.chave == "reembolso#4821"
    assert first.payload_hash == other_conv.payload_hash  # 129.9 and 129.90 are one refund
    assert first.valor == "129.90"
    # Same key, another valor: the ledger sees a conflict and a human decides.
    assert other_valor.payload_hash != first.payload_hash
    assert other_order.chave == "reembolso#4822"


def test_cadastro_is_claimed_once_per_payload_per_conversation() -> None:
    spec = tool_spec("atualizar-cadastro")
    email = {"clienteId": "c-17", "email": "a@b.co"}
    same = spec.claim_for("conv-1", spec.parse(email))
    again = spec.claim_for("conv-1", spec.parse(dict(email)))
    other_payload = spec.claim_for("conv-1", spec.parse({**email, "email": "x@y.co"}))
    other_conv = spec.claim_for("conv-2", spec.parse(email))
    assert same is not None
    assert again is not None
    assert other_payload is not None
    assert other_conv is not None
    assert same.chave == again.chave
    assert same.chave.startswith("cadastro#conv-1#c-17#")
    assert other_payload.chave != same.chave
    assert other_conv.chave != same.chave
    assert same.entidade_id == "c-17"


def test_arguments_are_validated_by_the_spec_model() -> None:
    with pytest.raises(PydanticValidationError):
        tool_spec("emitir-reembolso").parse({"pedidoId": "4821", "valor": "-1"})
    with pytest.raises(PydanticValidationError):
        tool_spec("atualizar-cadastro").parse({"clienteId": "c-17"})  # no contact field
    with pytest.raises(PydanticValidationError):
        tool_spec("consultar-status-pedido").parse({"pedidoId": "4821", "extra": 1})


def test_each_tool_runs_as_its_own_role_and_only_the_refund_reads_the_gateway_secret() -> None:
    roles = [spec.role for spec in TOOLS.values()]
    assert sorted(roles) == sorted(TOOL_ROLES)
    assert {name for name, spec in TOOLS.items() if spec.secret} == {"emitir-reembolso"}
    assert {name for name, spec in TOOLS.items() if spec.reconciler} == {"emitir-reembolso"}
    # The IAM model is read off the registry: same roles, the secret only where the spec says.
    for name, spec in TOOLS.items():
        grants = IAM_TOOLS[name]
        assert grants.db_user == spec.role
        assert ("secretsmanager:getsecretvalue" in grants.required) == (spec.secret is not None)


def test_success_and_repeat_messages_name_the_entity() -> None:
    refund = tool_spec("emitir-reembolso")
    args = refund.parse({"pedidoId": "4821", "valor": "129.90"})
    assert refund.success(args) == "Reembolso de R$ 129.90 do pedido 4821 emitido."
    assert "4821" in refund.repeat.format(entidade="4821")
    cadastro = tool_spec("atualizar-cadastro")
    assert "c-17" in cadastro.success(cadastro.parse({"clienteId": "c-17", "email": "a@b.co"}))
