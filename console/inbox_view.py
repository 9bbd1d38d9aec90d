"""Pure Inbox view logic: project labels that tell same-named projects apart, which
items are new to the operator, which one needs attention next. Tested with plain asserts."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from console.models_inbox import InboxItem

SHORT_ID = 6
"""Characters of a project id shown after a name two projects share."""
ATTENTION_STATES = frozenset({"awaiting_human", "blocked", "open", "pending", "offered"})
"""States in which an item waits on a human, not on an agent or a gate (``n`` skips the
others: a claimed takeover, a PR whose gates are still running)."""


def project_labels(items: Iterable[InboxItem]) -> dict[str, str]:
    """``project_id`` → what the project column shows: the name, plus a short piece of the
    id when two projects in the list share that name (``loja·a1b2c3``). The piece starts
    where those ids begin to differ, so it tells them apart whatever the id scheme."""
    names: dict[str, str] = {}
    for item in items:
        if item.project_id is not None:
            names.setdefault(item.project_id, item.project_name or "")
    groups: dict[str, list[str]] = {}
    for pid, name in names.items():
        groups.setdefault(name, []).append(pid)
    labels: dict[str, str] = {}
    for name, pids in groups.items():
        if len(pids) == 1 and name:
            labels[pids[0]] = name
            continue
        start = _first_difference(pids)
        for pid in pids:
            labels[pid] = f"{name or '?'}·{pid[start : start + SHORT_ID]}"
    return labels


def _first_difference(ids: list[str]) -> int:
    """Where ``ids`` stop sharing a prefix, backed up so the piece shown is ``SHORT_ID`` long."""
    if len(ids) < 2:
        return max(0, ids[0].find("_") + 1) if ids else 0
    common = 0
    while all(len(i) > common and i[common] == ids[0][common] for i in ids):
        common += 1
    shortest = min(len(i) for i in ids)
    return max(0, min(common, shortest - SHORT_ID))


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


def session_label(session_id: str | None) -> str:
    """A session's short name for a column (``—`` for items no session owns)."""
    return session_id[:7] if session_id else "—"
