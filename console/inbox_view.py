"""Pure Inbox view logic: project labels that tell same-named projects apart, which
items are new to the operator, which one needs attention next. Tested with plain asserts."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from console.models_inbox import InboxItem

SHORT_ID = 6
"""Characters of a project id shown after a name two projects share."""
ATTENTION_STATES = frozenset({"awaiting_human", "blocked", "open", "pending", "offered"})
"""States in which an item waits on a human, not on an agent or a gate (``n`` skips the
others: a claimed takeover, a PR whose gates are still running)."""


def project_labels(items: Iterable[InboxItem]) -> dict[str, str]:
    """``project_id`` → what the project column shows: the name, plus a short id when
    two projects in the list share that name (``loja-demo·a1b2c3``)."""
    names: dict[str, str] = {}
    for item in items:
        if item.project_id is not None:
            names.setdefault(item.project_id, item.project_name or "")
    seen = Counter(names.values())
    return {
        pid: (f"{name or '?'}·{pid[:SHORT_ID]}" if seen[name] > 1 or not name else name)
        for pid, name in names.items()
    }


def project_label(item: InboxItem, labels: dict[str, str]) -> str:
    """The project cell of one item (``—`` for an item of no project)."""
    if item.project_id is None:
        return "—"
    return labels.get(item.project_id, item.project_name or item.project_id[:SHORT_ID])


def needs_attention(item: InboxItem) -> bool:
    """True when the next move is a human's."""
    return item.state in ATTENTION_STATES or item.kind in ("pr_stuck", "uncertain")


def next_attention(items: Sequence[InboxItem], current: str | None) -> str | None:
    """The id of the first item after ``current`` (wrapping) that needs attention."""
    ids = [i.id for i in items]
    start = ids.index(current) + 1 if current in ids else 0
    for offset in range(len(items)):
        item = items[(start + offset) % len(items)]
        if needs_attention(item):
            return item.id
    return None


def arrivals(known: set[str] | None, items: Iterable[InboxItem]) -> set[str]:
    """Ids in ``items`` that were not in ``known`` (None: the first load, nothing arrived)."""
    if known is None:
        return set()
    return {i.id for i in items} - known
