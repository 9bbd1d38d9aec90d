"""``derive_roster``: the team as it stands after a list of events (ADR 0014's deriveAgentRoster).

A pure function of the event log: feed it the events up to id N and you get the roster
at N (time travel). Who is on the roster:

* ``criativo``, ``po``, ``arquiteto`` — always;
* ``infra`` — once a handoff to infra was accepted (``handoff.accepted`` or ``handoffs``);
* ``dev-<module>`` — one per module once execution is activated;
* ``qa`` and ``secops`` — once any gate (dev or infra) has opened;
* ``atendimento`` — once a customer conversation exists.

An agent an operator paused (``agent.paused``, until its ``agent.resumed``) shows
``paused`` with ``paused_by``, whatever it was doing: a pause covers the agent id in every
project, so those events carry no project.

Status is best-effort, for the panel only — no gate decision reads it:

* conversational agents: their latest ``agent.status`` (default ``idle``; ``error`` after a
  provider failure until a turn succeeds; ``blocked`` / ``budget`` when the budget stopped
  them);
* dev agents: their latest own event — ``dev.task_done`` idle, ``backlog.task_blocked``
  blocked, any other ``dev.*`` working (an ``agent.status`` counts too);
* qa / secops: ``working`` while some PR waits in ``awaiting_qa`` / ``awaiting_secops``;
  else ``blocked`` when the latest gate change was to ``blocked``; else ``idle``.

``model`` is the spec that ran the agent's latest ``agent.turn`` (what really answered),
else its binding. ``usage`` (today's tokens and cost) comes from the caller, who reads it
from the usage table, not from the log.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from backend.agents.activity import EventView, as_event
from backend.agents.policy import pattern_matches
from backend.agents.team import (
    ARQUITETO,
    CRIATIVO,
    CUSTOMER_SERVICE,
    DEV_PREFIX,
    INFRA,
    PO,
    QA,
    SECOPS,
    dev_agent_id,
    role_of,
)
from backend.events import EventType

Status = Literal["working", "idle", "blocked", "paused", "offline", "error"]
STATUSES: tuple[str, ...] = ("working", "idle", "blocked", "paused", "offline", "error")

GATE_EVENTS: frozenset[str] = frozenset(
    {
        EventType.PR_GATE_CHANGED,
        EventType.INFRA_GATE_CHANGED,
        EventType.INFRA_PR_OPENED,
        EventType.INFRA_PR_CORRECTED,
        EventType.INFRA_PR_MERGED,
        EventType.INFRA_ARTIFACT_BLOCKED,
        EventType.ARTIFACT_QA_VERDICT,
        EventType.ARTIFACT_SECOPS_VERDICT,
    }
)
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


@dataclass
class _State:
    """What one pass over the log learned."""

    status: dict[str, tuple[str, str]] = field(default_factory=dict)
    dev_last: dict[str, EventView] = field(default_factory=dict)
    execution: bool = False
    modules: list[str] = field(default_factory=list)
    infra_accepted: bool = False
    seeded: dict[tuple[str, str], str] = field(default_factory=dict)
    gate_opened: bool = False
    gates: dict[str, str] = field(default_factory=dict)
    last_gate: tuple[str, str, str] | None = None
    conversation: bool = False
    paused: dict[str, tuple[str, str]] = field(default_factory=dict)
    """Agent → (who paused it, why) while paused."""
    last_model: dict[str, str] = field(default_factory=dict)


def derive_roster(
    events: Iterable[Any],
    module_map: Any = None,
    execution_activated: bool | None = None,
    handoffs: Iterable[Any] | None = None,
    *,
    bindings: Mapping[str, str] | Callable[[str], str] | None = None,
    autonomy: Mapping[tuple[str, str], str] | None = None,
    usage: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[RosterEntry]:
    """The roster after ``events``.

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
    state = _scan(sorted((as_event(e) for e in events), key=lambda v: v.id))
    if handoffs is not None and any(_accepted_to_infra(h) for h in handoffs):
        state.infra_accepted = True
    table = {**state.seeded, **(autonomy or {})}
    modules = _module_names(module_map) or state.modules

    def entry(agent_id: str, status: str, detail: str) -> RosterEntry:
        paused_by: str | None = None
        if agent_id in state.paused:
            paused_by, why = state.paused[agent_id]
            status, detail = "paused", f"paused by {paused_by}" + (f": {why}" if why else "")
        return RosterEntry(
            id=agent_id,
            role=role_of(agent_id),
            status=status if status in STATUSES else "idle",  # type: ignore[arg-type]
            model=state.last_model.get(agent_id) or _model(bindings, agent_id),
            autonomy={
                action: value
                for (who, action), value in table.items()
                if pattern_matches(who, agent_id)
            },
            detail=detail,
            paused_by=paused_by,
            usage=dict(usage[agent_id]) if usage and agent_id in usage else None,
        )

    roster = [entry(a, *_conversational(state, a)) for a in (CRIATIVO, PO, ARQUITETO)]
    if state.infra_accepted:
        roster.append(entry(INFRA, *_infra(state)))
    if execution_activated or state.execution:
        roster += [entry(dev_agent_id(m), *_dev(state, dev_agent_id(m))) for m in modules]
    if state.gate_opened:
        roster.append(entry(QA, *_gate(state, "awaiting_qa", "reviewing")))
        roster.append(entry(SECOPS, *_gate(state, "awaiting_secops", "scanning")))
    if state.conversation or CUSTOMER_SERVICE in state.status:
        roster.append(entry(CUSTOMER_SERVICE, *_conversational(state, CUSTOMER_SERVICE)))
    return roster


