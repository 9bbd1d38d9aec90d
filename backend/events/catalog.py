"""Every event type the backend writes: its name, what it means, and its payload model.

:class:`EventType` is the one list. ``EventLog.append`` refuses a name that is not a member,
so a new event starts here: add the member, its :class:`EventSpec` in :data:`EVENTS`
(description + payload model) and its line in ``backend.agents.activity_texts``; the
coverage tests in ``tests/unit/agents`` fail until all three exist.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from pydantic import BaseModel
from pydantic import ValidationError as PydanticValidationError

import backend.events.payloads as p
import backend.events.payloads_retention as retention
import backend.events.payloads_system as system
from backend.exceptions import ValidationError


class EventType(StrEnum):
    """The name of an event, exactly as stored in the log and sent over the API."""

    PROJECT_CREATED = "project.created"
    SESSION_CREATED = "session.created"
    AGENT_STATUS = "agent.status"
    AGENT_TURN = "agent.turn"
    AGENT_PAUSED = "agent.paused"
    AGENT_RESUMED = "agent.resumed"
    AGENT_BUDGET_EXCEEDED = "agent.budget_exceeded"
    AGENT_BUDGET_CHANGED = "agent.budget_changed"
    ACTION_DECIDED = "action.decided"
    HANDOFF_OFFERED = "handoff.offered"
    HANDOFF_ACCEPTED = "handoff.accepted"
    HANDOFF_DECLINED = "handoff.declined"
    IDEA_READINESS_CONFIRMED = "idea.readiness_confirmed"
    BACKLOG_STORY_CREATED = "backlog.story_created"
    BACKLOG_TASK_CREATED = "backlog.task_created"
    BACKLOG_TASK_BLOCKED = "backlog.task_blocked"
    ARCHITECTURE_MODULE_MAP_WRITTEN = "architecture.module_map_written"
    ARCHITECTURE_READINESS_CONFIRMED = "architecture.readiness_confirmed"
    EXECUTION_ACTIVATED = "execution.activated"
    INFRA_PR_OPENED = "infra.pr_opened"
    INFRA_PR_FAILED = "infra.pr_failed"
    INFRA_PR_CORRECTED = "infra.pr_corrected"
    INFRA_GATE_CHANGED = "infra.gate_changed"
    INFRA_ARTIFACT_BLOCKED = "infra.artifact_blocked"
    INFRA_PR_MERGED = "infra.pr_merged"
    ARTIFACT_QA_VERDICT = "artifact.qa_verdict"
    ARTIFACT_SECOPS_VERDICT = "artifact.secops_verdict"
    PR_GATE_CHANGED = "pr.gate_changed"
    PR_GATES_RERUN = "pr.gates_rerun"
    PR_CORRECTION_UNCHANGED = "pr.correction_unchanged"
    GATE_FINDING_WAIVED = "gate.finding_waived"
    ADR_PR_OPENED = "adr.pr_opened"
    ADR_PR_FAILED = "adr.pr_failed"
    ADR_GATE_CHANGED = "adr.gate_changed"
    ADR_PR_MERGED = "adr.pr_merged"
    DEV_TASK_STARTED = "dev.task_started"
    DEV_TASK_DONE = "dev.task_done"
    APPROVAL_REQUESTED = "approval.requested"
    APPROVAL_DECIDED = "approval.decided"
    TENTATIVA_DE_FERRAMENTA_REGISTRADA = p.TENTATIVA_NAME
    INTERRUPCAO_ABERTA = "interrupcao.aberta"
    INTERRUPCAO_ASSUMIDA = "interrupcao.assumida"
    INTERRUPCAO_LIBERADA = "interrupcao.liberada"
    INTERRUPCAO_RESOLVIDA = "interrupcao.resolvida"
    INTERRUPCAO_CONCEDIDA = "interrupcao.concedida"
    INTERRUPCAO_VALOR_CORRIGIDO = "interrupcao.valor_corrigido"
    LEDGER_RECONCILIADO = "ledger.reconciliado"
    CONVERSA_MENSAGEM = "conversa.mensagem"
    CONVERSA_SEM_RESPOSTA = "conversa.sem_resposta"
    CONVERSA_RESPONDIDA = "conversa.respondida"
    TOOLS_PROVISIONING = "tools.provisioning"
    TOOLS_READY = "tools.ready"
    TOOLS_FAILED = "tools.failed"
    BACKEND_TASK_FAILED = "backend.task_failed"
    JOB_DEAD = "job.dead"
    JOB_RERUN = "job.rerun"
    JOB_DROPPED = "job.dropped"
    BENCH_TICK = "bench.tick"
    EVENTS_ARCHIVED = "events.archived"
    EVENTS_RESTORED = "events.restored"
    OPERATOR_ACTION = "operator.action"


TENTATIVA = EventType.TENTATIVA_DE_FERRAMENTA_REGISTRADA
"""The seed's name for one guarded tool attempt (Lab 87), kept verbatim."""


