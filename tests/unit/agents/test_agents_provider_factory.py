"""Provider specs and per-agent model bindings."""

from __future__ import annotations

import pytest

from backend.agents.providers import (
    ScriptedProvider,
    is_planner,
    make_provider,
    model_binding,
)
from backend.agents.providers.base import ToolResultMessage, UserMessage
from backend.agents.providers.bedrock import BedrockProvider
from backend.agents.providers.chatty import ChattyAtendimentoModel
from backend.agents.providers.dev_offline import DevOfflineModel, task_header
from backend.agents.providers.openai import OpenAIProvider
from backend.agents.providers.retry import RetryingProvider
from backend.exceptions import ConfigError
from backend.settings import Settings


def _settings(**kw: object) -> Settings:
    return Settings(_env_file=None, **kw)  # type: ignore[call-arg]


def test_binding_prefers_exact_override_then_dev_wildcard_then_default() -> None:
    settings = _settings(
        model="bedrock:anthropic.claude",
        agent_models={"infra": "planner", "dev-*": "openai:gpt-x@http://h/v1"},
    )
    assert model_binding("infra", settings) == "planner"
    assert model_binding("dev-api", settings) == "openai:gpt-x@http://h/v1"
    assert model_binding("po", settings) == "bedrock:anthropic.claude"


def test_atendimento_is_bound_like_every_agent_and_scripted_means_chatty() -> None:
    assert model_binding("atendimento", _settings()) == "chatty"
    assert model_binding("atendimento", _settings(agent_models={"*": "scripted"})) == "chatty"
    assert model_binding("po", _settings()) == "scripted"  # the team keeps its script
    assert model_binding("atendimento", _settings(model="bedrock:m")) == "bedrock:m"
    bound = _settings(model="bedrock:m", agent_models={"atendimento": "openai:g@http://h/v1"})
    assert model_binding("atendimento", bound) == "openai:g@http://h/v1"
    assert model_binding("atendimento", _settings(agent_models={"*": "chatty"})) == "chatty"


def test_chatty_spec_builds_the_offline_customer_service_model() -> None:
    provider = make_provider("chatty", settings=_settings(), agent_id="atendimento")
    assert isinstance(provider, ChattyAtendimentoModel)
    assert provider.name == "chatty"


def test_scripted_spec_builds_a_scripted_provider_for_the_agent() -> None:
    provider = make_provider(
        "scripted", settings=_settings(), scripts={"agents": {"po": [{"text": "x"}]}}, agent_id="po"
    )
    assert isinstance(provider, ScriptedProvider)
    assert len(provider.turns) == 1


def test_scripted_for_a_dev_agent_is_the_offline_dev_model_unless_scripted_by_name() -> None:
    script = {"agents": {"po": [{"text": "x"}], "dev-web": [{"text": "y"}]}}
    settings = _settings()
    for spec, agent in (("scripted", "dev-api"), ("dev-offline", "dev-api"), ("dev-offline", "po")):
        provider = make_provider(spec, settings=settings, scripts=script, agent_id=agent)
        assert isinstance(provider, DevOfflineModel)
        assert provider.name == "dev-offline"
    named = make_provider("scripted", settings=settings, scripts=script, agent_id="dev-web")
    assert isinstance(named, ScriptedProvider)


async def test_the_offline_dev_model_lists_reads_writes_then_proposes() -> None:
    model = DevOfflineModel("dev-api")
    user = UserMessage(task_header("tsk_1", "api", "services/api", "Say hi") + "\nmore")
    steps = []
    messages: list = [user]
    replies = {
        "list_files": '{"files": ["services/api/README.md"], "truncated": 0}',
        "read_file": '{"path": "services/api/README.md", "content": "# api\\n"}',
        "write_file": '{"path": "services/api/README.md", "bytes": 30}',
        "propose_task_pr": '{"pr_action_id": "act_1", "gate_status": "awaiting_qa"}',
    }
    for _ in range(5):
        turn = await model.complete(system="", messages=messages, tools=[])
        if not turn.tool_calls:
            break
        [call] = turn.tool_calls
        steps.append((call.name, call.arguments))
        messages += [turn.as_message(), ToolResultMessage(call.id, call.name, replies[call.name])]
    assert steps == [
        ("list_files", {"path": "services/api"}),
        ("read_file", {"path": "services/api/README.md"}),
        (
            "write_file",
            {"path": "services/api/README.md", "content": "# api\n\n- Say hi (by dev-api)\n"},
        ),
        ("propose_task_pr", {"task_id": "tsk_1"}),
    ]
    assert turn.text is not None
    assert "act_1 is awaiting_qa" in turn.text
    failed = [user, ToolResultMessage("c", "list_files", '{"error": "no"}', is_error=True)]
    blocked = await model.complete(system="", messages=failed, tools=[])
    assert blocked.tool_calls[0].name == "report_blocked"
    assert blocked.tool_calls[0].arguments == {
        "task_id": "tsk_1",
        "reason": "list_files failed: no",
    }


def test_bedrock_spec_uses_the_model_id_and_the_injected_client() -> None:
    client = object()
    provider = make_provider(
        "bedrock:anthropic.claude-3-haiku-20240307-v1:0",
        settings=_settings(),
        bedrock_client=client,
    )
    assert isinstance(provider, RetryingProvider)  # bedrock: and openai: calls are retried
    assert isinstance(provider.inner, BedrockProvider)
    assert provider.model_id == "anthropic.claude-3-haiku-20240307-v1:0"
    assert provider.client is client


def test_bedrock_spec_builds_a_real_client_from_settings() -> None:
    provider = make_provider(
        "bedrock:m",
        settings=_settings(aws_region="eu-west-1", aws_endpoint_url="http://127.0.0.1:9"),
    )
    assert isinstance(provider.inner, BedrockProvider)
    assert provider.client.meta.region_name == "eu-west-1"
    # botocore makes one attempt per call: the RetryingProvider owns the retries
    assert provider.client.meta.config.retries["total_max_attempts"] == 1
    assert provider.client.meta.endpoint_url == "http://127.0.0.1:9"


def test_openai_spec_with_base_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CADENCIA_OPENAI_API_KEY", "sk-test")
    provider = make_provider("openai:llama3@http://127.0.0.1:11434/v1/", settings=_settings())
    assert isinstance(provider.inner, OpenAIProvider)
    assert provider.spec == "openai:llama3@http://127.0.0.1:11434/v1"
    assert (provider.model, provider.url, provider.api_key) == (
        "llama3",
        "http://127.0.0.1:11434/v1/chat/completions",
        "sk-test",
    )


def test_openai_spec_without_key_for_the_public_endpoint_is_a_config_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for var in (
        "CADENCIA_OPENAI_API_KEY",
        "OPENAI_API_KEY",
        "CADENCIA_OPENAI_BASE_URL",
        "OPENAI_BASE_URL",
    ):
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(ConfigError, match="API key"):
        make_provider("openai:gpt-4o", settings=_settings())


@pytest.mark.parametrize(
    "spec", ["gemini:x", "bedrock:", "openai:", "scripted:extra", "chatty:x", ""]
)
def test_unknown_specs_are_config_errors(spec: str) -> None:
    with pytest.raises(ConfigError, match=r"unknown model provider spec|needs a model"):
        make_provider(spec, settings=_settings())


def test_planner_is_reserved() -> None:
    assert is_planner("planner")
    with pytest.raises(ConfigError, match="infra planner"):
        make_provider("planner", settings=_settings())
