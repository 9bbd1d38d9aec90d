"""The roster's semantics as one pure function: :func:`facts_of` an event.

Each event the roster cares about yields a few :class:`Fact` s, and the roster is rendered
from the latest fact of each key (:func:`backend.agents.roster.render_roster`). A key's
value is the one of the fact with the highest event id (``mode="last"``), or a flag set
once (``mode="first"``, event id 0), so applying facts is commutative and idempotent: the
in-memory fold, the projection tables (:mod:`backend.projections`), a replay from a
snapshot and a rebuild from the log all give the same table, whatever order concurrent
writers commit in. The keys are listed on :func:`facts_of`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from backend.agents.activity import EventView, as_event
from backend.agents.team import DEV_PREFIX, INFRA, dev_agent_id
from backend.events import EventType
from backend.events.catalog import GATE_EVENTS

GLOBAL = ""
"""The scope of events that belong to no project (they count in every project)."""

Mode = Literal["last", "first"]

CONVERSATION_EVENTS: frozenset[str] = frozenset(
    {EventType.CONVERSA_MENSAGEM, EventType.TENTATIVA_DE_FERRAMENTA_REGISTRADA}
    | {EventType.INTERRUPCAO_ABERTA}
)
DEV_EVENTS: frozenset[str] = frozenset(
    {EventType.DEV_TASK_STARTED, EventType.DEV_TASK_DONE, EventType.BACKLOG_TASK_BLOCKED}
)
_IMPLIED_GATE_STATUS: dict[str, str] = {
    EventType.INFRA_PR_OPENED: "awaiting_qa",
    EventType.INFRA_PR_CORRECTED: "awaiting_qa",
    EventType.INFRA_PR_MERGED: "merged",
    EventType.INFRA_ARTIFACT_BLOCKED: "blocked",
}
FLAGS: frozenset[str] = frozenset({"execution", "infra", "gate_opened", "conversation"})
FACT_EVENTS: frozenset[str] = (
    frozenset(
        {
            EventType.AGENT_STATUS,
            EventType.AGENT_PAUSED,
            EventType.AGENT_RESUMED,
            EventType.AGENT_TURN,
            EventType.EXECUTION_ACTIVATED,
            EventType.HANDOFF_ACCEPTED,
        }
    )
    | DEV_EVENTS
    | GATE_EVENTS
    | CONVERSATION_EVENTS
)
"""The only event types :func:`facts_of` finds facts in: every other event is skipped
before its payload is even looked at (the projector runs on every append)."""


@dataclass(frozen=True)
class Fact:
    """One thing an event says about the roster."""

    scope: str
    key: str
    value: Any
    event_id: int
    mode: Mode = "last"


@dataclass(frozen=True)
class Row:
    """A key's current fact: its value, the event that set it, the first event of the key.

    ``first_id`` orders keys the way a pass over the log first met them (the gate queue
    and the seeded autonomy are shown in that order).
    """

    value: Any
    event_id: int
    first_id: int


Table = dict[str, Row]
"""key → row, for one scope (or several merged)."""


def facts_of(event: Any) -> list[Fact]:
    """What ``event`` (an ``Event``, an :class:`EventView` or a dict) says about the roster.

    Most events say nothing (``[]``) or one fact; none says more than four.

    Keys (``<agent>`` an agent id):

    * ``status:<agent>`` — ``[status, detail]`` of its latest ``agent.status``;
    * ``dev:<agent>`` — a dev agent's latest own event ``{type, task_id, title, reason}``;
    * ``pause:<agent>`` — ``[operator, reason]`` while paused, ``None`` once resumed;
    * ``model:<agent>`` — the model spec of its latest ``agent.turn``;
    * ``execution`` (flag), ``modules`` — from ``execution.activated``;
    * ``infra`` (flag), ``seed:<action>`` — an accepted handoff to infra and the autonomy it
      seeded;
    * ``gate_opened`` (flag), ``gate:<subject>`` (that PR's gate status), ``last_gate``
      (``[subject, status, reason]``) — from gate events;
    * ``conversation`` (flag) — a customer conversation exists.

    Scope is the event's project; an event with no project (a pause, a customer conversation)
    is in :data:`GLOBAL` and counts for every project's roster.
    """
    kind = event.get("type") if isinstance(event, Mapping) else getattr(event, "type", None)
    if not isinstance(kind, str) or kind not in FACT_EVENTS:
        return []
    return facts_of_view(as_event(event))


def facts_of_view(view: EventView) -> list[Fact]:
    """:func:`facts_of` without its shortcut on :data:`FACT_EVENTS` (a test proves the
    shortcut skips nothing this would find)."""
    kind, p, agent = view.type, view.payload, view.agent
    scope = view.project_id or GLOBAL
    out: list[Fact] = []

    def put(key: str, value: Any, mode: Mode = "last") -> None:
        out.append(Fact(scope, key, value, view.id, mode))

    if kind == EventType.AGENT_STATUS and agent:
        put(f"status:{agent}", [str(p.get("status") or "idle"), _text(p.get("detail"))])
        if agent.startswith(DEV_PREFIX):
            put(f"dev:{agent}", _dev_value(view))
    elif kind == EventType.AGENT_PAUSED and agent:
        put(f"pause:{agent}", [_text(p.get("operator")) or "?", _text(p.get("reason"))])
    elif kind == EventType.AGENT_RESUMED and agent:
        put(f"pause:{agent}", None)
    elif kind == EventType.AGENT_TURN and agent and p.get("model"):
        put(f"model:{agent}", str(p["model"]))
    elif kind == EventType.EXECUTION_ACTIVATED:
        put("execution", True, "first")
        modules = module_names(p.get("modules"))
        if modules:
            put("modules", modules)
    elif kind == EventType.HANDOFF_ACCEPTED and p.get("to_agent") == INFRA:
        put("infra", True, "first")
        seeded = p.get("autonomy_seeded")
        if isinstance(seeded, Mapping):
            for action, value in seeded.items():
                put(f"seed:{action}", str(value))
    elif kind in DEV_EVENTS:
        owner = _dev_owner(view)
        if owner:
            put(f"dev:{owner}", _dev_value(view))
    if kind in GATE_EVENTS:
        put("gate_opened", True, "first")
        status = p.get("gate_status") or _IMPLIED_GATE_STATUS.get(kind)
        if status:
            if p.get("pr_action_id") is not None:
                subject = f"infra PR {p['pr_action_id']}"
            else:
                subject = f"dev PR {p.get('task_id') or p.get('pr_id') or '?'}"
            put(f"gate:{subject}", str(status))
            put("last_gate", [subject, str(status), _text(p.get("reason"))])
    if kind in CONVERSATION_EVENTS:
        put("conversation", True, "first")
    return out


def apply(table: Table, fact: Fact) -> None:
    """Apply one fact to ``table`` in place (what the SQL upserts do, in memory).

    ``last``: the higher event id wins (an equal id too, so a list of id-less dicts folds
    in list order), ``first_id`` is the lowest id that touched the key; ``first``: the
    flag is set, as ``Row(value, 0, 0)`` whichever event set it (in SQL an
    ``ON CONFLICT DO NOTHING`` that neither writes nor locks the row once it is set).
    """
    row = table.get(fact.key)
    if fact.mode == "first":
        if row is None:
            table[fact.key] = Row(fact.value, 0, 0)
    elif row is None:
        table[fact.key] = Row(fact.value, fact.event_id, fact.event_id)
    elif fact.event_id >= row.event_id:
        table[fact.key] = Row(fact.value, fact.event_id, min(row.first_id, fact.event_id))
    elif fact.event_id < row.first_id:
        table[fact.key] = Row(row.value, row.event_id, fact.event_id)


def fold(events: Iterable[Any], tables: dict[str, Table] | None = None) -> dict[str, Table]:
    """The fact tables per scope after ``events`` (onto ``tables`` if given, in place)."""
    tables = {} if tables is None else tables
    for event in events:
        for fact in facts_of(event):
            apply(tables.setdefault(fact.scope, {}), fact)
    return tables


def merge(tables: Iterable[Table]) -> Table:
    """Several scopes' tables as one (per key, the fact with the highest event id)."""
    out: Table = {}
    for table in tables:
        for key, row in table.items():
            if key in FLAGS:
                out.setdefault(key, row)
                continue
            apply(out, Fact(GLOBAL, key, row.value, row.event_id))
            if row.first_id < out[key].first_id:
                got = out[key]
                out[key] = Row(got.value, got.event_id, row.first_id)
    return out


def module_names(module_map: Any) -> list[str]:
    """Module names of a module map, a list of names or of ``{"name": ...}`` dicts."""
    if isinstance(module_map, Mapping):
        module_map = module_map.get("modules")
    if not isinstance(module_map, list | tuple):
        return []
    names: list[str] = []
    for item in module_map:
        name = item.get("name") if isinstance(item, Mapping) else item
        if isinstance(name, str) and name and name not in names:
            names.append(name)
    return names


def _dev_value(view: EventView) -> dict[str, Any]:
    p = view.payload
    return {
        "type": view.type,
        "task_id": str(p.get("task_id", "?")),
        "title": _text(p.get("title")),
        "reason": _text(p.get("reason")),
    }


def _dev_owner(view: EventView) -> str | None:
    if view.agent and view.agent.startswith(DEV_PREFIX):
        return view.agent
    module = view.payload.get("module")
    return dev_agent_id(str(module)) if module else None


def _text(value: Any) -> str:
    return "" if value is None else " ".join(str(value).split())[:120]


class FactSource(Protocol):
    """Where a roster reads its facts from (the projection tables, or :class:`LogFold`)."""

    def facts(self, project_id: str | None) -> Table:
        """The merged facts of ``project_id`` (and of the project-less events) now."""
        ...

    def facts_at(self, at: int, project_id: str | None) -> Table:
        """The same, as they stood at event ``at``."""
        ...


class LogFold:
    """A :class:`FactSource` that folds the whole log on each read: O(history), for a
    component built without the projection (unit tests, tools on a bare log)."""

    def __init__(self, events: Any) -> None:
        self.events = events

    def facts(self, project_id: str | None) -> Table:
        """Fold every event up to the last one."""
        return self.facts_at(self.events.last_id(), project_id)

    def facts_at(self, at: int, project_id: str | None) -> Table:
        """Fold the events up to ``at`` of ``project_id`` and of no project."""
        events = self.events.until(at)
        if project_id is not None:
            events = [e for e in events if e.project_id in (None, project_id)]
        return merge(fold(events).values())
