"""Response models of the agent routes: the off switch and turn inspection."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class _Out(BaseModel):
    model_config = ConfigDict(extra="ignore")


class AgentPauseOut(_Out):
    """``POST /api/agents/{id}/pause|resume``: the agent's pause state after the action.

    After a resume ``paused`` is false and ``paused_by``/``paused_at``/``reason`` still
    name the pause that just ended; ``resumed_by``/``resumed_at`` say who ended it.
    """

    agent: str
    paused: bool
    paused_by: str | None
    paused_at: str | None
    reason: str | None
    resumed_by: str | None = None
    resumed_at: str | None = None


class TurnUsageOut(_Out):
    """Tokens a turn used, summed over its model calls (as the provider reported them)."""

    input_tokens: int
    output_tokens: int


class AgentTurnRecordOut(_Out):
    """One turn of ``GET /api/agents/{id}/turns`` (from its ``agent.turn`` event)."""

    event_id: int
    ts: str
    project_id: str | None
    session_id: str | None
    turn: int | None
    model: str | None = Field(description="the model spec that ran the turn, when recorded")
    text: str | None
    tool_calls: list[str] = Field(description="names of the tools called, in order")
    messages: list[dict[str, Any]] = Field(
        description="what the turn added to the conversation: the user message, assistant "
        "messages (text, tool_calls with arguments) and tool results (role tool)"
    )
    usage: TurnUsageOut | None
    stop_reason: str | None
