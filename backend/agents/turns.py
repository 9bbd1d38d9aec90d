"""Turn inspection: an agent's recent turns as its ``agent.turn`` events recorded them.

Each turn event holds everything the turn added to the agent's conversation (the user
message, the assistant's text and tool calls, the tool results), so an operator reads what
the agent saw and did without a second store. Reads are bounded (newest ``limit``).
"""

from __future__ import annotations

from typing import Any

from backend.agents.team import agent
from backend.events import Event, EventLog, EventType


def turn_record(event: Event) -> dict[str, Any]:
    """One ``agent.turn`` event as ``GET /api/agents/{id}/turns`` shows it."""
    p = event.payload
    return {
        "event_id": event.id,
        "ts": event.ts,
        "project_id": event.project_id,
        "session_id": event.session_id,
        "turn": p.get("turn"),
        "model": p.get("model"),  # recorded by runtimes that know it; None on older turns
        "text": p.get("text"),
        "tool_calls": list(p.get("tool_calls") or []),
        "messages": list(p.get("messages") or []),
        "usage": p.get("usage"),
        "stop_reason": p.get("stop_reason"),
    }


def recent_turns(
    events: EventLog,
    agent_id: str,
    *,
    project_id: str | None = None,
    session_id: str | None = None,
    limit: int = 20,
    before: int | None = None,
) -> list[dict[str, Any]]:
    """The newest ``limit`` turns of ``agent_id`` (older than event ``before``), newest first.

    Raises:
        NotFoundError: no such agent.
    """
    agent(agent_id)
    found = events.latest_of_agent(
        agent_id,
        EventType.AGENT_TURN,
        project_id=project_id,
        session_id=session_id,
        limit=limit,
        before=before,
    )
    return [turn_record(e) for e in found]
