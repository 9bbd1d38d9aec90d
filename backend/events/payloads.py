"""One pydantic model per event type: the payload keys each emitter writes, and their types.

The models describe what the emitters send today; ``extra="forbid"`` makes a new key a
deliberate change here rather than a silent drift. The stored payload is the emitter's
dict as given (not a re-dump of the model), so optional keys that an emitter omits stay
omitted in the log. The closed value sets mirror the domain's own ``Literal`` types without
importing them (:class:`Payload` says why).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, JsonValue

from backend.gates.findings import ScanStatus
from backend.gates.state import GateStatus

TENTATIVA_NAME = "TENTATIVA_DE_FERRAMENTA_REGISTRADA"

AgentStatus = Literal["working", "idle", "blocked", "paused", "offline", "error"]  # roster.Status
Outcome = Literal["allow", "ask", "deny"]  # backend.agents.policy.Outcome
Stage = Literal["iam", "agent_autonomy", "permissions", "default"]  # policy.Stage
Resultado = Literal[  # the one definition; backend.guard re-exports it
    "executado",
    "bloqueado_por_idempotencia",
    "bloqueado_por_teto",
    "argumentos_invalidos",
    "falhou",
    "resultado_incerto",
]
Motivo = Literal["teto_de_voltas", "conflito_de_valor", "resultado_incerto"]  # guard Motivo
Autor = Literal["cliente", "agente", "operador"]  # backend.guard.conversations.Role


class Payload(BaseModel):
    """Base of every payload model: unknown keys are an error, values are not coerced
    beyond pydantic's lax defaults.

    The closed value sets in this module (``Resultado``, ``Outcome``...) mirror the domain's
    own ``Literal`` types; ``tests/unit/agents/test_event_catalog.py`` fails when they drift.
    They are spelled out here because the event log sits below the domain packages (which
    import it) and must not import them back.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)


# -- projects, sessions, agents -------------------------------------------------------------


class ProjectCreated(Payload):
    name: str


class SessionCreated(Payload):
    title: str


class AgentStatusChanged(Payload):
    status: AgentStatus
    detail: str = ""


class AgentTurn(Payload):
    turn: int
    text: str | None
    tool_calls: list[str]  # tool names, in call order
    stop_reason: Literal["end_turn", "max_steps"]
    messages: list[dict[str, Any]]  # the turn's new messages, replayed as the agent's history
    model_calls: int
    decisions_seen: list[str] | None = None  # approval ids this turn told the agent about
    model: str | None = None  # the provider spec that ran the turn (older turns: absent)
    # {"input_tokens", "output_tokens"} summed over the turn's model calls; None: not reported
    usage: dict[str, int] | None = None


class BudgetExceeded(Payload):
    day: str  # YYYY-MM-DD, UTC
    tokens_per_day: int
    used_today: int


class BudgetChanged(Payload):
    operator: str
    tokens_per_day: int
    previous: int | None  # the budget before (None: there was none)
    used_today: int
    reason: str | None = None


class AgentPaused(Payload):
    operator: str
    reason: str | None = None


class AgentResumed(Payload):
    operator: str
    paused_by: str | None = None  # whose pause ended


class ActionDecided(Payload):
    """``{"action": ..., **Decision.to_dict()}``: the decision's keys are closed."""

    action: str
    outcome: Outcome
    stage: Stage
    rule: str


class HandoffOffered(Payload):
    handoff_id: str
    from_agent: str
    to_agent: str
    note: str | None = None


class HandoffAccepted(Payload):
    handoff_id: str
    from_agent: str
    to_agent: str
    operator: str
    autonomy_seeded: dict[str, str]  # {action: autonomy value} for the receiving agent


class HandoffDeclined(Payload):
    handoff_id: str
    from_agent: str
    to_agent: str
    operator: str
    reason: str | None = None


class Summary(Payload):
    summary: str


class Modules(Payload):
    modules: list[str]  # module names


class StoryCreated(Payload):
    title: str | None
    description: str | None


class TaskCreated(Payload):
    module: str | None
    title: str | None
    task_id: str | None = None
    """The dev task it created; ``None`` on older events, written before tasks were recorded."""


class TaskBlocked(Payload):
    task_id: str
    reason: str | None


class DevTask(Payload):
    task_id: str
    title: str
    module: str


# -- PRs and gates ---------------------------------------------------------------------------


class InfraPrOpened(Payload):
    pr_action_id: str
    branch: str
    paths: list[str]
    pr_url: str
    gate_status: GateStatus


class InfraPrFailed(Payload):
    pr_action_id: str
    error: str


class InfraPrCorrected(Payload):
    pr_action_id: str
    paths: list[str]  # the files this correction changed
    correction: int


class InfraGateChanged(Payload):
    pr_action_id: str
    from_status: GateStatus | None
    gate_status: GateStatus
    reason: str


class InfraArtifactBlocked(Payload):
    pr_action_id: str
    reason: str | None


class InfraPrMerged(Payload):
    pr_action_id: str
    operator: str