@dataclass(frozen=True)
class EventSpec:
    """What an event means and the model its payload must fit."""

    description: str
    payload: type[BaseModel]


E = EventType
EVENTS: dict[EventType, EventSpec] = {
    E.PROJECT_CREATED: EventSpec("a project was created", p.ProjectCreated),
    E.SESSION_CREATED: EventSpec("a session was opened in a project", p.SessionCreated),
    E.AGENT_STATUS: EventSpec(
        "an agent changed status at a turn boundary or on start/stop", p.AgentStatusChanged
    ),
    E.AGENT_TURN: EventSpec("a conversational agent finished a model turn", p.AgentTurn),
    E.AGENT_PAUSED: EventSpec(
        "an operator paused an agent (every project): it runs no new turn", p.AgentPaused
    ),
    E.AGENT_RESUMED: EventSpec("an operator resumed a paused agent", p.AgentResumed),
    E.AGENT_BUDGET_EXCEEDED: EventSpec(
        "an agent's token budget for the day is spent: its turns are refused", p.BudgetExceeded
    ),
    E.AGENT_BUDGET_CHANGED: EventSpec(
        "an operator set an agent's daily token budget", p.BudgetChanged
    ),
    E.ACTION_DECIDED: EventSpec("decide() ruled on an agent action", p.ActionDecided),
    E.HANDOFF_OFFERED: EventSpec("an agent offered a handoff", p.HandoffOffered),
    E.HANDOFF_ACCEPTED: EventSpec(
        "a handoff was accepted (to infra: autonomy seeded)", p.HandoffAccepted
    ),
    E.HANDOFF_DECLINED: EventSpec("an operator declined a handoff offer", p.HandoffDeclined),
    E.IDEA_READINESS_CONFIRMED: EventSpec("the Criativo confirmed the idea is ready", p.Summary),
    E.BACKLOG_STORY_CREATED: EventSpec("the PO wrote a user story", p.StoryCreated),
    E.BACKLOG_TASK_CREATED: EventSpec("the PO created a task for a module", p.TaskCreated),
    E.BACKLOG_TASK_BLOCKED: EventSpec("a backlog task is blocked", p.TaskBlocked),
    E.ARCHITECTURE_MODULE_MAP_WRITTEN: EventSpec(
        "the Arquiteto wrote the project's module map", p.Modules
    ),
    E.ARCHITECTURE_READINESS_CONFIRMED: EventSpec(
        "the Arquiteto confirmed the architecture is ready", p.Summary
    ),
    E.EXECUTION_ACTIVATED: EventSpec("execution started: one dev-<module> per module", p.Modules),
    E.INFRA_PR_OPENED: EventSpec(
        "the Infra agent's PR was opened (gate starts at awaiting_qa)", p.InfraPrOpened
    ),
    E.INFRA_PR_FAILED: EventSpec(
        "opening the infra PR (or running its gates) failed", p.InfraPrFailed
    ),
    E.INFRA_PR_CORRECTED: EventSpec(
        "a correction was committed on the same infra branch/PR", p.InfraPrCorrected
    ),
    E.INFRA_GATE_CHANGED: EventSpec(
        "an infra PR moved in the gate state machine", p.InfraGateChanged
    ),
    E.INFRA_ARTIFACT_BLOCKED: EventSpec(
        "an infra PR is blocked (correction limit reached)", p.InfraArtifactBlocked
    ),
    E.INFRA_PR_MERGED: EventSpec("an operator merged the infra PR", p.InfraPrMerged),
    E.ARTIFACT_QA_VERDICT: EventSpec(
        "QA gate verdict; pr_action_id present = infra PR, else dev PR (task_id)", p.GateVerdict
    ),
    E.ARTIFACT_SECOPS_VERDICT: EventSpec(
        "SecOps gate verdict; pr_action_id present = infra PR, else dev PR (task_id)",
        p.GateVerdict,
    ),
    E.PR_GATE_CHANGED: EventSpec("a dev PR moved in the gate state machine", p.PrGateChanged),
    E.PR_GATES_RERUN: EventSpec(
        "an operator re-queued the gate job of a PR waiting in a gate", p.PrGatesRerun
    ),
    E.GATE_FINDING_WAIVED: EventSpec(
        "an operator waived one gate finding on one PR, with a reason (re-evaluated)",
        p.GateFindingWaived,
    ),
    E.PR_CORRECTION_UNCHANGED: EventSpec(
        "a correction had no diff: not committed, not counted (the PR stays changes_requested)",
        p.PrCorrectionUnchanged,
    ),
    E.ADR_PR_OPENED: EventSpec(
        "the Arquiteto's ADR PR was opened (gate starts at awaiting_qa)", p.AdrPrOpened
    ),
    E.ADR_PR_FAILED: EventSpec("opening an ADR PR (or running its gates) failed", p.AdrPrFailed),
    E.ADR_GATE_CHANGED: EventSpec("an ADR PR moved in the gate state machine", p.AdrGateChanged),
    E.ADR_PR_MERGED: EventSpec("an operator merged an ADR PR", p.AdrPrMerged),
    E.DEV_TASK_STARTED: EventSpec("a dev agent started a task", p.DevTask),
    E.DEV_TASK_DONE: EventSpec("a dev agent finished a task", p.DevTask),
    E.APPROVAL_REQUESTED: EventSpec(
        "decide() said ask: a pending approval was created", p.ApprovalRequested
    ),
    E.APPROVAL_DECIDED: EventSpec(
        "an operator decided a pending approval: approved (its action ran), rejected, or "
        "failed (approved, but the action could not run)",
        p.ApprovalDecided,
    ),
    E.TENTATIVA_DE_FERRAMENTA_REGISTRADA: EventSpec(
        "one guarded tool attempt (Lab 87 fields)", p.Tentativa
    ),
    E.INTERRUPCAO_ABERTA: EventSpec(
        "a human takeover was opened (teto de voltas, value conflict or uncertain outcome)",
        p.InterrupcaoAberta,
    ),
    E.INTERRUPCAO_ASSUMIDA: EventSpec("an operator claimed an interruption", p.InterrupcaoAssumida),
    E.INTERRUPCAO_LIBERADA: EventSpec(
        "the holder released a claimed interruption back to the queue", p.InterrupcaoLiberada
    ),
    E.INTERRUPCAO_RESOLVIDA: EventSpec(
        "an operator resolved an interruption", p.InterrupcaoResolvida
    ),
    E.INTERRUPCAO_CONCEDIDA: EventSpec(
        "an operator gave the agent more attempts on a settled combination",
        p.InterrupcaoConcedida,
    ),
    E.INTERRUPCAO_VALOR_CORRIGIDO: EventSpec(
        "an operator executed a takeover with a corrected amount (an override, with a reason)",
        p.InterrupcaoValorCorrigido,
    ),
    E.LEDGER_RECONCILIADO: EventSpec(
        "an uncertain ledger claim was settled (asked the gateway by key, or by hand)",
        p.LedgerReconciliado,
    ),
    E.CONVERSA_MENSAGEM: EventSpec("a message in a customer conversation", p.ConversaMensagem),
    E.CONVERSA_SEM_RESPOSTA: EventSpec(
        "a customer message no agent will answer (the inbox's unanswered)", p.ConversaSemResposta
    ),
    E.CONVERSA_RESPONDIDA: EventSpec(
        "an unanswered customer got a reply (leaves the inbox)", p.ConversaRespondida
    ),
    E.TOOLS_PROVISIONING: EventSpec(
        "the backend is installing a missing scanner", system.ToolProvisioning
    ),
    E.TOOLS_READY: EventSpec("a scanner the backend installed is ready", system.ToolReady),
    E.TOOLS_FAILED: EventSpec("installing a scanner failed", system.ToolFailed),
    E.BACKEND_TASK_FAILED: EventSpec("a background task of the backend failed", system.TaskFailed),
    E.JOB_DEAD: EventSpec(
        "a durable job ran out of attempts (job_dead in the inbox)", system.JobFate
    ),
    E.JOB_RERUN: EventSpec(
        "an operator queued a dead job again with fresh attempts", system.JobFate
    ),
    E.JOB_DROPPED: EventSpec("an operator gave up on a dead job", system.JobFate),
    E.BENCH_TICK: EventSpec(
        "a synthetic event `python -m bench.stream` appends to time the live stream",
        system.BenchTick,
    ),
    E.EVENTS_ARCHIVED: EventSpec(
        "`cadencia events archive` moved old events out of the log into a file",
        retention.EventsArchived,
    ),
    E.EVENTS_RESTORED: EventSpec(
        "`cadencia events restore` put archived events back with their ids",
        retention.EventsRestored,
    ),
    E.OPERATOR_ACTION: EventSpec(
        "an operator's request to act (the audit trail): who, what, target, reason, outcome "
        "(done, refused or failed)",
        system.OperatorAction,
    ),
}
del E

