"""Provider-neutral conversation types and the :class:`ModelProvider` protocol.

The runtime speaks only these types; each provider maps them to its wire format
(Bedrock Converse content blocks, OpenAI chat-completions messages, a replayed script).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

StopReason = Literal["end_turn", "tool_use", "max_tokens", "other"]


@dataclass(frozen=True)
class ToolSpec:
    """A tool offered to a model: a name, what it does and a JSON schema of its arguments."""

    name: str
    description: str
    input_schema: dict[str, Any]


@dataclass(frozen=True)
class ToolCall:
    """A tool call the model asked for.

    ``error`` is set (and ``arguments`` is empty) when the model sent arguments that are
    not a JSON object; the runtime reports it back as an invalid call instead of crashing.
    """

    id: str
    name: str
    arguments: dict[str, Any]
    error: str | None = None
    raw_arguments: str | None = None

    @property
    def valid(self) -> bool:
        """Whether the arguments parsed into a JSON object."""
        return self.error is None


@dataclass(frozen=True)
class UserMessage:
    """Text from the human side (operator, customer, or the runtime's instructions)."""

    text: str
    role: Literal["user"] = "user"


@dataclass(frozen=True)
class AssistantMessage:
    """A previous model turn, replayed so the model sees its own tool calls."""

    text: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    role: Literal["assistant"] = "assistant"


@dataclass(frozen=True)
class ToolResultMessage:
    """The result of one tool call, fed back to the model."""

    tool_call_id: str
    name: str
    content: str
    is_error: bool = False
    role: Literal["tool"] = "tool"


Message = UserMessage | AssistantMessage | ToolResultMessage


@dataclass(frozen=True)
class ModelTurn:
    """One answer from a model: optional text plus zero or more tool calls."""

    text: str | None
    tool_calls: tuple[ToolCall, ...] = ()
    stop_reason: StopReason = "end_turn"
    usage: dict[str, int] = field(default_factory=dict)

    def as_message(self) -> AssistantMessage:
        """The turn as a message to append to the conversation history."""
        return AssistantMessage(text=self.text, tool_calls=self.tool_calls)


@runtime_checkable
class ModelProvider(Protocol):
    """Anything that turns a system prompt, a history and tools into the next model turn."""

    name: str

    async def complete(
        self, *, system: str, messages: list[Message], tools: list[ToolSpec]
    ) -> ModelTurn:
        """Ask the model for its next turn."""
        ...


def parse_arguments(raw: object) -> tuple[dict[str, Any], str | None]:
    """Parse tool-call arguments that may arrive as a JSON string.

    Args:
        raw: a dict (already parsed), a JSON string, or anything else a model sent.

    Returns:
        ``(arguments, error)``: the arguments as a dict and ``None``, or ``{}`` and a
        human-readable reason when they are not a JSON object.
    """
    if isinstance(raw, dict):
        return raw, None
    if raw is None or raw == "":
        return {}, None
    if not isinstance(raw, str):
        return {}, f"arguments must be a JSON object, got {type(raw).__name__}"
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        return {}, f"arguments are not valid JSON: {exc.msg} at position {exc.pos}"
    if not isinstance(value, dict):
        return {}, f"arguments must be a JSON object, got {type(value).__name__}"
    return value, None


def token_usage(raw: object, input_key: str, output_key: str) -> dict[str, int]:
    """``{"input_tokens", "output_tokens"}`` from a response's usage object, or ``{}`` when
    it has none (the turn then says its usage is unknown, not zero).

    A count that is missing, null or not a number is 0: a server that speaks almost-OpenAI
    must not fail a turn whose answer is fine over its bookkeeping.
    """
    if not isinstance(raw, dict):
        return {}

    def count(key: str) -> int:
        value = raw.get(key)
        if isinstance(value, bool) or not isinstance(value, int | float):
            return 0
        return max(0, int(value))

    return {"input_tokens": count(input_key), "output_tokens": count(output_key)}


def result_object(message: ToolResultMessage) -> dict[str, Any]:
    """A tool result's content as a JSON object, or ``{}`` when it is not one (the runtime
    sends tool results to models as JSON text)."""
    try:
        value = json.loads(message.content)
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}
