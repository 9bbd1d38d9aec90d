"""Build a provider from a spec string, and resolve which spec each agent is bound to.

A spec (``CADENCIA_MODEL``, a value of ``CADENCIA_AGENT_MODELS``) names an offline model
(``scripted``, ``chatty``, ``dev-offline``), a hosted one (``bedrock:<modelId>``,
``openai:<model>[@<base_url>]``) or the rule-based ``planner``; :func:`make_provider`
lists them, with the retry wrapping and the OpenAI settings read from the environment.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from backend.agents.providers.base import ModelProvider
from backend.agents.providers.bedrock import BedrockProvider
from backend.agents.providers.dev_offline import DEV_OFFLINE, DevOfflineModel
from backend.agents.providers.openai import OpenAIProvider
from backend.agents.providers.retry import RetryingProvider, RetryPolicy
from backend.agents.providers.scripted import Script, ScriptedProvider, load_script
from backend.exceptions import ConfigError
from backend.redact import redact_text, redact_url

PLANNER = "planner"
CHATTY = "chatty"
SCRIPTED = "scripted"
CUSTOMER_SERVICE_AGENT = "atendimento"
"""The customer-service agent's id (``backend.agents.team.CUSTOMER_SERVICE`` is this)."""
DEFAULT_OPENAI_BASE_URL = "https://api.openai.com/v1"


def model_binding(agent_id: str, settings: Any) -> str:
    """The provider spec bound to ``agent_id``.

    Lookup order in ``settings.agent_models``: the exact id, then ``dev-*`` / ``dev`` for any
    ``dev-<module>`` agent, then ``*``; otherwise ``settings.model``. The result goes
    through :func:`resolve_spec` (``scripted`` is ``chatty`` for ``atendimento``).
    """
    overrides: Mapping[str, str] = getattr(settings, "agent_models", None) or {}
    keys = [agent_id]
    if agent_id.startswith("dev-"):
        keys += ["dev-*", "dev"]
    keys.append("*")
    spec = next((overrides[key] for key in keys if overrides.get(key)), None)
    return resolve_spec(agent_id, spec or str(getattr(settings, "model", SCRIPTED) or SCRIPTED))


def resolve_spec(agent_id: str, spec: str) -> str:
    """The spec that really runs ``agent_id`` when it is bound to ``spec``.

    The team's script has no customer turns, so ``scripted`` for ``atendimento`` is its
    offline model, ``chatty``.
    """
    if agent_id == CUSTOMER_SERVICE_AGENT and spec.strip() == SCRIPTED:
        return CHATTY
    return spec


def is_planner(spec: str) -> bool:
    """Whether ``spec`` names the rule-based infra planner rather than a model."""
    return spec.strip() == PLANNER


def is_dev_offline(spec: str, agent_id: str, scripts: Any = None) -> bool:
    """Whether ``spec`` runs ``agent_id`` on the offline dev model: ``dev-offline``, or a
    ``scripted`` ``dev-<module>`` agent that the script has no turns for."""
    spec = spec.strip()
    if spec == DEV_OFFLINE:
        return True
    dev = agent_id.startswith("dev-") and spec == "scripted"
    return dev and agent_id not in load_script(scripts or {}).agents


