"""Any OpenAI-compatible ``POST {base_url}/chat/completions`` endpoint with ``tools``, via httpx.

``base_url`` includes the version prefix (``https://api.openai.com/v1``,
``http://127.0.0.1:11434/v1`` for Ollama, a vLLM or LiteLLM server...) and may carry a
query (``?api-version=…``), kept after the ``/chat/completions`` path. Its userinfo and
query values can be credentials: every message shows it through
:func:`backend.redact.redact_url`. :func:`to_chat_messages` maps the provider-neutral
messages to the wire format; :func:`parse_chat_response` maps the answer back.
"""

from __future__ import annotations

import functools
import json
import ssl
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from backend.agents.providers.base import (
    AssistantMessage,
    Message,
    ModelTurn,
    StopReason,
    ToolCall,
    ToolResultMessage,
    ToolSpec,
    UserMessage,
    parse_arguments,
    token_usage,
)
from backend.agents.providers.exceptions import ProviderError, ProviderTimeoutError
from backend.agents.providers.retry import parse_retry_after, retryable_status
from backend.exceptions import ConfigError
from backend.redact import redact_text, redact_url

_FINISH_REASONS: dict[str, StopReason] = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
}


def to_chat_messages(system: str, messages: list[Message]) -> list[dict[str, Any]]:
    """Map a system prompt and provider-neutral messages to chat-completions messages.

    Mapping (provider-neutral → chat completions)::

        system prompt        {"role": "system", "content": ...}
        UserMessage          {"role": "user", "content": ...}
        AssistantMessage     {"role": "assistant", "content": str|null,
                              "tool_calls": [{"id", "type": "function",
                                              "function": {"name", "arguments": "<JSON text>"}}]}
        ToolResultMessage    {"role": "tool", "tool_call_id": ..., "content": ...}
        ToolSpec             {"type": "function", "function": {"name", "description", "parameters"}}
    """
    out: list[dict[str, Any]] = []
    if system:
        out.append({"role": "system", "content": system})
    for message in messages:
        if isinstance(message, UserMessage):
            out.append({"role": "user", "content": message.text})
        elif isinstance(message, AssistantMessage):
            entry: dict[str, Any] = {"role": "assistant", "content": message.text}
            if message.tool_calls:
                entry["tool_calls"] = [
                    {
                        "id": call.id,
                        "type": "function",
                        "function": {
                            "name": call.name,
                            # Echo what the model sent, even when it was malformed, so the
                            # model can see (and fix) its own mistake.
                            "arguments": call.raw_arguments
                            if call.raw_arguments is not None
                            else json.dumps(call.arguments),
                        },
                    }
                    for call in message.tool_calls
                ]
            out.append(entry)
        elif isinstance(message, ToolResultMessage):
            out.append(
                {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content}
            )
        else:
            raise ProviderError(f"unknown message type {type(message).__name__}")
    return out


