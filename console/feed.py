"""One short operator line per event, for the activity feed. Pure; never raises.

The backend renders every line (``text`` on ``/api/activity`` and on each SSE event); the
console only picks the colour.
"""

from __future__ import annotations

from dataclasses import dataclass

from console.models import ActivityLine, StreamEvent


@dataclass(frozen=True, slots=True)
class FeedLine:
    """One line of the feed; ``kind`` is the event type (drives the colour)."""

    id: int
    ts: str
    kind: str
    text: str


def short_ts(ts: str) -> str:
    """``HH:MM:SS`` out of an ISO timestamp, or the input when it is not one."""
    if "T" in ts:
        return ts.split("T", 1)[1][:8]
    return ts[:8]


def kind_style(kind: str) -> str:
    """A Rich style for an event type: humans' attention red, gates yellow, the rest dim."""
    if kind.startswith("interrupcao.") or kind in (
        "infra.artifact_blocked",
        "backlog.task_blocked",
    ):
        return "bold red"
    if kind.startswith(("infra.", "artifact.", "pr.")):
        return "yellow"
    if kind == "TENTATIVA_DE_FERRAMENTA_REGISTRADA":
        return "magenta"
    if kind == "agent.status":
        return "dim"
    if kind.startswith("agent."):
        return "cyan"
    return "green"


AUDIT = frozenset({"operator.action"})
"""Audit-trail lines: shown on the Audit screen, not in the feed (the action's own event is)."""


def from_activity(line: ActivityLine) -> FeedLine:
    """A server-rendered ``/api/activity`` line."""
    return FeedLine(line.id, line.ts, line.kind, line.text)


def from_event(event: StreamEvent) -> FeedLine:
    """A live event's line: the server's own ``text``, exactly what ``/api/activity`` says.

    The backend is the one place that renders events, so the live feed and the backlog
    never disagree.
    """
    return FeedLine(event.id, event.ts, event.type, event.text)
