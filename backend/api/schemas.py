"""Response models of the HTTP API: one pydantic model per response, the one contract.

Every route declares one of these, so ``/openapi.json`` describes every 2xx body; the
console and users' scripts read that schema. Field names are the API's (English, except
the seed's own words: ``ferramenta``, ``motivo``, ``entidade``, ``resultado`` and the
attempt record's fields, kept exactly as Lab 87 writes them).

Models ignore unknown keys of what the backend hands them (``extra="ignore"``), so an
internal field added to a domain dict never leaks into the contract without a model change,
and never turns a good answer into a 500.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from backend.agents.approvals import iso_utc
from backend.agents.roster import Status as AgentStatus
from backend.api.schemas_ledger import LedgerFacts, UncertainItem, UncertainOut
from backend.api.schemas_prs import FindingOut, PullRequestOut
from backend.gates.state import GateStatus
from backend.guard.conversations import Role
from backend.guard.interruptions import Interruption, Motivo
from backend.guard.orchestrator import Resultado
from backend.tools.registry import tool_spec

EntityField = Literal["pedidoId", "clienteId"]
InterruptionStatus = Literal["open", "claimed", "resolved"]
HandoffStatus = Literal["offered", "accepted", "declined"]


class _Out(BaseModel):
    model_config = ConfigDict(extra="ignore")


__all__ = ["LedgerFacts", "UncertainItem", "UncertainOut"]  # defined in schemas_ledger


class ErrorDetail(_Out):
    """What went wrong: a stable ``code`` and a message for a person (``ledger``: what the
    ledger holds, on a ``blocked_by_ledger`` / ``not_executed`` 409)."""

    code: str
    message: str
    ledger: LedgerFacts | None = None


class ErrorOut(_Out):
    """Every error of the API: ``{"error": {"code", "message"}}``."""

    error: ErrorDetail


_ERROR_STATUSES = {
    401: "missing or wrong bearer token",
    404: "unknown id or route",
    409: "not allowed in the current state",
    413: "request body too large",
    422: "input that does not fit its schema",
    502: "a dependency we call (payment gateway, model provider) failed; see Retry-After",
    503: "our infrastructure (database, ledger, secrets, scanner) is unavailable, or this "
    "backend is misconfigured; see Retry-After when a retry can help",
}
ERRORS: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorOut, "description": text} for status, text in _ERROR_STATUSES.items()
}
"""The error responses every ``/api`` route may give, for the OpenAPI document."""


class HealthOut(_Out):
    """``GET /healthz``."""

    status: Literal["ok"] = "ok"
    version: str = Field(default="0.1.0")


# -- team -----------------------------------------------------------------------------------


class TokenUsageOut(_Out):
    """Tokens the provider reported and their estimated cost (null: no price known)."""

    input_tokens: int
    output_tokens: int
    cost_usd: float | None


class RosterEntryOut(_Out):
    """One agent of ``GET /api/roster``."""

    id: str
    role: str
    status: AgentStatus
    model: str | None
    autonomy: dict[str, str] = Field(default_factory=dict)
    detail: str = ""
    paused_by: str | None = Field(default=None, description="who paused it, while paused")
    usage: TokenUsageOut | None = None
    """Today's (UTC) usage of the agent in the project; null before its first turn."""


class ProjectOut(_Out):
    """A project (``POST /api/projects``, ``GET /api/projects``)."""

    id: str
    name: str
    repo_path: str | None
    module_map: dict[str, Any] | None
    execution_activated: bool
    created_at: str


class SessionOut(_Out):
    """A session of a project."""

    id: str
    project_id: str
    title: str
    created_at: str


class HandoffOut(_Out):
    """A handoff offer between two agents, accepted (or declined) by an operator."""

    id: str
    project_id: str
    session_id: str
    from_agent: str
    to_agent: str
    status: HandoffStatus
    note: str | None
    offered_at: str
    accepted_at: str | None
    accepted_by: str | None
    declined_at: str | None = None
    declined_by: str | None = None
    decline_reason: str | None = None