def _scan(views: list[EventView]) -> _State:
    state = _State()
    for view in views:
        p = view.payload
        kind = view.type
        if kind == EventType.AGENT_STATUS and view.agent:
            state.status[view.agent] = (str(p.get("status") or "idle"), _text(p.get("detail")))
            if view.agent.startswith(DEV_PREFIX):
                state.dev_last[view.agent] = view
        elif kind == EventType.AGENT_PAUSED and view.agent:
            state.paused[view.agent] = (_text(p.get("operator")) or "?", _text(p.get("reason")))
        elif kind == EventType.AGENT_RESUMED and view.agent:
            state.paused.pop(view.agent, None)
        elif kind == EventType.AGENT_TURN and view.agent and p.get("model"):
            state.last_model[view.agent] = str(p["model"])
        elif kind == EventType.EXECUTION_ACTIVATED:
            state.execution = True
            state.modules = _module_names(p.get("modules")) or state.modules
        elif kind == EventType.HANDOFF_ACCEPTED and p.get("to_agent") == INFRA:
            state.infra_accepted = True
            seeded = p.get("autonomy_seeded")
            if isinstance(seeded, Mapping):
                state.seeded.update({(INFRA, str(k)): str(v) for k, v in seeded.items()})
        elif kind in DEV_EVENTS:
            owner = _dev_owner(view)
            if owner:
                state.dev_last[owner] = view
        if kind in GATE_EVENTS:
            state.gate_opened = True
            _track_gate(state, view)
        if kind in CONVERSATION_EVENTS:
            state.conversation = True
    return state


def _track_gate(state: _State, view: EventView) -> None:
    p = view.payload
    status = p.get("gate_status") or _IMPLIED_GATE_STATUS.get(view.type)
    if not status:
        return
    if p.get("pr_action_id") is not None:
        subject = f"infra PR {p['pr_action_id']}"
    else:
        subject = f"dev PR {p.get('task_id') or p.get('pr_id') or '?'}"
    state.gates[subject] = str(status)
    state.last_gate = (subject, str(status), _text(p.get("reason")))


def _conversational(state: _State, agent_id: str) -> tuple[str, str]:
    status, detail = state.status.get(agent_id, ("idle", ""))
    if detail:
        return status, detail
    return status, "running a turn" if status == "working" else "waiting for input"


def _infra(state: _State) -> tuple[str, str]:
    status, detail = _conversational(state, INFRA)
    if status == "idle" and not state.status.get(INFRA, ("", ""))[1]:
        infra_prs = [(s, g) for s, g in state.gates.items() if s.startswith("infra PR")]
        if infra_prs:
            subject, gate = infra_prs[-1]
            return status, f"{subject}: {gate}"
    return status, detail


def _dev(state: _State, agent_id: str) -> tuple[str, str]:
    view = state.dev_last.get(agent_id)
    if view is None:
        return "idle", "waiting for a task"
    p = view.payload
    task = f"task {p.get('task_id', '?')}"
    if view.type == EventType.AGENT_STATUS:
        return _conversational(state, agent_id)
    if view.type == EventType.DEV_TASK_DONE:
        return "idle", f"finished {task}"
    if view.type == EventType.BACKLOG_TASK_BLOCKED:
        return "blocked", f"blocked on {task}: {_text(p.get('reason')) or 'no reason given'}"
    title = _text(p.get("title"))
    return "working", f"working on {task}" + (f": {title}" if title else "")


def _gate(state: _State, waiting: str, verb: str) -> tuple[str, str]:
    queue = [subject for subject, status in state.gates.items() if status == waiting]
    if queue:
        more = f" (+{len(queue) - 1} queued)" if len(queue) > 1 else ""
        return "working", f"{verb} {queue[-1]}{more}"
    if state.last_gate and state.last_gate[1] == "blocked":
        subject, _, reason = state.last_gate
        return "blocked", f"{subject} blocked" + (f": {reason}" if reason else "")
    return "idle", "no PR waiting"


def _dev_owner(view: EventView) -> str | None:
    if view.agent and view.agent.startswith(DEV_PREFIX):
        return view.agent
    module = view.payload.get("module")
    return dev_agent_id(str(module)) if module else None


def _accepted_to_infra(record: Any) -> bool:
    def get(key: str) -> Any:
        if isinstance(record, Mapping):
            return record.get(key)
        return getattr(record, key, None)

    return get("to_agent") == INFRA and (get("status") == "accepted" or bool(get("accepted_at")))


def _module_names(module_map: Any) -> list[str]:
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


def _model(bindings: Mapping[str, str] | Callable[[str], str] | None, agent_id: str) -> str | None:
    if bindings is None:
        return None
    if callable(bindings):
        return bindings(agent_id)
    return bindings.get(agent_id) or bindings.get("*")


def _text(value: Any) -> str:
    return "" if value is None else " ".join(str(value).split())[:120]
