"""Typed shapes of the agent routes (off switch, turn inspection), as the console reads them.

Checked against ``/openapi.json`` by ``tests/console/test_contract.py`` like every model.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class AgentPause(_Model):
    """``POST /api/agents/{id}/pause|resume``: the agent's pause state after the action."""

    agent: str
    paused: bool
    paused_by: str | None = None
    paused_at: str | None = None
    reason: str | None = None
    resumed_by: str | None = None


class TurnUsage(_Model):
    """Tokens a turn used."""

    input_tokens: int = 0
    output_tokens: int = 0


class AgentTurn(_Model):
    """One turn of ``GET /api/agents/{id}/turns``, newest first."""

    event_id: int
    ts: str = ""
    project_id: str | None = None
    session_id: str | None = None
    turn: int | None = None
    model: str | None = None
    text: str | None = None
    tool_calls: list[str] = Field(default_factory=list)
    messages: list[dict[str, Any]] = Field(default_factory=list)
    usage: TurnUsage | None = None
    stop_reason: str | None = None
