"""Event type names shared by the team, and one operator-readable line per event.

:data:`EVENT_TYPES` is the single list of event names and payload keys the runtime, gates,
guard and console use. :func:`render` turns any event — a ``backend.events.Event``, any
object with the same attributes, or a mapping — into an :class:`ActivityLine`; it never
raises, whatever the payload holds.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

TENTATIVA = "TENTATIVA_DE_FERRAMENTA_REGISTRADA"


@dataclass(frozen=True)
class EventType:
    """What an event means and the payload keys it carries."""

    description: str
    payload: tuple[str, ...] = ()


EVENT_TYPES: dict[str, EventType] = {
    "project.created": EventType("a project was created", ("name",)),
    "session.created": EventType("a session was opened in a project", ("title",)),
    "agent.status": EventType(
        "an agent changed status at a turn boundary or on start/stop",
        ("status", "detail"),  # status: working | idle | blocked | offline
    ),
    "agent.turn": EventType(
        "a conversational agent finished a model turn",
        ("turn", "text", "tool_calls", "stop_reason"),  # tool_calls: list of tool names
    ),
    "action.decided": EventType(
        "decide() ruled on an agent action", ("action", "outcome", "stage", "rule")
    ),
    "handoff.offered": EventType(
        "an agent offered a handoff", ("handoff_id", "from_agent", "to_agent")
    ),
    "handoff.accepted": EventType(
        "a handoff was accepted (to infra: autonomy seeded)",
        ("handoff_id", "from_agent", "to_agent", "autonomy_seeded"),
    ),
    "architecture.readiness_confirmed": EventType(
        "the Arquiteto confirmed the architecture is ready", ("summary",)
    ),
    "execution.activated": EventType(
        "execution started: one dev-<module> per module", ("modules",)
    ),
    "infra.pr_opened": EventType(
        "the Infra agent's PR was opened (gate starts at awaiting_qa)",
        ("pr_action_id", "branch", "paths", "pr_url", "gate_status"),
    ),
    "infra.pr_failed": EventType("opening the infra PR failed", ("pr_action_id", "error")),
    "infra.pr_corrected": EventType(
        "a correction was committed on the same infra branch/PR",
        ("pr_action_id", "paths", "correction"),
    ),
    "infra.gate_changed": EventType(
        "an infra PR moved in the gate state machine",
        ("pr_action_id", "from_status", "gate_status", "reason"),
    ),
    "infra.artifact_blocked": EventType(
        "an infra PR is blocked (correction limit reached)", ("pr_action_id", "reason")
    ),
    "infra.pr_merged": EventType("an operator merged the infra PR", ("pr_action_id", "operator")),
    "artifact.qa_verdict": EventType(
        "QA gate verdict; pr_action_id present = infra PR, else dev PR (task_id)",
        ("verdict", "pr_action_id", "task_id", "findings", "gate_status"),
    ),
    "artifact.secops_verdict": EventType(
        "SecOps gate verdict; pr_action_id present = infra PR, else dev PR (task_id)",
        ("verdict", "pr_action_id", "task_id", "findings", "gate_status"),
    ),
    "pr.gate_changed": EventType(
        "a dev PR moved in the gate state machine",
        ("task_id", "from_status", "gate_status", "reason"),
    ),
    "dev.task_started": EventType("a dev agent started a task", ("task_id", "title", "module")),
    "dev.task_done": EventType("a dev agent finished a task", ("task_id", "title", "module")),
    "backlog.task_blocked": EventType("a backlog task is blocked", ("task_id", "reason")),
    "approval.requested": EventType(
        "decide() said ask: a pending approval was created",
        ("approval_id", "action", "stage", "rule"),
    ),
    "approval.decided": EventType(
        "an operator approved or rejected a pending approval",
        ("approval_id", "outcome", "operator", "reason"),  # outcome: approved | rejected
    ),
    TENTATIVA: EventType(
        "one guarded tool attempt (Lab 87 fields)",
        (
            "evento",
            "timestamp",
            "conversaId",
            "pedidoId",
            "ferramenta",
            "tentativaNumero",
            "resultado",
            "chaveIdempotencia",
        ),
    ),
    "interrupcao.aberta": EventType(
        "a human takeover was opened (teto de voltas or idempotency conflict)",
        ("interrupcao_id", "conversaId", "ferramenta", "pedidoId", "clienteId", "motivo"),
    ),
    "interrupcao.assumida": EventType(
        "an operator claimed an interruption", ("interrupcao_id", "operator")
    ),
    "interrupcao.resolvida": EventType(
        "an operator resolved an interruption",
        ("interrupcao_id", "operator", "action", "reply"),  # action: execute | deny
    ),
    "conversa.mensagem": EventType(
        "a message in a customer conversation",
        ("conversaId", "autor", "texto"),  # autor: cliente | agente | operador
    ),
}


@dataclass(frozen=True)
class EventView:
    """A normalised, read-only view of an event from the log or an API dict."""

    id: int
    type: str
    ts: str
    project_id: str | None = None
    session_id: str | None = None
    agent: str | None = None
    payload: dict[str, Any] = field(default_factory=dict)


def as_event(obj: Any) -> EventView:
    """View ``obj`` (a mapping or an object with event attributes) as an :class:`EventView`.

    Missing or odd fields get harmless defaults; a payload that is not a mapping is kept
    under ``{"value": ...}`` so nothing downstream has to type-check it again.
    """
    if isinstance(obj, EventView):
        return obj
    get: Callable[[str], Any]
    if isinstance(obj, Mapping):
        get = obj.get
    else:

        def get(name: str) -> Any:
            return getattr(obj, name, None)

    payload = get("payload")
    if payload is None:
        payload = {}
    elif isinstance(payload, Mapping):
        payload = dict(payload)
    else:
        payload = {"value": payload}
    try:
        event_id = int(get("id") or 0)
    except (TypeError, ValueError):
        event_id = 0
    return EventView(
        id=event_id,
        type=str(get("type") or "unknown"),
        ts=str(get("ts") or ""),
        project_id=_opt_str(get("project_id")),
        session_id=_opt_str(get("session_id")),
        agent=_opt_str(get("agent")),
        payload=payload,
    )


def _opt_str(value: Any) -> str | None:
    return None if value is None else str(value)


@dataclass(frozen=True)
class ActivityLine:
    """One line of the activity feed; ``kind`` is the event type."""

    id: int
    ts: str
    kind: str
    text: str

    def to_dict(self) -> dict[str, Any]:
        """The HTTP API's shape ``{id, ts, kind, text}``."""
        return {"id": self.id, "ts": self.ts, "kind": self.kind, "text": self.text}


