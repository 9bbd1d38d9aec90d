"""Amazon Bedrock through the Converse API, with tools passed as ``toolConfig``.

:func:`to_converse_messages` maps the provider-neutral messages to Converse, merging
consecutive messages of one role (Converse wants user and assistant turns to alternate).
boto3 is synchronous; the call runs in a worker thread so the event loop keeps serving
other agents.
"""

from __future__ import annotations

import asyncio
from typing import Any

from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    ConnectionClosedError,
    ConnectTimeoutError,
    EndpointConnectionError,
    HTTPClientError,
    ReadTimeoutError,
)

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
from backend.agents.providers.retry import RETRYABLE_AWS_CODES, parse_retry_after
from backend.redact import redact_text

_TRANSPORT_ERRORS = (EndpointConnectionError, ConnectionClosedError, HTTPClientError)

_STOP_REASONS: dict[str, StopReason] = {
    "end_turn": "end_turn",
    "stop_sequence": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
}


def to_converse_messages(messages: list[Message]) -> list[dict[str, Any]]:
    """Map provider-neutral messages to Converse messages, merging consecutive roles.

    Mapping (provider-neutral → Converse)::

        UserMessage          {"role": "user", "content": [{"text": ...}]}
        AssistantMessage     {"role": "assistant",
                              "content": [{"text"}?, {"toolUse": {toolUseId, name, input}}*]}
        ToolResultMessage    {"role": "user",
                              "content": [{"toolResult": {toolUseId, content: [{"text"}], status}}]}
        ToolSpec             {"toolSpec": {name, description, inputSchema: {"json": schema}}}

    Converse wants user and assistant turns to alternate, so consecutive messages of one role
    (e.g. several tool results) are merged into one message.
    """
    out: list[dict[str, Any]] = []
    for message in messages:
        role, blocks = _blocks(message)
        if not blocks:
            continue
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})
    return out


def _blocks(message: Message) -> tuple[str, list[dict[str, Any]]]:
    if isinstance(message, UserMessage):
        return "user", [{"text": message.text}] if message.text else []
    if isinstance(message, AssistantMessage):
        blocks: list[dict[str, Any]] = []
        if message.text:
            blocks.append({"text": message.text})
        for call in message.tool_calls:
            blocks.append(
                {"toolUse": {"toolUseId": call.id, "name": call.name, "input": call.arguments}}
            )
        return "assistant", blocks
    if isinstance(message, ToolResultMessage):
        result = {
            "toolUseId": message.tool_call_id,
            "content": [{"text": message.content or "(empty)"}],
            "status": "error" if message.is_error else "success",
        }
        return "user", [{"toolResult": result}]
    raise ProviderError(f"unknown message type {type(message).__name__}")


def to_tool_config(tools: list[ToolSpec]) -> dict[str, Any]:
    """The Converse ``toolConfig`` for ``tools``."""
    return {
        "tools": [
            {
                "toolSpec": {
                    "name": tool.name,
                    "description": tool.description,
                    "inputSchema": {"json": tool.input_schema},
                }
            }
            for tool in tools
        ]
    }


def parse_converse_response(response: dict[str, Any]) -> ModelTurn:
    """Turn a Converse response into a :class:`ModelTurn`.

    Raises:
        ProviderError: the response has no output message.
    """
    try:
        content = response["output"]["message"]["content"]
    except (KeyError, TypeError) as exc:
        raise ProviderError("Bedrock response has no output message") from exc
    try:
        return _parse_content(response, content)
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        raise ProviderError(f"Bedrock response has an unexpected shape: {exc!r}") from exc


def _parse_content(response: dict[str, Any], content: Any) -> ModelTurn:
    texts: list[str] = []
    calls: list[ToolCall] = []
    for block in content:
        if "text" in block:
            texts.append(block["text"])
        elif "toolUse" in block:
            use = block["toolUse"]
            arguments, error = parse_arguments(use.get("input"))
            calls.append(
                ToolCall(id=use["toolUseId"], name=use["name"], arguments=arguments, error=error)
            )
    return ModelTurn(
        text="".join(texts) or None,
        tool_calls=tuple(calls),
        stop_reason=_STOP_REASONS.get(response.get("stopReason", ""), "other"),
        usage=token_usage(response.get("usage"), "inputTokens", "outputTokens"),
    )


class BedrockProvider:
    """A :class:`ModelProvider` backed by ``bedrock-runtime`` ``Converse``.

    Args:
        model_id: the Bedrock model or inference-profile id.
        client: a boto3 ``bedrock-runtime`` client (build one with
            ``boto3.client("bedrock-runtime", **settings.boto3_kwargs())``).
        max_tokens: the ``inferenceConfig.maxTokens`` of every call.
        temperature: optional ``inferenceConfig.temperature``.
    """

    name = "bedrock"

    def __init__(
        self,
        model_id: str,
        *,
        client: Any,
        max_tokens: int = 2048,
        temperature: float | None = None,
    ) -> None:
        self.model_id = model_id
        self.client = client
        self.max_tokens = max_tokens
        self.temperature = temperature

    def build_request(
        self, *, system: str, messages: list[Message], tools: list[ToolSpec]
    ) -> dict[str, Any]:
        """The keyword arguments of one ``converse`` call."""
        inference: dict[str, Any] = {"maxTokens": self.max_tokens}
        if self.temperature is not None:
            inference["temperature"] = self.temperature
        request: dict[str, Any] = {
            "modelId": self.model_id,
            "messages": to_converse_messages(messages),
            "inferenceConfig": inference,
        }
        if system:
            request["system"] = [{"text": system}]
        if tools:
            request["toolConfig"] = to_tool_config(tools)
        return request

    async def complete(
        self, *, system: str, messages: list[Message], tools: list[ToolSpec]
    ) -> ModelTurn:
        """Call Converse in a worker thread and parse its answer.

        Raises:
            ProviderTimeoutError: the endpoint did not answer in time.
            ProviderError: Bedrock refused the call or could not be reached.
        """
        request = self.build_request(system=system, messages=messages, tools=tools)
        try:
            response = await asyncio.to_thread(self.client.converse, **request)
        except (ReadTimeoutError, ConnectTimeoutError) as exc:
            raise ProviderTimeoutError(
                f"Bedrock {self.model_id} timed out: {redact_text(str(exc))}",
                model=self.model_id,
            ) from exc
        except ClientError as exc:
            error = exc.response.get("Error", {})
            meta = exc.response.get("ResponseMetadata", {})
            status = int(meta.get("HTTPStatusCode") or 0)
            headers = {str(k).lower(): v for k, v in (meta.get("HTTPHeaders") or {}).items()}
            raise ProviderError(
                f"Bedrock {self.model_id} refused the call: "
                f"{error.get('Code', 'unknown')}: {error.get('Message', '')}",
                model=self.model_id,
                aws_code=error.get("Code"),
                retryable=error.get("Code") in RETRYABLE_AWS_CODES
                or (status >= 500 or status == 429),
                retry_after_s=parse_retry_after(headers.get("retry-after")),
            ) from exc
        except BotoCoreError as exc:
            # Connection errors may pass; missing credentials or a bad parameter never do.
            raise ProviderError(
                # botocore names the endpoint URL, which may carry credentials.
                f"Bedrock {self.model_id} could not be reached: {redact_text(str(exc))}",
                model=self.model_id,
                retryable=isinstance(exc, _TRANSPORT_ERRORS),
            ) from exc
        return parse_converse_response(response)