OPERATOR_ACTIONS: tuple[EventType, ...] = (EventType.OPERATOR_ACTION,)
"""The event types ``GET /api/audit`` lists: every operator action. ``operator.action`` is
written for every acting request (refused ones too) by the API's audit middleware. The
audit queries (``audit_page*``/``audit_tail*``) name this type literally, so that the
partial indexes on it apply: a type added here must be added there too (a test checks)."""

PAYLOADS: dict[EventType, type[BaseModel]] = {t: s.payload for t, s in EVENTS.items()}
"""The payload model of each event type (a view of :data:`EVENTS`)."""

DESCRIPTIONS: dict[EventType, str] = {t: s.description for t, s in EVENTS.items()}
"""What each event type means (a view of :data:`EVENTS`)."""


def event_type(value: str) -> EventType:
    """``value`` as an :class:`EventType`.

    Raises:
        ValidationError: ``value`` names no event type.
    """
    try:
        return EventType(value)
    except ValueError:
        raise ValidationError(
            f"unknown event type {value!r}: add it to backend.events.EventType first",
            type=value,
        ) from None


def check_payload(type: EventType, payload: dict[str, Any]) -> None:
    """Validate ``payload`` against the model of ``type``.

    Raises:
        ValidationError: the payload lacks a key, has an unknown one, or a value of the
            wrong type; the message names the event type and each failing field.
    """
    try:
        EVENTS[type].payload.model_validate(payload)
    except PydanticValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or '-'}: {e['msg']}" for e in exc.errors()
        )
        raise ValidationError(
            f"payload of {type.value} does not fit {EVENTS[type].payload.__name__}: {problems}",
            type=type.value,
        ) from exc


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
"""The events that move a PR through its gates: the roster keeps one gate row per PR from
them (``backend.agents.roster_facts``), and an archive keeps each PR's newest one."""
