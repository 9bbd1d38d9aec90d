"""The per-type texts of the activity feed (see :func:`backend.agents.activity.render`).

Each renderer reads its payload through :class:`Payload`, whose getters never raise and
always return something printable, so an event with missing or odd keys still gets its
line; ``render`` falls back to the generic line only when a renderer raises anyway.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from backend.events import EventType


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


_MAX = 120


def clip(value: Any, limit: int = _MAX) -> str:
    """``value`` on one line, cut to ``limit`` characters with an ellipsis."""
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class Payload:
    """Forgiving access to an event's payload: every getter returns a printable string."""

    def __init__(self, view: EventView) -> None:
        self.view = view
        self.data = view.payload

    def s(self, key: str, default: str = "?") -> str:
        value = self.data.get(key)
        return default if value is None or value == "" else clip(value)

    def has(self, key: str) -> bool:
        return self.data.get(key) not in (None, "")

    def agent(self) -> str:
        return self.view.agent or self.s("agent", "an agent")

    def names(self, key: str) -> str:
        value = self.data.get(key)
        if isinstance(value, list | tuple):
            items = [str(v.get("name", v)) if isinstance(v, Mapping) else str(v) for v in value]
            return clip(", ".join(items)) if items else "none"
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


def _subject(p: Payload) -> str:
    """Infra vs dev PR, told apart by pr_action_id (ADR 0014 §6); an ADR PR says so."""
    if p.s("kind", "") == "adr":
        return f"ADR PR {p.s('pr_action_id')}"
    if p.has("pr_action_id"):
        return f"infra PR {p.s('pr_action_id')}"
    ref = p.s("task_id", "") or p.s("pr_id", "")
    return f"dev PR {ref}".rstrip()


def _verdict(gate: str) -> Callable[[Payload], str]:
    def text(p: Payload) -> str:
        found = p.count("findings")
        extra = "" if found is None else f" ({found} finding{'s' if found != 1 else ''})"
        state = f", now {p.s('gate_status')}" if p.has("gate_status") else ""
        return f"{gate} verdict on {_subject(p)}: {p.s('verdict')}{extra}{state}"

    return text


def _gate(subject: Callable[[Payload], str]) -> Callable[[Payload], str]:
    def text(p: Payload) -> str:
        to = p.s("gate_status", p.s("status"))
        move = f"{p.s('from_status')} → {to}" if p.has("from_status") else to
        return f"{subject(p)} gate: {move}{p.suffix('reason', ' — ')}"

    return text


def _attempt(p: Payload) -> str:
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


def _interruption_opened(p: Payload) -> str:
    entity = f", pedido {p.s('pedidoId')}" if p.has("pedidoId") else ""
    if not entity and p.has("clienteId"):
        entity = f", cliente {p.s('clienteId')}"
    why = p.s("motivo", "teto de voltas reached")
    return (
        f"interruption {p.s('interrupcao_id')} opened in {p.s('conversaId')} "
        f"({p.s('ferramenta')}{entity}): {why}"
    )


def _handoff_accepted(p: Payload) -> str:
    line = (
        f"handoff {p.s('handoff_id')} accepted: {p.s('to_agent')} takes over "
        f"from {p.s('from_agent')}"
    )
    seeded = p.data.get("autonomy_seeded")
    if isinstance(seeded, Mapping) and seeded:
        line += " (autonomy " + ", ".join(f"{k}={v}" for k, v in seeded.items()) + ")"
    return line


def _status(p: Payload) -> str:
    if p.s("status") == "error":
        return f"{p.agent()} error: {p.s('detail', 'no reason given')}"
    return f"{p.agent()} is {p.s('status')}{p.suffix('detail')}"


def _turn(p: Payload) -> str:
    head = f"{p.agent()} turn {p.s('turn')}" if p.has("turn") else f"{p.agent()} turn"
    if p.count("tool_calls"):
        return f"{head}: called {p.names('tool_calls')}"
    return f"{head}: {p.s('text', '(no text)')}"


def _infra_opened(p: Payload) -> str:
    files = p.count("paths")
    listed = f"{files} file{'s' if files != 1 else ''} ({p.names('paths')})" if files else "files"
    branch = f" on {p.s('branch')}" if p.has("branch") else ""
    return f"infra PR {p.s('pr_action_id')} opened{branch}: {listed}, awaiting_qa"