def render(event: Any) -> ActivityLine:
    """Render ``event`` as one English line for operators. Never raises."""
    view = as_event(event)
    renderer = _RENDERERS.get(view.type)
    text: str | None = None
    if renderer is not None:
        try:
            text = renderer(_Payload(view))
        except Exception:
            text = None
    return ActivityLine(view.id, view.ts, view.type, text or _generic(view))


# -- texts ----------------------------------------------------------------------------------

_MAX = 120


def _clip(value: Any, limit: int = _MAX) -> str:
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class _Payload:
    """Forgiving access to an event's payload: every getter returns a printable string."""

    def __init__(self, view: EventView) -> None:
        self.view = view
        self.data = view.payload

    def s(self, key: str, default: str = "?") -> str:
        value = self.data.get(key)
        return default if value is None or value == "" else _clip(value)

    def has(self, key: str) -> bool:
        return self.data.get(key) not in (None, "")

    def agent(self) -> str:
        return self.view.agent or self.s("agent", "an agent")

    def names(self, key: str) -> str:
        value = self.data.get(key)
        if isinstance(value, list | tuple):
            items = [str(v.get("name", v)) if isinstance(v, Mapping) else str(v) for v in value]
            return _clip(", ".join(items)) if items else "none"
        return self.s(key, "none")

    def count(self, key: str) -> int | None:
        value = self.data.get(key)
        if isinstance(value, list | tuple):
            return len(value)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        return None

    def suffix(self, key: str, sep: str = ": ") -> str:
        return f"{sep}{self.s(key)}" if self.has(key) else ""


def _generic(view: EventView) -> str:
    who = f" by {view.agent}" if view.agent else ""
    keys = [k for k in view.payload if not k.startswith("_")][:4]
    details = ", ".join(f"{k}={_clip(view.payload[k], 40)}" for k in keys)
    return f"{view.type}{who}" + (f" ({details})" if details else "")


def _subject(p: _Payload) -> str:
    """Infra vs dev PR, told apart by pr_action_id (ADR 0014 §6)."""
    if p.has("pr_action_id"):
        return f"infra PR {p.s('pr_action_id')}"
    ref = p.s("task_id", "") or p.s("pr_id", "")
    return f"dev PR {ref}".rstrip()


def _verdict(gate: str) -> Callable[[_Payload], str]:
    def text(p: _Payload) -> str:
        found = p.count("findings")
        extra = "" if found is None else f" ({found} finding{'s' if found != 1 else ''})"
        state = f", now {p.s('gate_status')}" if p.has("gate_status") else ""
        return f"{gate} verdict on {_subject(p)}: {p.s('verdict')}{extra}{state}"

    return text


def _gate(subject: Callable[[_Payload], str]) -> Callable[[_Payload], str]:
    def text(p: _Payload) -> str:
        to = p.s("gate_status", p.s("status"))
        move = f"{p.s('from_status')} → {to}" if p.has("from_status") else to
        return f"{subject(p)} gate: {move}{p.suffix('reason', ' — ')}"

    return text


def _attempt(p: _Payload) -> str:
    if p.has("pedidoId"):
        entity = f" on pedido {p.s('pedidoId')}"
    elif p.has("clienteId"):
        entity = f" on cliente {p.s('clienteId')}"
    else:
        entity = ""
    line = (
        f"{p.s('ferramenta')} attempt {p.s('tentativaNumero')}{entity} "
        f"in {p.s('conversaId')}: {p.s('resultado')}"
    )
    if p.data.get("resultado") == "bloqueado_por_teto":
        line += " (teto de voltas reached, handed to a human)"
    return line


