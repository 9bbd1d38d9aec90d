"""Typed shapes of the backend's HTTP API (see the API contract), as the console reads them.

Models ignore unknown fields so a newer backend does not break an older console, and
default what the console can live without. ``tests/console/test_contract.py`` checks every
model here against the backend's ``/openapi.json``, so a drift fails a test, not a shift.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

AgentStatus = Literal["working", "idle", "blocked", "paused", "error", "offline"]
Resultado = Literal[
    "executado",
    "bloqueado_por_idempotencia",
    "bloqueado_por_teto",
    "argumentos_invalidos",
    "falhou",
    "resultado_incerto",
]
"""The ledger's outcome of one tool attempt (Lab 87's names, kept exactly)."""
Entidade = Literal["pedidoId", "clienteId"]
GateStatus = Literal[
    "awaiting_qa",
    "awaiting_secops",
    "awaiting_human",
    "changes_requested",
    "blocked",
    "merged",
    "closed",
]
InterruptionStatus = Literal["open", "claimed", "resolved"]
LedgerStatus = Literal["tentando", "executado", "falhou", "resultado_incerto"]
"""What the ledger holds for one idempotency key (its record's status)."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class Health(_Model):
    """``GET /healthz``."""

    status: str
    version: str = ""


class RosterUsage(_Model):
    """An agent's tokens today (and a cost estimate), when the backend counts them."""

    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None


class RosterEntry(_Model):
    """One agent of ``GET /api/roster`` (``usage`` and ``paused_by`` are newer: a backend
    without them reads as no usage known and nobody paused it)."""

    id: str
    role: str = ""
    status: AgentStatus = "idle"
    model: str | None = None
    autonomy: str | dict[str, Any] | None = None
    detail: str = ""
    usage: RosterUsage | None = None
    paused_by: str | None = None

    def tokens_text(self) -> str:
        """Today's tokens in + out, short ("—" when the backend does not say)."""
        if self.usage is None:
            return "—"
        total = self.usage.input_tokens + self.usage.output_tokens
        return f"{total}" if total < 10_000 else f"{total / 1000:.1f}k"

    def autonomy_text(self) -> str:
        """Autonomy as one short line whether the backend sent text or a mapping."""
        if isinstance(self.autonomy, dict):
            return ", ".join(f"{k}={v}" for k, v in self.autonomy.items())
        return self.autonomy or ""


class Event(_Model):
    """One event of the log (``GET /api/events`` and the SSE stream)."""

    id: int
    type: str
    ts: str = ""
    project_id: str | None = None
    session_id: str | None = None
    agent: str | None = None
    payload: dict[str, Any] = Field(default_factory=dict)


class StreamEvent(Event):
    """One event of the SSE stream: the event plus the server-rendered feed line."""

    text: str
    """The line ``/api/activity`` shows for this event; the console renders no other."""


class ActivityLine(_Model):
    """One line of ``GET /api/activity``."""

    id: int
    ts: str = ""
    kind: str = ""
    text: str = ""


class PullRequest(_Model):
    """A PR of any kind (infra, dev, ADR) in the gate pipeline."""

    id: str
    """Ours: what the ``/api/prs/{id}`` routes take."""
    kind: Literal["infra", "dev", "adr"] = "infra"
    project_id: str | None = None
    session_id: str | None = None
    task_id: str | None = None
    """A dev PR's task (its gate events name the task, not the PR)."""
    title: str = ""
    branch: str = ""
    remote_id: str | None = None
    """The git provider's id, once the PR has one."""
    pr_url: str | None = None
    gate_status: str = "awaiting_qa"
    gate_correction_count: int = 0
    findings_count: int = 0
    blocked: bool = False
    blocked_reason: str | None = None
    created_at: str = ""
    updated_at: str = ""


class Interruption(_Model):
    """A human takeover (teto de voltas, value conflict, uncertain result)."""

    id: int
    conversation: str = ""
    entidade: Entidade
    """Which kind of id ``entidade_id`` is: a cadastro takeover names a cliente."""
    entidade_id: str
    ferramenta: str = ""
    motivo: str = ""
    argumentos: dict[str, Any] = Field(default_factory=dict)
    attempt_count: int = 0
    status: InterruptionStatus = "open"
    since: str = ""
    claimed_by: str | None = None
    claimed_at: str | None = None
    """ISO 8601 UTC: when its holder claimed it (None while open, or from an older server)."""
    resolution: str | None = None
    reply: str | None = None
    outcome: Resultado | None = None
    """The ledger's ``resultado`` of the operator's execute, once resolved."""
    grant_left: int = 0
    """Attempts an operator granted the agent on the combination, not used yet."""

    def entity_text(self) -> str:
        """``pedido 4821`` / ``cliente c-17``: the entity the takeover is about."""
        noun = {"pedidoId": "pedido", "clienteId": "cliente"}[self.entidade]
        return f"{noun} {self.entidade_id}"


class UncertainItem(_Model):
    """A ``resultado_incerto`` waiting on a human: did the money move or not?"""

    id: str
    """URL-safe; names the item in ``/api/uncertain/{id}/...``."""
    chaveIdempotencia: str
    pedidoId: str | None = None
    valor: str | None = None
    conversaId: str | None = None
    since: str = ""
    age_s: float = 0
    actions: list[Literal["reconcile", "settle"]] = Field(default_factory=list)


class Approvals(_Model):
    """``GET /api/approvals``: what waits on people."""

    infra_prs: list[PullRequest] = Field(default_factory=list)
    interruptions: list[Interruption] = Field(default_factory=list)
    uncertain: list[UncertainItem] = Field(default_factory=list)


class TimelineEntry(_Model):
    """One step of an infra PR's gate history."""

    ts: str = ""
    status: str = ""
    actor: str = ""
    note: str | None = None


class PullRequestDetail(PullRequest):
    """``GET /api/prs/{id}``."""

    timeline: list[TimelineEntry] = Field(default_factory=list)
    head: str = ""


class ArtifactFile(_Model):
    """One file of the infra PR's branch."""

    path: str
    content: str = ""


class PrFiles(_Model):
    """``GET /api/prs/{id}/files``."""

    files: list[ArtifactFile] = Field(default_factory=list)
    diff: str = ""


class Finding(_Model):
    """One gate finding."""

    gate: str | None = None
    tool: str = ""
    rule: str = ""
    file: str = ""
    line: int | None = None
    severity: str = ""
    message: str = ""


class Findings(_Model):
    """``GET /api/prs/{id}/findings``."""

    findings: list[Finding] = Field(default_factory=list)


class TranscriptLine(_Model):
    """One message of a customer conversation."""

    role: str = ""
    text: str = ""
    ts: str = ""


class Attempt(BaseModel):
    """One ledger attempt record; keeps the seed's field names (Lab 87)."""

    model_config = ConfigDict(extra="allow", frozen=True)

    evento: str = ""
    timestamp: str = ""
    conversaId: str = ""
    pedidoId: str | None = None
    clienteId: str | None = None
    ferramenta: str = ""
    tentativaNumero: int
    resultado: Resultado
    chaveIdempotencia: str | None = None


class LedgerFacts(_Model):
    """What the ledger holds for a takeover's entity: shown before an execute is confirmed
    and when the ledger blocks one (409 ``blocked_by_ledger``)."""

    status: LedgerStatus
    valor: str | None = None
    conversaId: str | None = None
    ts: str | None = None
    chaveIdempotencia: str
    operador: str | None = None
    motivo: str | None = None
    """Why a ``falhou`` failed, in the gateway's words when it refused."""
    recusado_pelo_banco: bool = False
    """The gateway refused for good: correct the valor, or deny."""


class InterruptionDetail(Interruption):
    """``GET /api/interruptions/{id}``: the takeover plus its story."""

    attempts: list[Attempt] = Field(default_factory=list)
    transcript: list[TranscriptLine] = Field(default_factory=list)
    ledger: LedgerFacts | None = None
    """None when the ledger has no record for the entity yet."""


class ResolveResult(_Model):
    """``POST /api/interruptions/{id}/resolve``: what really happened."""

    outcome: Resultado | None = None
    """The ledger's ``resultado`` of the operator's execute; None for deny / hand back."""
    interruption: Interruption
    attempt: Attempt | None = None
    ledger: LedgerFacts | None = None


class Delivery(_Model):
    """Where an outbound message stands on its way to the customer's channel."""

    status: Literal["pending", "delivered", "failed"]
    attempts: int = 0
    last_error: str | None = None
    delivered_at: str | None = None


class Message(_Model):
    """One message of ``GET /api/conversations/{id}`` (and the answer to a reply)."""

    id: int
    autor: Literal["cliente", "agente", "operador"]
    texto: str = ""
    ts: str = ""
    delivery: Delivery | None = None
    """None for the customer's own (inbound) messages."""


class Conversation(_Model):
    """``GET /api/conversations/{id}``: who holds it (bot or a human) and every message."""

    id: str
    state: Literal["bot", "human"]
    operator: str | None = None
    messages: list[Message] = Field(default_factory=list)
    attempts: list[Attempt] = Field(default_factory=list)


class UncertainOut(_Model):
    """``POST /api/uncertain/{id}/reconcile`` and ``.../settle``."""

    id: str
    outcome: Resultado | None = None
    settled: bool = False
    message: str = ""


class Resync(_Model):
    """The stream says we fell too far behind: refetch, continue after ``last_id``."""

    last_id: int


class Connected(_Model):
    """The stream (re)opened; emitted before its first event."""

    resumed_from: int | None = None


class Malformed(_Model):
    """A stream event the console could not read: shown as a contract error, then skipped
    (its id is still the resume point, so a reconnect does not fetch it again)."""

    id: int | None = None
    route: str
    field: str
    message: str


StreamItem = StreamEvent | Resync | Connected | Malformed