class ToolResultOut(_Out):
    """One tool call of an agent turn; ``result`` is the tool's own JSON answer."""

    tool: str
    result: dict[str, Any]
    error: bool


class AgentTurnOut(_Out):
    """``POST .../agents/{agent_id}/turns``: the agent's answer and what its tools did."""

    text: str | None
    tool_results: list[ToolResultOut]
    steps: int


# -- events ---------------------------------------------------------------------------------


class EventOut(_Out):
    """One event of the log (``GET /api/events``)."""

    id: int
    type: str
    ts: str
    project_id: str | None = None
    session_id: str | None = None
    agent: str | None = None
    payload: dict[str, Any] = Field(default_factory=dict)


class StreamEventData(EventOut):
    """The ``data`` of an SSE ``event`` message: the event plus its feed line."""

    text: str = Field(description="the operator-readable line, as in /api/activity")


class StreamResyncData(_Out):
    """The ``data`` of an SSE ``resync`` message: refetch, then continue after ``last_id``."""

    last_id: int


STREAM_MODELS: tuple[type[BaseModel], ...] = (StreamEventData, StreamResyncData, ErrorOut)
STREAM_RESPONSE: dict[int | str, dict[str, Any]] = {
    # Its errors are JSON, not events: name the media type, or FastAPI would use the route's.
    **{
        status: {
            "description": text,
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorOut"}}},
        }
        for status, text in _ERROR_STATUSES.items()
    },
    200: {
        "description": "Server-sent events. `event: event` messages carry `id` = the event "
        "log id and StreamEventData; `event: resync` carries StreamResyncData (the client "
        "fell too far behind: refetch, then continue after `last_id`). Comment lines are "
        "keep-alive pings.",
        "content": {
            "text/event-stream": {
                # OpenAPI 3.2's way to describe each message of a stream (as FastAPI's own
                # SSE support writes it); ``data`` is JSON text of one of the two models.
                "itemSchema": {
                    "type": "object",
                    "required": ["event", "data"],
                    "properties": {
                        "event": {"type": "string", "enum": ["event", "resync"]},
                        "id": {"type": "string", "description": "the event log id"},
                        "data": {
                            "type": "string",
                            "contentMediaType": "application/json",
                            "contentSchema": {
                                "oneOf": [
                                    {"$ref": f"#/components/schemas/{m.__name__}"}
                                    for m in (StreamEventData, StreamResyncData)
                                ]
                            },
                        },
                    },
                }
            }
        },
    },
}
"""The OpenAPI response of ``GET /api/events/stream``; see ``stream_components``."""


def stream_components() -> dict[str, Any]:
    """Component schemas of :data:`STREAM_MODELS` (FastAPI adds only models that a route
    returns, and the stream returns a raw SSE response)."""
    out: dict[str, Any] = {}
    for model in STREAM_MODELS:
        schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
        out.update(schema.pop("$defs", {}))
        out[model.__name__] = schema
    return out


class ActivityLineOut(_Out):
    """One line of ``GET /api/activity``."""

    id: int
    ts: str
    kind: str
    text: str


# -- PRs in review --------------------------------------------------------------------------


class DevTaskOut(_Out):
    """A dev-<module> task and, once proposed, its PR's gate state."""

    id: str
    project_id: str
    module: str
    title: str
    agent: str
    status: Literal["todo", "working", "in_review", "done", "blocked", "closed"] = Field(
        description="the task's work: todo → working (its agent is on it) → in_review (PR "
        "open) → done (merged); blocked with a reason; closed (its PR was closed)"
    )
    description: str | None = None
    reason: str | None = Field(default=None, description="why it is blocked, or its last run ended")
    attempts: int = 0
    branch: str | None
    pr_action_id: str | None
    head: str | None
    files: list[str]
    findings: list[FindingOut]
    gate_status: GateStatus | None
    gate_correction_count: int
    blocked: bool
    blocked_reason: str | None
    created_at: str
    updated_at: str