def _interruption_opened(p: _Payload) -> str:
    entity = f", pedido {p.s('pedidoId')}" if p.has("pedidoId") else ""
    if not entity and p.has("clienteId"):
        entity = f", cliente {p.s('clienteId')}"
    why = p.s("motivo", "teto de voltas reached")
    return (
        f"interruption {p.s('interrupcao_id')} opened in {p.s('conversaId')} "
        f"({p.s('ferramenta')}{entity}): {why}"
    )


def _handoff_accepted(p: _Payload) -> str:
    line = (
        f"handoff {p.s('handoff_id')} accepted: {p.s('to_agent')} takes over "
        f"from {p.s('from_agent')}"
    )
    seeded = p.data.get("autonomy_seeded")
    if isinstance(seeded, Mapping) and seeded:
        line += " (autonomy " + ", ".join(f"{k}={v}" for k, v in seeded.items()) + ")"
    return line


def _turn(p: _Payload) -> str:
    head = f"{p.agent()} turn {p.s('turn')}" if p.has("turn") else f"{p.agent()} turn"
    if p.count("tool_calls"):
        return f"{head}: called {p.names('tool_calls')}"
    return f"{head}: {p.s('text', '(no text)')}"


def _infra_opened(p: _Payload) -> str:
    files = p.count("paths")
    listed = f"{files} file{'s' if files != 1 else ''} ({p.names('paths')})" if files else "files"
    branch = f" on {p.s('branch')}" if p.has("branch") else ""
    return f"infra PR {p.s('pr_action_id')} opened{branch}: {listed}, awaiting_qa"


_RENDERERS: dict[str, Callable[[_Payload], str]] = {
    "project.created": lambda p: f"project {p.s('name', p.view.project_id or '?')} created",
    "session.created": lambda p: f"session {p.view.session_id or '?'} opened{p.suffix('title')}",
    "agent.status": lambda p: f"{p.agent()} is {p.s('status')}{p.suffix('detail')}",
    "agent.turn": _turn,
    "action.decided": lambda p: (
        f"{p.agent()} {p.s('action')}: {p.s('outcome')} at {p.s('stage')} ({p.s('rule')})"
    ),
    "handoff.offered": lambda p: (
        f"{p.s('from_agent', p.agent())} offered a handoff to {p.s('to_agent')} "
        f"(handoff {p.s('handoff_id')})"
    ),
    "handoff.accepted": _handoff_accepted,
    "architecture.readiness_confirmed": lambda p: (
        f"{p.view.agent or 'arquiteto'} confirmed the architecture is ready{p.suffix('summary')}"
    ),
    "execution.activated": lambda p: (
        f"execution activated for {p.count('modules') or 0} modules: {p.names('modules')}"
    ),
    "infra.pr_opened": _infra_opened,
    "infra.pr_failed": lambda p: (
        f"infra PR{p.suffix('pr_action_id', ' ')} could not be opened: {p.s('error')}"
    ),
    "infra.pr_corrected": lambda p: (
        f"infra PR {p.s('pr_action_id')} corrected on the same branch"
        + (f" (correction {p.s('correction')})" if p.has("correction") else "")
        + f": {p.names('paths')}"
    ),
    "infra.gate_changed": _gate(lambda p: f"infra PR {p.s('pr_action_id')}"),
    "infra.artifact_blocked": lambda p: (
        f"infra PR {p.s('pr_action_id')} blocked: {p.s('reason', 'correction limit reached')}"
    ),
    "infra.pr_merged": lambda p: (
        f"infra PR {p.s('pr_action_id')} merged{p.suffix('operator', ' by ')}"
    ),
    "artifact.qa_verdict": _verdict("QA"),
    "artifact.secops_verdict": _verdict("SecOps"),
    "pr.gate_changed": _gate(_subject),
    "dev.task_started": lambda p: f"{p.agent()} started task {p.s('task_id')}{p.suffix('title')}",
    "dev.task_done": lambda p: f"{p.agent()} finished task {p.s('task_id')}{p.suffix('title')}",
    "backlog.task_blocked": lambda p: (
        f"task {p.s('task_id')} blocked: {p.s('reason', 'no reason given')}"
    ),
    "approval.requested": lambda p: (
        f"approval {p.s('approval_id')} requested: {p.agent()} wants {p.s('action')}"
        + p.suffix("rule", " — ")
    ),
    "approval.decided": lambda p: (
        f"approval {p.s('approval_id')} {p.s('outcome')}{p.suffix('operator', ' by ')}"
        f"{p.suffix('reason', ': ')}"
    ),
    TENTATIVA: _attempt,
    "interrupcao.aberta": _interruption_opened,
    "interrupcao.assumida": lambda p: (
        f"interruption {p.s('interrupcao_id')} claimed by {p.s('operator')}"
    ),
    "interrupcao.resolvida": lambda p: (
        f"interruption {p.s('interrupcao_id')} resolved by {p.s('operator')}: {p.s('action')}"
    ),
    "conversa.mensagem": lambda p: f"{p.s('autor')} in {p.s('conversaId')}: {p.s('texto', '')}",
}
