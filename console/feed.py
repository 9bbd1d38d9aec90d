"""One short operator line per event, for the activity feed. Pure; never raises.

The backend renders the same lines for ``/api/activity``; the console renders live
events itself because it may not import ``backend`` (STYLE rule 1). A server-provided
``text`` wins when present.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from console.models import ActivityLine, Event


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


def from_activity(line: ActivityLine) -> FeedLine:
    """A server-rendered ``/api/activity`` line."""
    return FeedLine(line.id, line.ts, line.kind, line.text)


def from_event(event: Event) -> FeedLine:
    """Render one live event; unknown types and odd payloads get a generic line."""
    if event.text:  # the server's own line (as /api/activity) already names who acted
        return FeedLine(event.id, event.ts, event.type, event.text)
    render = _RENDERERS.get(event.type)
    try:
        text = render(event.payload) if render else None
    except Exception:
        text = None
    if not text:
        text = _generic(event.payload)
    who = f"{event.agent}: " if event.agent else ""
    return FeedLine(event.id, event.ts, event.type, f"{who}{text}")


def _g(payload: Mapping[str, Any], key: str, default: str = "?") -> str:
    value = payload.get(key)
    return default if value is None else str(value)


def _generic(payload: Mapping[str, Any]) -> str:
    parts = [f"{k}={v}" for k, v in list(payload.items())[:4] if not isinstance(v, (dict, list))]
    return " ".join(parts) or "-"


_RENDERERS: dict[str, Callable[[Mapping[str, Any]], str]] = {
    "agent.status": lambda p: f"{_g(p, 'status')} — {_g(p, 'detail', '')}".rstrip(" —"),
    "infra.pr_opened": lambda p: f"opened infra PR {_g(p, 'pr_action_id')} on {_g(p, 'branch')}",
    "infra.pr_corrected": lambda p: (
        f"correction #{_g(p, 'correction')} pushed to {_g(p, 'pr_action_id')}"
    ),
    "infra.gate_changed": lambda p: (
        f"PR {_g(p, 'pr_action_id')}: {_g(p, 'from_status')} → {_g(p, 'gate_status')}"
        + (f" ({p['reason']})" if p.get("reason") else "")
    ),
    "infra.artifact_blocked": lambda p: f"PR {_g(p, 'pr_action_id')} BLOCKED: {_g(p, 'reason')}",
    "infra.pr_merged": lambda p: f"PR {_g(p, 'pr_action_id')} merged by {_g(p, 'operator')}",
    "artifact.qa_verdict": lambda p: f"QA {_g(p, 'verdict')} on {_g(p, 'pr_action_id', '')}",
    "artifact.secops_verdict": lambda p: (
        f"SecOps {_g(p, 'verdict')} on {_g(p, 'pr_action_id', '')}"
    ),
    "TENTATIVA_DE_FERRAMENTA_REGISTRADA": lambda p: (
        f"{_g(p, 'ferramenta')} tentativa {_g(p, 'tentativaNumero')} → {_g(p, 'resultado')}"
        f" (conversa {_g(p, 'conversaId')})"
    ),
    "interrupcao.aberta": lambda p: (
        f"interruption #{_g(p, 'interrupcao_id')} opened: {_g(p, 'motivo')}"
        f" on {_g(p, 'ferramenta')} (conversa {_g(p, 'conversaId')})"
    ),
    "interrupcao.assumida": lambda p: (
        f"interruption #{_g(p, 'interrupcao_id')} taken over by {_g(p, 'operator')}"
    ),
    "interrupcao.resolvida": lambda p: (
        f"interruption #{_g(p, 'interrupcao_id')} resolved by {_g(p, 'operator')}:"
        f" {_g(p, 'action')}"
    ),
    "conversa.mensagem": lambda p: f"[{_g(p, 'autor')}] {_g(p, 'texto', '')}",
    "handoff.accepted": lambda p: f"handoff {_g(p, 'from_agent')} → {_g(p, 'to_agent')} accepted",
    "dev.task_started": lambda p: f"started {_g(p, 'title')}",
    "dev.task_done": lambda p: f"finished {_g(p, 'title')}",
}
