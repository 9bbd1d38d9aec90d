"""Agent definitions and their tool registries."""

from __future__ import annotations

import pytest

from backend.agents.policy import ACTION_TYPES
from backend.agents.team import SESSION_AGENTS, agent, dev_agent_id, role_of
from backend.exceptions import NotFoundError


def test_infra_registry_is_exactly_validate_and_propose_never_a_terminal() -> None:
    infra = agent("infra")
    assert [tool.name for tool in infra.tools] == ["validate_infra_file", "propose_infra_pr"]
    assert [tool.action for tool in infra.tools] == [None, "open_infra_pr"]
    assert infra.tool("terminal") is None
    assert infra.conversational


def test_no_agent_has_a_terminal_tool() -> None:
    for agent_id in [*SESSION_AGENTS, "qa", "secops", "dev-api", "atendimento"]:
        definition = agent(agent_id)
        assert all(tool.action != "terminal" for tool in definition.tools), agent_id
        assert all(tool.action is None or tool.action in ACTION_TYPES for tool in definition.tools)


def test_dev_agents_are_built_per_module() -> None:
    dev = agent(dev_agent_id("api"))
    assert (dev.id, dev.scope, dev.role) == ("dev-api", "project", "developer (api)")
    assert dev.tool("propose_task_pr") is not None


def test_gate_agents_have_no_model_tools() -> None:
    assert agent("qa").tools == ()
    assert agent("secops").tools == ()


def test_customer_service_offers_the_three_guarded_tools() -> None:
    atendimento = agent("atendimento")
    assert atendimento.scope == "conversation"
    names = [spec.name for spec in atendimento.tool_specs()]
    assert names == ["consultar-status-pedido", "emitir-reembolso", "atualizar-cadastro"]
    refund = atendimento.tool("emitir-reembolso")
    assert refund is not None
    assert set(refund.spec.input_schema["required"]) == {"pedidoId", "valor"}


def test_customer_service_prompt_names_its_tools_and_only_informs_of_the_ceiling() -> None:
    prompt = agent("atendimento").system_prompt
    for spec in agent("atendimento").tool_specs():
        assert spec.name in prompt
    assert "Nunca prometa o que a ferramenta não confirmou" in prompt
    assert "nunca numa frase deste prompt" in prompt  # the seed: the ceiling lives in code
    for resultado in ("executado", "bloqueado_por_idempotencia", "bloqueado_por_teto"):
        assert f'"{resultado}"' in prompt


def test_tool_specs_are_json_schema_objects_with_provider_safe_names() -> None:
    import re

    for agent_id in [*SESSION_AGENTS, "dev-api", "atendimento"]:
        for spec in agent(agent_id).tool_specs():
            assert re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", spec.name)
            assert spec.input_schema["type"] == "object"
            assert spec.description


def test_unknown_agents() -> None:
    with pytest.raises(NotFoundError):
        agent("dev-")
    with pytest.raises(NotFoundError):
        agent("psicologo")
    assert role_of("psicologo") == "agent"