class ExecutionOut(_Out):
    """``POST /api/projects/{id}/execution``: the tasks the dev agents start on (the PO's
    ``todo`` tasks; under ``--demo`` also the demo's)."""

    project_id: str
    tasks: list[DevTaskOut]
    operator: str


# -- customer conversations and takeovers ---------------------------------------------------


class AttemptRecord(_Out):
    """One ``TENTATIVA_DE_FERRAMENTA_REGISTRADA`` record, with the seed's field names."""

    evento: str
    timestamp: str
    conversaId: str
    pedidoId: str | None = None
    clienteId: str | None = None
    ferramenta: str
    tentativaNumero: int
    resultado: Resultado
    chaveIdempotencia: str | None = None
    detalhe: str | None = None
    operador: str | None = Field(default=None, description="set when an operator acted")
    interrupcaoId: int | None = Field(default=None, description="the takeover it opened")


class InterruptionItem(_Out):
    """A human takeover as lists show it (``/api/approvals``, claim, resolve)."""

    id: int
    conversation: str
    entidade: EntityField = Field(description="which argument names the entity")
    entidade_id: str
    ferramenta: str
    motivo: Motivo
    argumentos: dict[str, Any]
    attempt_count: int = Field(description="attempts counted when it was opened or touched")
    status: InterruptionStatus
    since: str
    claimed_by: str | None
    claimed_at: str | None = Field(
        default=None, description="ISO 8601 UTC: when its holder claimed it (None while open)"
    )
    resolution: str | None
    reply: str | None
    outcome: Resultado | None = Field(
        default=None, description="the ledger's resultado of the operator's execute"
    )
    grant_left: int = Field(default=0, description="attempts granted to the agent, unused")

    @classmethod
    def of(cls, item: Interruption) -> InterruptionItem:
        """Build from the guard's takeover; its tool's spec names the entity field."""
        return cls(
            id=item.id,
            conversation=item.conversa_id,
            entidade=tool_spec(item.ferramenta).entity_field,
            entidade_id=item.entidade_id,
            ferramenta=item.ferramenta,
            motivo=item.motivo,  # type: ignore[arg-type]
            argumentos=item.argumentos,
            attempt_count=item.attempts,
            status=item.status,  # type: ignore[arg-type]
            since=item.opened_at,
            claimed_by=item.claimed_by,
            claimed_at=iso_utc(item.claimed_at) if item.claimed_at else None,
            resolution=item.resolution,
            reply=item.reply,
            outcome=item.outcome,  # type: ignore[arg-type]
            grant_left=item.grant_left,
        )


class TranscriptLine(_Out):
    """One message of a customer conversation."""

    role: Role
    text: str
    ts: str


class InterruptionDetailOut(InterruptionItem):
    """``GET /api/interruptions/{id}``: the takeover, its transcript and attempt history."""

    transcript: list[TranscriptLine]
    attempts: list[AttemptRecord]
    ledger: LedgerFacts | None = Field(description="what the ledger holds for the entity")


class ResolveOut(_Out):
    """``POST /api/interruptions/{id}/resolve``: the ledger's real outcome (``executado``
    only when it really executed; None when nothing ran), the closed takeover, the
    operator's attempt (None unless executed) and what the ledger now holds."""

    outcome: Resultado | None
    interruption: InterruptionItem
    attempt: AttemptRecord | None
    ledger: LedgerFacts | None


class ApprovalsOut(_Out):
    """``GET /api/approvals``: infra PRs in review, unresolved takeovers, uncertain outcomes."""

    infra_prs: list[PullRequestOut]
    interruptions: list[InterruptionItem]
    uncertain: list[UncertainItem] = Field(default_factory=list)