def make_provider(
    spec: str,
    *,
    settings: Any,
    scripts: Script | str | Path | Mapping[str, Any] | None = None,
    agent_id: str = "*",
    start_at: int = 0,
    bedrock_client: Any = None,
    http_client: Any = None,
) -> ModelProvider:
    """Build the provider named by ``spec``.

    Specs (``CADENCIA_MODEL`` and the values of ``CADENCIA_AGENT_MODELS``)::

        scripted                    replay a JSON script (see ``scripted.py``); for
                                    ``atendimento`` a resolved ``scripted`` means ``chatty``
                                    (the team script has no customer turns)
        chatty                      the offline customer-service model (``chatty.py``)
        bedrock:<modelId>           Bedrock Converse, client from ``Settings.boto3_kwargs()``
        openai:<model>@<base_url>   OpenAI-compatible chat completions at ``base_url`` (with /v1)
        openai:<model>              same, base URL from settings/env (default api.openai.com/v1)
        planner                     reserved: the rule-based infra planner, which is not a
                                    model; the runtime checks :func:`is_planner` first
        dev-offline                 the offline dev model (``dev_offline.py``); a resolved
                                    ``scripted`` for a ``dev-<module>`` agent means it too,
                                    unless the script has turns under that exact agent id

    ``bedrock:`` and ``openai:`` providers come wrapped in a
    :class:`~backend.agents.providers.retry.RetryingProvider` (``CADENCIA_PROVIDER_RETRIES``,
    ``_BACKOFF_S``, ``_BACKOFF_MAX_S``, ``_DEADLINE_S``).

    OpenAI settings not (yet) on :class:`Settings` are read from the environment:
    ``CADENCIA_OPENAI_BASE_URL`` / ``OPENAI_BASE_URL``, ``CADENCIA_OPENAI_API_KEY`` /
    ``OPENAI_API_KEY`` and ``CADENCIA_OPENAI_TIMEOUT_S`` (seconds, default 60).

    Args:
        spec: one of the specs above.
        settings: a :class:`backend.settings.Settings` (AWS region/endpoint, OpenAI URL).
        scripts: the script for ``scripted`` (all agents; ``agent_id`` picks one).
        agent_id: the agent the provider is for (picks its script, names tool-call ids).
        start_at: for ``scripted``, the number of turns the agent already took.
        bedrock_client: an injected ``bedrock-runtime`` client (tests, custom config).
        http_client: an injected ``httpx.AsyncClient`` for ``openai``.

    Raises:
        ConfigError: unknown spec, ``planner``, or an OpenAI endpoint without an API key.
        ScriptError: the script is malformed.
    """
    kind, _, rest = spec.strip().partition(":")
    if is_dev_offline(spec, agent_id, scripts):
        # The team script has no dev turns: a dev agent's offline model works the task.
        return DevOfflineModel(agent_id)
    if kind == CHATTY and not rest:
        from backend.agents.providers.chatty import ChattyAtendimentoModel

        return ChattyAtendimentoModel()
    if kind == SCRIPTED and not rest:
        return _named(ScriptedProvider.for_agent(scripts or {}, agent_id, start_at=start_at), spec)
    if kind == PLANNER and not rest:
        raise ConfigError(
            "'planner' is the rule-based infra planner, not a model provider; "
            "check is_planner(spec) and run the planner instead",
            spec=spec,
        )
    if kind == "bedrock" and rest:
        client = bedrock_client
        if client is None:
            import boto3
            from botocore.config import Config

            # One attempt per botocore call: RetryingProvider owns backoff and deadline.
            client = boto3.client(
                "bedrock-runtime",
                config=Config(retries={"total_max_attempts": 1, "mode": "standard"}),
                **settings.boto3_kwargs(),
            )
        return _named(_retrying(BedrockProvider(rest, client=client), settings), spec)
    if kind == "openai" and rest:
        provider = _openai(rest, settings=settings, http_client=http_client)
        # The spec is recorded (``agent.turn`` ``model``, the roster): without credentials.
        shown = f"openai:{provider.model}@{redact_url(provider.base_url)}"
        return _named(_retrying(provider, settings), shown)
    raise ConfigError(
        f"unknown model provider spec {redact_text(spec)!r}: expected 'scripted', 'chatty', "
        "'bedrock:<modelId>', 'openai:<model>[@<base_url>]', 'dev-offline' or 'planner'",
        spec=redact_text(spec),
    )


def _retrying(provider: ModelProvider, settings: Any) -> RetryingProvider:
    return RetryingProvider(provider, RetryPolicy.from_settings(settings))


def _named(provider: Any, spec: str) -> ModelProvider:
    # The runtime records which spec ran each turn (``agent.turn`` ``model``, the roster).
    provider.spec = spec.strip()
    return provider  # type: ignore[no-any-return]


def _openai(rest: str, *, settings: Any, http_client: Any) -> OpenAIProvider:
    model, _, base_url = rest.partition("@")
    if not model:
        raise ConfigError(
            "openai spec needs a model: 'openai:<model>[@<base_url>]'", spec=redact_text(rest)
        )
    base_url = (
        base_url
        or getattr(settings, "openai_base_url", None)
        or os.environ.get("CADENCIA_OPENAI_BASE_URL")
        or os.environ.get("OPENAI_BASE_URL")
        or DEFAULT_OPENAI_BASE_URL
    )
    api_key = (
        getattr(settings, "openai_api_key", None)
        or os.environ.get("CADENCIA_OPENAI_API_KEY")
        or os.environ.get("OPENAI_API_KEY")
    )
    if not api_key and base_url.rstrip("/") == DEFAULT_OPENAI_BASE_URL:
        raise ConfigError(
            "openai provider for api.openai.com needs an API key "
            "(CADENCIA_OPENAI_API_KEY or OPENAI_API_KEY)",
            model=model,
        )
    timeout_raw = os.environ.get("CADENCIA_OPENAI_TIMEOUT_S") or getattr(
        settings, "openai_timeout_s", None
    )
    try:
        timeout = float(timeout_raw) if timeout_raw else 60.0
    except ValueError as exc:
        raise ConfigError(f"CADENCIA_OPENAI_TIMEOUT_S is not a number: {timeout_raw!r}") from exc
    return OpenAIProvider(
        model, base_url=base_url, api_key=api_key, timeout=timeout, client=http_client
    )
