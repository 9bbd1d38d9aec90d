"""The team as it stands after a list of events: the roster panel.

A pure function of the event log (the seed's ADR 0014, ``deriveAgentRoster``): the events
up to id N give the roster at N. What each event means for the roster is
:func:`backend.agents.roster_facts.facts_of`; :func:`render_roster` draws the panel from
the resulting facts, folded in memory here (:func:`derive_roster`) or read from the
projection tables (:mod:`backend.projections`), so the semantics are written once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from backend.agents.policy import pattern_matches
from backend.agents.roster_facts import (
    CONVERSATION_EVENTS,
    DEV_EVENTS,
    GATE_EVENTS,
    Row,
    Table,
    fold,
    merge,
    module_names,
)
from backend.agents.team import (
    ARQUITETO,
    CRIATIVO,
    CUSTOMER_SERVICE,
    INFRA,
    PO,
    QA,
    SECOPS,
    dev_agent_id,
    role_of,
)
from backend.events import EventType
from backend.redact import redact_text

__all__ = [
    "CONVERSATION_EVENTS",
    "DEV_EVENTS",
    "GATE_EVENTS",
    "STATUSES",
    "RosterEntry",
    "Status",
    "derive_roster",
    "render_roster",
]

Status = Literal["working", "idle", "blocked", "paused", "offline", "error"]
STATUSES: tuple[str, ...] = ("working", "idle", "blocked", "paused", "offline", "error")


@dataclass(frozen=True)
class RosterEntry:
    """One agent on the panel."""

    id: str
    role: str
    status: Status
    model: str | None
    autonomy: dict[str, str] = field(default_factory=dict)
    detail: str = ""
    paused_by: str | None = None
    usage: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The HTTP API's shape ``{id, role, status, model, autonomy, detail, paused_by,
        usage}``."""
        return {
            "id": self.id,
            "role": self.role,
            "status": self.status,
            "model": self.model,
            "autonomy": dict(self.autonomy),
            "detail": self.detail,
            "paused_by": self.paused_by,
            "usage": dict(self.usage) if self.usage is not None else None,
        }


Bindings = Mapping[str, str] | Callable[[str], str] | None