def to_chat_tools(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    """Map tool specs to chat-completions ``tools``."""
    return [
        {
            "type": "function",
            "function": {
                "name": tool.name,
                "description": tool.description,
                "parameters": tool.input_schema,
            },
        }
        for tool in tools
    ]


def parse_chat_response(body: Any) -> ModelTurn:
    """Turn a chat-completions response body into a :class:`ModelTurn`.

    ``function.arguments`` comes back as JSON *text* written by the model; when it does not
    parse into an object, the :class:`ToolCall` carries ``error`` instead of the call crashing
    the turn.

    Raises:
        ProviderError: the body has no ``choices[0].message``.
    """
    try:
        choice = body["choices"][0]
        message = choice["message"]
    except (KeyError, IndexError, TypeError) as exc:
        raise ProviderError("chat completion has no choices[0].message") from exc
    try:
        return _parse_choice(body, choice, message)
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        # A server that speaks almost-OpenAI must not crash the turn with a bare error.
        raise ProviderError(f"chat completion has an unexpected shape: {exc!r}") from exc


def _parse_choice(body: Any, choice: Any, message: Any) -> ModelTurn:
    calls: list[ToolCall] = []
    for n, raw in enumerate(message.get("tool_calls") or []):
        function = raw.get("function") or {}
        raw_arguments = function.get("arguments")
        arguments, error = parse_arguments(raw_arguments)
        calls.append(
            ToolCall(
                id=raw.get("id") or f"call_{n}",
                name=function.get("name") or "",
                arguments=arguments,
                error=error if function.get("name") else "tool call without a function name",
                raw_arguments=raw_arguments if isinstance(raw_arguments, str) else None,
            )
        )
    stop: StopReason = _FINISH_REASONS.get(choice.get("finish_reason") or "", "other")
    if calls and stop == "other":
        stop = "tool_use"
    return ModelTurn(
        text=message.get("content") or None,
        tool_calls=tuple(calls),
        stop_reason=stop,
        usage=token_usage(body.get("usage"), "prompt_tokens", "completion_tokens"),
    )


@functools.cache
def _tls() -> ssl.SSLContext:
    # Building one loads the CA bundle (~50 ms): once per process, not once per model call.
    return httpx.create_ssl_context()


class OpenAIProvider:
    """A :class:`ModelProvider` for OpenAI-compatible chat completions.

    Args:
        model: the ``model`` field of each request.
        base_url: endpoint prefix including ``/v1``.
        api_key: sent as ``Authorization: Bearer``; ``None`` sends no header (local servers).
        timeout: seconds for connect/read/write of one call.
        max_tokens: optional ``max_tokens`` of each request.
        client: an ``httpx.AsyncClient`` to reuse; by default each call opens its own, so a
            provider is safe to use from any event loop.
    """

    name = "openai"

    def __init__(
        self,
        model: str,
        *,
        base_url: str,
        api_key: str | None = None,
        timeout: float = 60.0,
        max_tokens: int | None = None,
        client: httpx.AsyncClient | None = None,
    ) -> None:
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.timeout = timeout
        self.max_tokens = max_tokens
        self.client = client

    @property
    def url(self) -> str:
        """The chat-completions URL: the path appended, the base URL's query kept."""
        try:
            parts = urlsplit(self.base_url)
        except ValueError:  # not a URL (a bad IPv6 host): the request says so, as ConfigError
            return f"{self.base_url}/chat/completions"
        return urlunsplit(parts._replace(path=f"{parts.path.rstrip('/')}/chat/completions"))

    @property
    def shown_url(self) -> str:
        """:attr:`url` as messages show it: no userinfo, no query values."""
        return redact_url(self.url)

    def build_body(
        self, *, system: str, messages: list[Message], tools: list[ToolSpec]
    ) -> dict[str, Any]:
        """The JSON body of one request."""
        body: dict[str, Any] = {"model": self.model, "messages": to_chat_messages(system, messages)}
        if tools:
            body["tools"] = to_chat_tools(tools)
            body["tool_choice"] = "auto"
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        return body

    async def complete(
        self, *, system: str, messages: list[Message], tools: list[ToolSpec]
    ) -> ModelTurn:
        """POST one chat completion and parse the answer.

        Raises:
            ConfigError: the base URL is not a usable http(s) URL.
            ProviderTimeoutError: no answer within ``timeout``.
            ProviderError: transport failure, an HTTP error status, or a body that is not
                a chat completion.
        """
        body = self.build_body(system=system, messages=messages, tools=tools)
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        try:
            if self.client is not None:
                response = await self.client.post(
                    self.url, json=body, headers=headers, timeout=self.timeout
                )
            else:
                async with httpx.AsyncClient(timeout=self.timeout, verify=_tls()) as client:
                    response = await client.post(self.url, json=body, headers=headers)
        except (httpx.UnsupportedProtocol, httpx.InvalidURL) as exc:
            # Our spec's base URL is wrong (no scheme, bad port): no retry helps (503).
            raise ConfigError(
                f"model base URL {redact_url(self.base_url)!r} is not a usable http(s) URL: "
                f"{redact_text(str(exc))}",
                model=self.model,
            ) from exc
        except httpx.TimeoutException as exc:
            raise ProviderTimeoutError(
                f"{self.shown_url} did not answer within {self.timeout}s", model=self.model
            ) from exc
        except httpx.HTTPError as exc:
            # Refused, reset, DNS...: the endpoint may be back in a moment.
            raise ProviderError(
                f"{self.shown_url} could not be reached: "
                f"{redact_text(str(exc)) or type(exc).__name__}",
                model=self.model,
                retryable=isinstance(exc, httpx.TransportError),
            ) from exc
        if response.status_code >= 400:
            raise ProviderError(
                f"{self.shown_url} answered HTTP {response.status_code}: "
                f"{redact_text(_error_message(response))}",
                model=self.model,
                status=response.status_code,
                retryable=retryable_status(response.status_code),
                retry_after_s=parse_retry_after(response.headers.get("Retry-After")),
            )
        try:
            payload = response.json()
        except ValueError as exc:
            raise ProviderError(f"{self.shown_url} answered a body that is not JSON") from exc
        return parse_chat_response(payload)


def _error_message(response: httpx.Response) -> str:
    try:
        error = response.json().get("error")
    except (ValueError, AttributeError):
        return response.text[:200]
    if isinstance(error, dict) and error.get("message"):
        return str(error["message"])
    return response.text[:200]