class AdrPrOpened(Payload):
    pr_action_id: str
    adr: str  # NNNN-<slug>
    branch: str
    paths: list[str]
    pr_url: str | None
    gate_status: GateStatus


class AdrPrFailed(Payload):
    pr_action_id: str
    error: str


class AdrGateChanged(Payload):
    pr_action_id: str
    adr: str
    from_status: GateStatus | None
    gate_status: GateStatus
    reason: str


class AdrPrMerged(Payload):
    pr_action_id: str
    adr: str
    operator: str


class GateVerdict(Payload):
    """One gate's verdict; ``pr_action_id`` set = infra PR (or ``kind`` adr), else a dev PR."""

    verdict: ScanStatus  # pass | fail | skipped (a missing scanner is never a pass)
    pr_action_id: str | None = None
    task_id: str | None = None
    kind: Literal["adr"] | None = None  # absent on infra and dev PRs (older readers)
    findings: list[dict[str, Any]]  # Finding dicts plus the gate that found them
    gate_status: GateStatus


class PrGateChanged(Payload):
    task_id: str
    from_status: GateStatus | None
    gate_status: GateStatus
    reason: str


class PrGatesRerun(Payload):
    pr_action_id: str
    kind: Literal["infra", "dev", "adr"]
    gate_status: GateStatus
    operator: str
    reason: str | None = None
    job_status: Literal["queued", "running", "done", "failed", "dead", "cancelled"] | None
    job_error: str | None = None  # why the job was stuck, if it was


class GateFindingWaived(Payload):
    pr_id: str
    kind: Literal["infra", "dev", "adr"]
    finding: str  # the finding's id (fingerprint)
    gate: str  # qa | secops
    tool: str
    rule: str
    file: str
    line: int | None
    operator: str
    reason: str
    reevaluated: bool  # no blocking finding was left: the gates run again
    gate_status: GateStatus  # after the waiver


class PrCorrectionUnchanged(Payload):
    pr_action_id: str
    kind: Literal["infra", "dev", "adr"]  # backend.prs.records.PrKind
    task_id: str | None
    detail: str


class ApprovalRequested(Payload):
    approval_id: str
    action: str
    stage: Stage
    rule: str


class ApprovalDecided(Payload):
    approval_id: str
    outcome: Literal["approved", "rejected", "failed"]  # failed: approved, did not run
    operator: str
    reason: str | None = None
    action: str | None = None  # the decide() action that was asked about
    executed: bool | None = None  # whether the approved action really ran
    pr_id: str | None = None  # the PR that executing it opened
    error: str | None = None  # why it could not run (outcome failed)


# -- customer service (Lab 87) ---------------------------------------------------------------


class Tentativa(Payload):
    """The seed's attempt record, plus the keys our guard adds when they apply."""

    evento: Literal["TENTATIVA_DE_FERRAMENTA_REGISTRADA"]
    timestamp: str
    conversaId: str
    # What the caller sent: with argumentos_invalidos it may be any JSON value.
    pedidoId: JsonValue = None
    ferramenta: str
    tentativaNumero: int  # 0 when the arguments were invalid (not counted)
    resultado: Resultado
    chaveIdempotencia: str | None
    clienteId: str | None = None  # atualizar-cadastro only
    detalhe: str | None = None
    operador: str | None = None  # set when an operator acted on a takeover
    interrupcaoId: int | None = None


class InterrupcaoAberta(Payload):
    interrupcao_id: int
    conversaId: str
    ferramenta: str
    pedidoId: str | None = None  # one of pedidoId / clienteId, by the tool's entity
    clienteId: str | None = None
    motivo: Motivo
    attempts: int


class InterrupcaoAssumida(Payload):
    interrupcao_id: int
    operator: str


class InterrupcaoLiberada(Payload):
    interrupcao_id: int
    operator: str
    reason: str | None = None  # e.g. going off shift


class InterrupcaoResolvida(Payload):
    interrupcao_id: int
    operator: str
    action: str  # execute | deny | hand_back
    reply: str
    outcome: Resultado | None = None  # the ledger's real resultado of an execute


class InterrupcaoConcedida(Payload):
    interrupcao_id: int
    operator: str
    attempts: int
    reason: str
    conversaId: str


class InterrupcaoValorCorrigido(Payload):
    interrupcao_id: int
    operator: str
    conversaId: str
    valor_anterior: str | None
    valor: str
    reason: str


class LedgerReconciliado(Payload):
    chaveIdempotencia: str
    conversaId: str
    status: Literal["executado", "falhou", "resultado_incerto", "tentando"]
    by: str  # "reconcile" (the backend asked the gateway) or the operator who settled it
    how: Literal["gateway", "by_hand"]
    reason: str | None = None


class ConversaSemResposta(Payload):
    conversaId: str
    reason: str


class ConversaRespondida(Payload):
    conversaId: str


class ConversaMensagem(Payload):
    conversaId: str
    autor: Autor
    texto: str
