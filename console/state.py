"""Pure view logic: which rows the lists show and in what order, counts, backoff.

Kept apart from the widgets so it is tested with plain asserts.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from datetime import datetime

from console.models import Approvals, Interruption, PullRequest, RosterEntry
from console.models_inbox import InboxItem

AWAITING_HUMAN = "awaiting_human"

_GATE_RANK = {
    "awaiting_human": 0,
    "blocked": 1,
    "changes_requested": 2,
    "awaiting_secops": 3,
    "awaiting_qa": 4,
}
_INTERRUPTION_RANK = {"open": 0, "claimed": 1}

ROSTER_EVENTS = frozenset(
    {"handoff.accepted", "execution.activated", "infra.pr_opened", "conversa.mensagem"}
    | {"agent.paused", "agent.resumed"}
)
"""Events after which the roster may gain members or change status: refetch it."""

APPROVAL_EVENT_PREFIXES = ("infra.", "artifact.", "interrupcao.", "ledger.")
INBOX_EVENT_PREFIXES = (
    *APPROVAL_EVENT_PREFIXES,
    "pr.",
    "dev.",
    "handoff.",
    "approval.",
    "job.",
    "conversa.sem_resposta",
    "conversa.respondida",
)
"""The Inbox also lists dev and ADR PRs, held actions, offered handoffs, dead jobs and
customers no agent will answer."""
_TOUCH_KEYS = (
    ("pr_action_id", "pr"),
    ("pr_id", "pr"),
    ("task_id", "task"),
    ("approval_id", "approval"),
    ("handoff_id", "handoff"),
)
"""Payload field → the detail screen key an event with it concerns."""
ATTEMPT_EVENT = "TENTATIVA_DE_FERRAMENTA_REGISTRADA"

RESULTADO_STYLE = {
    "executado": "green",
    "bloqueado_por_idempotencia": "cyan",
    "bloqueado_por_teto": "bold red",
    "argumentos_invalidos": "magenta",
    "falhou": "red",
    "resultado_incerto": "bold yellow",
}
"""A Rich style per ledger ``resultado``: an operator spots what needs a human first."""


def resultado_style(resultado: str) -> str:
    """The style for a ``resultado``; an unknown value stays plain, not green."""
    return RESULTADO_STYLE.get(resultado, "")


def ordered_prs(prs: Iterable[PullRequest]) -> list[PullRequest]:
    """Awaiting-human first, then blocked, then the rest by gate stage; oldest first within."""
    return sorted(prs, key=lambda p: (_GATE_RANK.get(p.gate_status, 9), p.created_at))


def ordered_interruptions(items: Iterable[Interruption]) -> list[Interruption]:
    """Open (nobody on it) first, then claimed; oldest first within."""
    return sorted(items, key=lambda i: (_INTERRUPTION_RANK.get(i.status, 9), i.since, i.id))


def awaiting_counts(approvals: Approvals) -> tuple[int, int]:
    """(PRs awaiting a human, interruptions nobody has claimed yet)."""
    prs = sum(1 for p in approvals.infra_prs if p.gate_status == AWAITING_HUMAN)
    interruptions = sum(1 for i in approvals.interruptions if i.status == "open")
    return prs, interruptions


def inbox_awaiting_counts(items: Iterable[InboxItem]) -> tuple[int, int]:
    """(PRs of any kind awaiting a human, interruptions nobody has claimed) on the Inbox."""
    found = list(items)
    prs = sum(1 for i in found if i.kind == "pr")
    interruptions = sum(1 for i in found if i.kind == "interruption" and i.state == "open")
    return prs, interruptions


def matches(query: str, *fields: object) -> bool:
    """Case-insensitive substring filter over the given fields (empty query matches)."""
    if not query:
        return True
    q = query.casefold()
    return any(q in str(f).casefold() for f in fields if f is not None)


def roster_matches(query: str, entry: RosterEntry) -> bool:
    """Filter for the roster table."""
    return matches(query, entry.id, entry.role, entry.status, entry.detail)


def needs_roster_refetch(event_type: str) -> bool:
    """True for events that can add an agent or change a derived status."""
    return event_type in ROSTER_EVENTS or event_type.startswith(("infra.", "artifact.", "dev."))


def needs_approvals_refetch(event_type: str, payload: dict[str, object] | None = None) -> bool:
    """True for events that can change what waits on people (an uncertain attempt is an
    Approvals item of its own)."""
    if event_type == ATTEMPT_EVENT:
        return (payload or {}).get("resultado") == "resultado_incerto"
    return event_type.startswith(APPROVAL_EVENT_PREFIXES)


def needs_inbox_refetch(event_type: str, payload: dict[str, object] | None = None) -> bool:
    """True for events that can change what the Inbox lists."""
    return needs_approvals_refetch(event_type, payload) or event_type.startswith(
        INBOX_EVENT_PREFIXES
    )


def touched_items(event_type: str, payload: dict[str, object]) -> set[str]:
    """Which open screens an event concerns: ``conv:<conversaId>``, ``int:<id>``,
    ``pr:<id>``, ``task:<id>`` (a dev PR's task), ``approval:<id>``, ``handoff:<id>``."""
    keys: set[str] = set()
    for field, prefix in _TOUCH_KEYS:
        value = payload.get(field)
        if isinstance(value, str) and value:
            keys.add(f"{prefix}:{value}")
    conversa = payload.get("conversaId")
    if isinstance(conversa, str) and conversa:
        keys.add(f"conv:{conversa}")
    ident = payload.get("interrupcao_id")
    if event_type.startswith("interrupcao.") and isinstance(ident, int):
        keys.add(f"int:{ident}")
    return keys


def backoff_delay(
    failures: int, *, base: float = 0.5, cap: float = 15.0, rng: random.Random | None = None
) -> float:
    """Full-jitter exponential backoff: uniform in ``[base/2, min(cap, base*2**n)]``.

    Jitter keeps many consoles from reconnecting in lockstep after a backend restart.
    """
    ceiling = min(cap, base * (2 ** max(0, failures - 1)))
    return (rng or random).uniform(base / 2, max(base / 2, ceiling))


def since_text(seconds: float) -> str:
    """A compact age: ``42s``, ``7m``, ``3h``, ``2d``."""
    s = max(0, int(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m"
    if s < 86400:
        return f"{s // 3600}h"
    return f"{s // 86400}d"


def age_text(since: str, now: datetime, fallback_s: float | None = None) -> str:
    """How long ago ``since`` (ISO 8601) was, by the console's clock; ``fallback_s`` (the
    server's age) when ``since`` does not parse."""
    try:
        then = datetime.fromisoformat(since)
    except ValueError:
        return "?" if fallback_s is None else since_text(fallback_s)
    if then.tzinfo is None:
        return "?" if fallback_s is None else since_text(fallback_s)
    return since_text((now - then).total_seconds())
