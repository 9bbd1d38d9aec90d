"""A deterministic provider that replays a JSON script of turns (the demo and the tests).

A script holds each agent's turns (text, tool calls, or both), validated with pydantic;
:func:`load_script` gives the format. ``arguments`` may be a string, replayed as a model's
raw JSON text, so a test feeds malformed arguments through the same path as a real model.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from pydantic import ValidationError as PydanticValidationError

from backend.agents.providers.base import Message, ModelTurn, ToolCall, ToolSpec, parse_arguments
from backend.agents.providers.exceptions import ScriptError

DEFAULT_FINAL_TEXT = "(script finished)"


class ScriptToolCall(BaseModel):
    """One scripted tool call."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=64)
    arguments: dict[str, Any] | str = Field(default_factory=dict)
    id: str | None = None


class ScriptTurn(BaseModel):
    """One scripted model turn: text, tool calls, or both."""

    model_config = ConfigDict(extra="forbid")

    text: str | None = None
    tool_calls: list[ScriptToolCall] = Field(default_factory=list)


class Script(BaseModel):
    """Scripts for several agents, keyed by agent id."""

    model_config = ConfigDict(extra="forbid")

    agents: dict[str, list[ScriptTurn]] = Field(default_factory=dict)
    final_text: str = DEFAULT_FINAL_TEXT


def load_script(source: str | Path | Mapping[str, Any] | Sequence[Any] | Script) -> Script:
    """Validate a script from a file path, JSON text, or already-parsed data.

    Script format (anything else raises :class:`ScriptError`)::

        {
          "final_text": "Done.",                       # optional: answer once a script runs out
          "agents": {
            "criativo": [
              {"text": "Let me confirm.",
               "tool_calls": [{"name": "confirm_readiness", "arguments": {"summary": "..."}}]},
              {"text": "Ready for the PO."}
            ],
            "infra": [...]
          }
        }

    A bare list of turns is accepted as the script of a single agent.

    Args:
        source: a :class:`Script`, a path to a JSON file, JSON text, a mapping in the
            format above, or a list of turns (one anonymous agent, key ``"*"``).

    Raises:
        ScriptError: the file is unreadable, the JSON is invalid, or the shape is wrong.
    """
    if isinstance(source, Script):
        return source
    data: Any = source
    if isinstance(source, Path):
        try:
            data = json.loads(source.read_text(encoding="utf-8"))
        except OSError as exc:
            raise ScriptError(f"cannot read script {source}: {exc}", path=str(source)) from exc
        except json.JSONDecodeError as exc:
            raise ScriptError(
                f"script {source} is not valid JSON: {exc.msg} (line {exc.lineno})",
                path=str(source),
            ) from exc
    elif isinstance(source, str):
        try:
            data = json.loads(source)
        except json.JSONDecodeError as exc:
            raise ScriptError(f"script is not valid JSON: {exc.msg} (line {exc.lineno})") from exc
    if isinstance(data, list):
        data = {"agents": {"*": data}}
    try:
        return Script.model_validate(data)
    except PydanticValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "(root)"
        raise ScriptError(
            f"malformed script at {where}: {first['msg']} ({exc.error_count()} error(s))",
            errors=exc.errors(include_url=False),
        ) from exc


class ScriptedProvider:
    """Replays one agent's scripted turns, one per :meth:`complete` call.

    Args:
        turns: the agent's turns in order.
        agent_id: used to build deterministic tool-call ids.
        final_text: the text answered once every turn was replayed.
        start_at: index of the next turn; a runtime rehydrated after a restart passes the
            number of turns the agent already took.
    """

    name = "scripted"

    def __init__(
        self,
        turns: Sequence[ScriptTurn],
        *,
        agent_id: str = "agent",
        final_text: str = DEFAULT_FINAL_TEXT,
        start_at: int = 0,
    ) -> None:
        self.turns = list(turns)
        self.agent_id = agent_id
        self.final_text = final_text
        self.position = start_at
        self.requests: list[tuple[str, list[Message], list[ToolSpec]]] = []

    @classmethod
    def for_agent(
        cls, script: Script | str | Path | Mapping[str, Any], agent_id: str, *, start_at: int = 0
    ) -> ScriptedProvider:
        """The provider for ``agent_id`` in a multi-agent script (``"*"`` as fallback)."""
        parsed = load_script(script)
        turns = parsed.agents.get(agent_id, parsed.agents.get("*", []))
        return cls(turns, agent_id=agent_id, final_text=parsed.final_text, start_at=start_at)

    @property
    def exhausted(self) -> bool:
        """Whether every scripted turn was replayed."""
        return self.position >= len(self.turns)

    async def complete(
        self, *, system: str, messages: list[Message], tools: list[ToolSpec]
    ) -> ModelTurn:
        """Return the next scripted turn, or a final text turn when the script ran out."""
        self.requests.append((system, list(messages), list(tools)))
        if self.exhausted:
            self.position += 1
            return ModelTurn(text=self.final_text, stop_reason="end_turn")
        index = self.position
        turn = self.turns[index]
        self.position += 1
        calls = []
        for n, call in enumerate(turn.tool_calls):
            arguments, error = parse_arguments(call.arguments)
            raw = call.arguments if isinstance(call.arguments, str) else None
            calls.append(
                ToolCall(
                    id=call.id or f"{self.agent_id}-t{index}-c{n}",
                    name=call.name,
                    arguments=arguments,
                    error=error,
                    raw_arguments=raw,
                )
            )
        return ModelTurn(
            text=turn.text,
            tool_calls=tuple(calls),
            stop_reason="tool_use" if calls else "end_turn",
        )