def derive_roster(
    events: Iterable[Any],
    module_map: Any = None,
    execution_activated: bool | None = None,
    handoffs: Iterable[Any] | None = None,
    *,
    bindings: Bindings = None,
    autonomy: Mapping[tuple[str, str], str] | None = None,
    usage: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[RosterEntry]:
    """The roster after ``events``: :func:`render_roster` of their folded facts.

    Args:
        events: events in log order (``Event`` objects or dicts).
        module_map: ``{"modules": [{"name": ...}]}``, a list of names or of such dicts;
            ``None`` uses the ``modules`` of the latest ``execution.activated`` event.
        execution_activated: ``True`` forces execution on; ``None``/``False`` leave it to
            the log (an ``execution.activated`` event), which is what time travel needs.
        handoffs: handoff records (``to_agent`` and ``status``); an accepted one to
            ``infra`` adds infra, as does a ``handoff.accepted`` event.
        bindings: agent id → model spec, or a callable such as
            ``lambda a: model_binding(a, settings)``.
        autonomy: ``{(agent, action): value}`` rows; added to what handoffs seeded.
        usage: agent id → today's ``{input_tokens, output_tokens, cost_usd}``.

    Returns:
        Entries in panel order: conversational agents, devs, gates, customer service.
    """
    ordered = sorted(events, key=lambda e: _id_of(e))
    return render_roster(
        merge(fold(ordered).values()),
        module_map,
        execution_activated,
        handoffs,
        bindings=bindings,
        autonomy=autonomy,
        usage=usage,
    )


def render_roster(
    facts: Table,
    module_map: Any = None,
    execution_activated: bool | None = None,
    handoffs: Iterable[Any] | None = None,
    *,
    bindings: Bindings = None,
    autonomy: Mapping[tuple[str, str], str] | None = None,
    usage: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[RosterEntry]:
    """The roster from a merged fact table (:mod:`backend.agents.roster_facts`).

    The arguments after ``facts`` are :func:`derive_roster`'s; the projection tables give
    ``facts`` without reading the log. Who is on it:

    * ``criativo``, ``po``, ``arquiteto`` — always;
    * ``infra`` — once a handoff to infra was accepted (``handoff.accepted`` or ``handoffs``);
    * ``dev-<module>`` — one per module once execution is activated;
    * ``qa`` and ``secops`` — once any gate (dev or infra) has opened;
    * ``atendimento`` — once a customer conversation exists.

    A paused agent (``agent.paused`` until its ``agent.resumed``, in every project) shows
    ``paused`` with ``paused_by``, whatever it was doing. Otherwise status is best-effort,
    for the panel only (no gate decision reads it):

    * conversational agents: their latest ``agent.status`` (default ``idle``; ``error``
      after a provider failure until a turn succeeds; ``blocked`` / ``budget`` when the
      budget stopped them);
    * dev agents: their latest own event — ``dev.task_done`` idle,
      ``backlog.task_blocked`` blocked, any other ``dev.*`` working (an ``agent.status``
      counts too);
    * qa / secops: ``working`` while some PR waits in ``awaiting_qa`` / ``awaiting_secops``;
      else ``blocked`` when the latest gate change was to ``blocked``; else ``idle``.

    ``model`` is the spec that ran the agent's latest ``agent.turn`` (what really
    answered), else its binding. ``usage`` (today's tokens and cost) comes from the caller,
    who reads it from the usage table, not from the log.
    """
    state = _State(facts)
    infra_accepted = state.flag("infra") or (
        handoffs is not None and any(_accepted_to_infra(h) for h in handoffs)
    )
    table = {**state.seeded(), **(autonomy or {})}
    modules = module_names(module_map) or list(state.value("modules") or [])

    def entry(agent_id: str, status: str, detail: str) -> RosterEntry:
        paused_by: str | None = None
        pause = state.value(f"pause:{agent_id}")
        if pause:
            paused_by, why = pause
            status, detail = "paused", f"paused by {paused_by}" + (f": {why}" if why else "")
        return RosterEntry(
            id=agent_id,
            role=role_of(agent_id),
            status=status if status in STATUSES else "idle",  # type: ignore[arg-type]
            model=_shown_model(state.value(f"model:{agent_id}") or _model(bindings, agent_id)),
            autonomy={
                action: value
                for (who, action), value in table.items()
                if pattern_matches(who, agent_id)
            },
            detail=redact_text(detail),
            paused_by=paused_by,
            usage=dict(usage[agent_id]) if usage and agent_id in usage else None,
        )

    roster = [entry(a, *_conversational(state, a)) for a in (CRIATIVO, PO, ARQUITETO)]
    if infra_accepted:
        roster.append(entry(INFRA, *_infra(state)))
    if execution_activated or state.flag("execution"):
        roster += [entry(dev_agent_id(m), *_dev(state, dev_agent_id(m))) for m in modules]
    if state.flag("gate_opened"):
        roster.append(entry(QA, *_gate(state, "awaiting_qa", "reviewing")))
        roster.append(entry(SECOPS, *_gate(state, "awaiting_secops", "scanning")))
    if state.flag("conversation") or state.status(CUSTOMER_SERVICE) is not None:
        roster.append(entry(CUSTOMER_SERVICE, *_conversational(state, CUSTOMER_SERVICE)))
    return roster


class _State:
    """Read access to a merged fact table, in the terms the renderers need."""

    def __init__(self, facts: Table) -> None:
        self.facts = facts
        # Keys in the order a pass over the log first met them (dict order of the old fold).
        self._ordered: list[tuple[str, Row]] = sorted(facts.items(), key=lambda kv: kv[1].first_id)

    def value(self, key: str) -> Any:
        row = self.facts.get(key)
        return None if row is None else row.value

    def flag(self, key: str) -> bool:
        return bool(self.value(key))

    def status(self, agent_id: str) -> tuple[str, str] | None:
        got = self.value(f"status:{agent_id}")
        return (str(got[0]), str(got[1])) if got else None

    def seeded(self) -> dict[tuple[str, str], str]:
        return {
            (INFRA, key[5:]): str(row.value) for key, row in self._ordered if key[:5] == "seed:"
        }

    def gates(self) -> list[tuple[str, str]]:
        return [(key[5:], str(row.value)) for key, row in self._ordered if key[:5] == "gate:"]


def _id_of(event: Any) -> int:
    raw = event.get("id") if isinstance(event, Mapping) else getattr(event, "id", 0)
    try:
        return int(raw or 0)
    except (TypeError, ValueError):
        return 0


def _conversational(state: _State, agent_id: str) -> tuple[str, str]:
    status, detail = state.status(agent_id) or ("idle", "")
    if detail:
        return status, detail
    return status, "running a turn" if status == "working" else "waiting for input"


def _infra(state: _State) -> tuple[str, str]:
    status, detail = _conversational(state, INFRA)
    if status == "idle" and not (state.status(INFRA) or ("", ""))[1]:
        infra_prs = [(s, g) for s, g in state.gates() if s.startswith("infra PR")]
        if infra_prs:
            subject, gate = infra_prs[-1]
            return status, f"{subject}: {gate}"
    return status, detail


def _dev(state: _State, agent_id: str) -> tuple[str, str]:
    last = state.value(f"dev:{agent_id}")
    if not last:
        return "idle", "waiting for a task"
    task = f"task {last.get('task_id', '?')}"
    kind = last.get("type")
    if kind == EventType.AGENT_STATUS:
        return _conversational(state, agent_id)
    if kind == EventType.DEV_TASK_DONE:
        return "idle", f"finished {task}"
    if kind == EventType.BACKLOG_TASK_BLOCKED:
        return "blocked", f"blocked on {task}: {last.get('reason') or 'no reason given'}"
    title = last.get("title")
    return "working", f"working on {task}" + (f": {title}" if title else "")


def _gate(state: _State, waiting: str, verb: str) -> tuple[str, str]:
    queue = [subject for subject, status in state.gates() if status == waiting]
    if queue:
        more = f" (+{len(queue) - 1} queued)" if len(queue) > 1 else ""
        return "working", f"{verb} {queue[-1]}{more}"
    last = state.value("last_gate")
    if last and last[1] == "blocked":
        subject, _, reason = last
        return "blocked", f"{subject} blocked" + (f": {reason}" if reason else "")
    return "idle", "no PR waiting"


def _accepted_to_infra(record: Any) -> bool:
    def get(key: str) -> Any:
        if isinstance(record, Mapping):
            return record.get(key)
        return getattr(record, key, None)

    return get("to_agent") == INFRA and (get("status") == "accepted" or bool(get("accepted_at")))


def _shown_model(spec: str | None) -> str | None:
    # A binding straight from settings may hold a URL with credentials.
    return redact_text(spec) if spec else spec


def _model(bindings: Mapping[str, str] | Callable[[str], str] | None, agent_id: str) -> str | None:
    if bindings is None:
        return None
    if callable(bindings):
        return bindings(agent_id)
    return bindings.get(agent_id) or bindings.get("*")
