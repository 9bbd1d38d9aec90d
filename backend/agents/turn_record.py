"""What a turn stores in its ``agent.turn`` event, and the conversation rebuilt from it.

A turn's event holds every message it added (the user's text, each model answer with its
tool calls, each tool result) and its model-call count; :func:`history` folds an agent's
turns back into the conversation the next turn continues (after a restart too). The
decisions an operator made on the agent's approvals are told to it once, in its next turn
(:func:`decision_notice`), which records them as ``decisions_seen`` (:func:`seen`).
"""

from __future__ import annotations

from typing import Any

from backend.agents.providers.base import (
    AssistantMessage,
    Message,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from backend.events import Event


def message_to_dict(message: Message) -> dict[str, Any]:
    if isinstance(message, UserMessage):
        return {"role": "user", "text": message.text}
    if isinstance(message, AssistantMessage):
        return {
            "role": "assistant",
            "text": message.text,
            "tool_calls": [
                {"id": c.id, "name": c.name, "arguments": c.arguments, "error": c.error}
                for c in message.tool_calls
            ],
        }
    return {
        "role": "tool",
        "tool_call_id": message.tool_call_id,
        "name": message.name,
        "content": message.content,
        "is_error": message.is_error,
    }


def message_from_dict(data: dict[str, Any]) -> Message:
    role = data.get("role")
    if role == "user":
        return UserMessage(str(data.get("text", "")))
    if role == "assistant":
        calls = tuple(
            ToolCall(c["id"], c["name"], c.get("arguments") or {}, c.get("error"))
            for c in data.get("tool_calls", [])
        )
        return AssistantMessage(data.get("text"), calls)
    return ToolResultMessage(
        data["tool_call_id"], data["name"], data.get("content", ""), bool(data.get("is_error"))
    )


def decision_notice(payload: dict[str, Any]) -> str:
    """What the agent is told about an operator's decision on one of its approvals."""
    action = payload.get("action") or "action"
    head = f"[operator] Your {action} (approval {payload.get('approval_id')})"
    who = payload.get("operator") or "an operator"
    outcome = payload.get("outcome")
    if outcome == "rejected":
        return f"{head} was REJECTED by {who}. Reason: {payload.get('reason') or '(none given)'}"
    if outcome == "failed":
        return f"{head} was approved by {who} but could not run: {payload.get('error')}"
    pr = f": PR {payload['pr_id']}" if payload.get("pr_id") else ""
    why = f" ({payload['reason']})" if payload.get("reason") else ""
    return f"{head} was approved by {who}{why} and executed{pr}."


def seen(decided: list[Event]) -> dict[str, Any]:
    # Only turns that told the model something carry the key (older turns' payloads stay).
    if not decided:
        return {}
    return {"decisions_seen": [str(e.payload.get("approval_id")) for e in decided]}


def history(turns: list[Event]) -> tuple[list[Message], int]:
    messages: list[Message] = []
    calls = 0
    for event in turns:
        messages.extend(message_from_dict(m) for m in event.payload.get("messages", []))
        calls += int(event.payload.get("model_calls", 0))
    return messages, calls
