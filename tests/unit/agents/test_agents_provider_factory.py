"""Provider specs and per-agent model bindings."""

from __future__ import annotations

import pytest

from backend.agents.providers import (
    ScriptedProvider,
    is_planner,
    make_provider,
    model_binding,
)
from backend.agents.providers.bedrock import BedrockProvider
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


def test_scripted_spec_builds_a_scripted_provider_for_the_agent() -> None:
    provider = make_provider(
        "scripted", settings=_settings(), scripts={"agents": {"po": [{"text": "x"}]}}, agent_id="po"
    )
    assert isinstance(provider, ScriptedProvider)
    assert len(provider.turns) == 1


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


@pytest.mark.parametrize("spec", ["gemini:x", "bedrock:", "openai:", "scripted:extra", ""])
def test_unknown_specs_are_config_errors(spec: str) -> None:
    with pytest.raises(ConfigError, match=r"unknown model provider spec|needs a model"):
        make_provider(spec, settings=_settings())


def test_planner_is_reserved() -> None:
    assert is_planner("planner")
    with pytest.raises(ConfigError, match="infra planner"):
        make_provider("planner", settings=_settings())