E = EventType
# Keyed by EventType members; a plain ``str`` lookup finds them (a StrEnum hashes as its value).
RENDERERS: dict[str, Callable[[Payload], str]] = {
    E.PROJECT_CREATED: lambda p: f"project {p.s('name', p.view.project_id or '?')} created",
    E.SESSION_CREATED: lambda p: f"session {p.view.session_id or '?'} opened{p.suffix('title')}",
    E.AGENT_STATUS: _status,
    E.AGENT_TURN: _turn,
    E.AGENT_PAUSED: lambda p: (
        f"{p.agent()} paused by {p.s('operator')}{p.suffix('reason')} (no new turn runs)"
    ),
    E.AGENT_RESUMED: lambda p: f"{p.agent()} resumed by {p.s('operator')}",
    E.AGENT_BUDGET_EXCEEDED: lambda p: (
        f"{p.agent()} stopped: used {p.s('used_today')} of its {p.s('tokens_per_day')} "
        f"tokens for {p.s('day')}"
    ),
    E.AGENT_BUDGET_CHANGED: lambda p: (
        f"{p.s('operator')} set {p.agent()}'s budget to {p.s('tokens_per_day')} tokens/day"
        f" (was {p.s('previous', 'none')}){p.suffix('reason', ': ')}"
    ),
    E.ACTION_DECIDED: lambda p: (
        f"{p.agent()} {p.s('action')}: {p.s('outcome')} at {p.s('stage')} ({p.s('rule')})"
    ),
    E.HANDOFF_OFFERED: lambda p: (
        f"{p.s('from_agent', p.agent())} offered a handoff to {p.s('to_agent')} "
        f"(handoff {p.s('handoff_id')})"
    ),
    E.HANDOFF_ACCEPTED: _handoff_accepted,
    E.HANDOFF_DECLINED: lambda p: (
        f"handoff {p.s('handoff_id')} from {p.s('from_agent')} to {p.s('to_agent')} declined"
        f"{p.suffix('operator', ' by ')}{p.suffix('reason', ': ')}"
    ),
    E.ARCHITECTURE_READINESS_CONFIRMED: lambda p: (
        f"{p.view.agent or 'arquiteto'} confirmed the architecture is ready{p.suffix('summary')}"
    ),
    E.EXECUTION_ACTIVATED: lambda p: (
        f"execution activated for {p.count('modules') or 0} modules: {p.names('modules')}"
    ),
    E.INFRA_PR_OPENED: _infra_opened,
    E.INFRA_PR_FAILED: lambda p: (
        f"infra PR{p.suffix('pr_action_id', ' ')} could not be opened: {p.s('error')}"
    ),
    E.INFRA_PR_CORRECTED: lambda p: (
        f"infra PR {p.s('pr_action_id')} corrected on the same branch"
        + (f" (correction {p.s('correction')})" if p.has("correction") else "")
        + f": {p.names('paths')}"
    ),
    E.INFRA_GATE_CHANGED: _gate(lambda p: f"infra PR {p.s('pr_action_id')}"),
    E.INFRA_ARTIFACT_BLOCKED: lambda p: (
        f"infra PR {p.s('pr_action_id')} blocked: {p.s('reason', 'correction limit reached')}"
    ),
    E.INFRA_PR_MERGED: lambda p: (
        f"infra PR {p.s('pr_action_id')} merged{p.suffix('operator', ' by ')}"
    ),
    E.ARTIFACT_QA_VERDICT: _verdict("QA"),
    E.ARTIFACT_SECOPS_VERDICT: _verdict("SecOps"),
    E.PR_GATE_CHANGED: _gate(_subject),
    E.PR_GATES_RERUN: lambda p: (
        f"{p.s('operator')} re-ran the gates of {p.s('kind')} PR {p.s('pr_action_id')} "
        f"({p.s('gate_status')}){p.suffix('reason', ': ')}"
    ),
    E.GATE_FINDING_WAIVED: lambda p: (
        f"{p.s('operator')} waived {p.s('tool')}:{p.s('rule')} in {p.s('file')} on "
        f"{p.s('kind')} PR {p.s('pr_id')}: {p.s('reason')}"
        + (" (gates re-run)" if p.data.get("reevaluated") is True else "")
    ),
    E.PR_CORRECTION_UNCHANGED: lambda p: (
        f"{p.s('kind', 'infra')} PR {p.s('pr_action_id')}: no change in the correction "
        f"({p.s('detail', 'nothing to commit')}); not committed, still changes_requested"
    ),
    E.ADR_PR_OPENED: lambda p: (
        f"ADR PR {p.s('pr_action_id')} ({p.s('adr')}) opened{p.suffix('branch', ' on ')}, "
        "awaiting_qa"
    ),
    E.ADR_PR_FAILED: lambda p: f"ADR PR {p.s('pr_action_id')} could not be opened: {p.s('error')}",
    E.ADR_GATE_CHANGED: _gate(lambda p: f"ADR PR {p.s('pr_action_id')} ({p.s('adr')})"),
    E.ADR_PR_MERGED: lambda p: (
        f"ADR {p.s('adr')} merged (PR {p.s('pr_action_id')}){p.suffix('operator', ' by ')}"
    ),
    E.DEV_TASK_STARTED: lambda p: f"{p.agent()} started task {p.s('task_id')}{p.suffix('title')}",
    E.DEV_TASK_DONE: lambda p: f"{p.agent()} finished task {p.s('task_id')}{p.suffix('title')}",
    E.BACKLOG_TASK_BLOCKED: lambda p: (
        f"task {p.s('task_id')} blocked: {p.s('reason', 'no reason given')}"
    ),
    E.APPROVAL_REQUESTED: lambda p: (
        f"approval {p.s('approval_id')} requested: {p.agent()} wants {p.s('action')}"
        + p.suffix("rule", " — ")
    ),
    E.APPROVAL_DECIDED: lambda p: (
        f"approval {p.s('approval_id')}{p.suffix('action', ' (')}{')' if p.has('action') else ''} "
        f"{p.s('outcome')}{p.suffix('operator', ' by ')}{p.suffix('reason', ': ')}"
        f"{p.suffix('pr_id', ' → PR ')}{p.suffix('error', ' — could not run: ')}"
    ),
    E.TENTATIVA_DE_FERRAMENTA_REGISTRADA: _attempt,
    E.INTERRUPCAO_ABERTA: _interruption_opened,
    E.INTERRUPCAO_ASSUMIDA: lambda p: (
        f"interruption {p.s('interrupcao_id')} claimed by {p.s('operator')}"
    ),
    E.CONVERSA_SEM_RESPOSTA: lambda p: (
        f"customer in {p.s('conversaId')} waits: no agent will answer ({p.s('reason')})"
    ),
    E.CONVERSA_RESPONDIDA: lambda p: f"the waiting customer in {p.s('conversaId')} got a reply",
    E.INTERRUPCAO_LIBERADA: lambda p: (
        f"interruption {p.s('interrupcao_id')} released by {p.s('operator')}"
        f"{p.suffix('reason', ': ')}"
    ),
    E.INTERRUPCAO_RESOLVIDA: lambda p: (
        f"interruption {p.s('interrupcao_id')} resolved by {p.s('operator')}: {p.s('action')}"
    ),
    E.INTERRUPCAO_CONCEDIDA: lambda p: (
        f"interruption {p.s('interrupcao_id')}: {p.s('operator')} gave the agent "
        f"{p.s('attempts')} more attempt(s){p.suffix('reason', ': ')}"
    ),
    E.INTERRUPCAO_VALOR_CORRIGIDO: lambda p: (
        f"interruption {p.s('interrupcao_id')}: {p.s('operator')} corrected the amount to "
        f"{p.s('valor')}{p.suffix('reason', ': ')}"
    ),
    E.LEDGER_RECONCILIADO: lambda p: (
        f"ledger {p.s('chaveIdempotencia')} settled as {p.s('status')}"
        + (" (asked the gateway)" if p.s("how") == "gateway" else f" by {p.s('by')}")
        + p.suffix("reason", ": ")
    ),
    E.CONVERSA_MENSAGEM: lambda p: f"{p.s('autor')} in {p.s('conversaId')}: {p.s('texto', '')}",
    E.IDEA_READINESS_CONFIRMED: lambda p: (
        f"{p.view.agent or 'criativo'} confirmed the idea is ready{p.suffix('summary')}"
    ),
    E.BACKLOG_STORY_CREATED: lambda p: f"{p.agent()} wrote a story: {p.s('title', '(untitled)')}",
    E.BACKLOG_TASK_CREATED: lambda p: (
        f"{p.agent()} created a task{p.suffix('module', ' for ')}: {p.s('title', '(untitled)')}"
    ),
    E.ARCHITECTURE_MODULE_MAP_WRITTEN: lambda p: (
        f"{p.view.agent or 'arquiteto'} wrote the module map: "
        f"{p.count('modules') or 0} modules ({p.names('modules')})"
    ),
    E.TOOLS_PROVISIONING: lambda p: f"installing {p.s('tool')}{p.suffix('detail', ' — ')}",
    E.TOOLS_READY: lambda p: f"{p.s('tool')} is installed{p.suffix('path', ' at ')}",
    E.TOOLS_FAILED: lambda p: f"could not install {p.s('tool')}: {p.s('error')}",
    E.BACKEND_TASK_FAILED: lambda p: f"background task {p.s('task')} failed: {p.s('error')}",
    E.JOB_DEAD: lambda p: (
        f"{p.s('kind')} job #{p.s('job_id')} stopped after {p.s('attempts')} attempt(s): "
        f"{p.s('error')}"
    ),
    E.JOB_RERUN: lambda p: (
        f"{p.s('operator')} re-ran {p.s('kind')} job #{p.s('job_id')}{p.suffix('reason', ': ')}"
    ),
    E.JOB_DROPPED: lambda p: (
        f"{p.s('operator')} dropped {p.s('kind')} job #{p.s('job_id')}{p.suffix('reason', ': ')}"
    ),
    E.BENCH_TICK: lambda p: f"bench tick {p.s('i')}",
    E.EVENTS_ARCHIVED: lambda p: (
        f"archived {p.s('archived')} events before {p.s('before')} to {p.s('file')} "
        f"({p.s('kept')} kept: live state reads them)"
    ),
    E.EVENTS_RESTORED: lambda p: (
        f"restored {p.s('restored')} events from {p.s('file')} "
        f"({p.s('skipped')} already in the log)"
    ),
    E.OPERATOR_ACTION: lambda p: (
        f"{p.s('operator')}{p.suffix('as_operator', ' as ')} {p.s('action')} "
        f"{' '.join(map(str, (p.view.payload.get('target') or {}).values()))}: "
        f"{p.s('outcome')} ({p.s('status')}){p.suffix('error', ' ')}{p.suffix('reason', ' — ')}"
    ),
}
del E
