"""Typed shapes of the backend's HTTP API (see the API contract), as the console reads them.

Models ignore unknown fields so a newer backend does not break an older console, and
default what the console can live without.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

AgentStatus = Literal["working", "idle", "blocked", "offline"]
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


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class Health(_Model):
    """``GET /healthz``."""

    status: str
    version: str = ""


class RosterEntry(_Model):
    """One agent of ``GET /api/roster``."""

    id: str
    role: str = ""
    status: str = "idle"
    model: str | None = None
    autonomy: str | dict[str, Any] | None = None
    detail: str = ""

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
    text: str | None = None
    """Optional server-rendered feed line; the console renders one itself when absent."""


class ActivityLine(_Model):
    """One line of ``GET /api/activity``."""

    id: int
    ts: str = ""
    kind: str = ""
    text: str = ""


class InfraPr(_Model):
    """An infra PR in the gate pipeline."""

    pr_action_id: str
    project_id: str | None = None
    session_id: str | None = None
    title: str = ""
    branch: str = ""
    pr_id: str = ""
    pr_url: str = ""
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
    pedido: str = ""
    ferramenta: str = ""
    motivo: str = ""
    argumentos: dict[str, Any] = Field(default_factory=dict)
    attempts: int = 0
    status: str = "open"
    since: str = ""
    claimed_by: str | None = None
    resolution: str | None = None
    reply: str | None = None


class Approvals(_Model):
    """``GET /api/approvals``: what waits on people."""

    infra_prs: list[InfraPr] = Field(default_factory=list)
    interruptions: list[Interruption] = Field(default_factory=list)


class TimelineEntry(_Model):
    """One step of an infra PR's gate history."""

    ts: str = ""
    status: str = ""
    actor: str = ""
    note: str = ""


class InfraPrDetail(InfraPr):
    """``GET /api/infra-artifacts/{id}``."""

    timeline: list[TimelineEntry] = Field(default_factory=list)
    head: str = ""


class ArtifactFile(_Model):
    """One file of the infra PR's branch."""

    path: str
    content: str = ""


class InfraFiles(_Model):
    """``GET /api/infra-artifacts/{id}/files``."""

    files: list[ArtifactFile] = Field(default_factory=list)
    diff: str = ""


class Finding(_Model):
    """One gate finding."""

    gate: str = ""
    tool: str = ""
    rule: str = ""
    file: str = ""
    line: int | None = None
    severity: str = ""
    message: str = ""


class Findings(_Model):
    """``GET /api/infra-artifacts/{id}/findings``."""

    findings: list[Finding] = Field(default_factory=list)


class TranscriptLine(_Model):
    """One message of a customer conversation."""

    role: str = ""
    text: str = ""
    ts: str = ""


class Attempt(BaseModel):
    """One ledger attempt record; keeps the seed's field names (Lab 87)."""

    model_config = ConfigDict(extra="allow", frozen=True)

    tentativaNumero: int | None = None
    resultado: str | None = None
    timestamp: str | None = None
    ferramenta: str | None = None
    pedidoId: str | None = None
    chaveIdempotencia: str | None = None
    detalhe: str | None = None


class InterruptionDetail(Interruption):
    """``GET /api/interruptions/{id}``: the takeover plus its story."""

    transcript: list[TranscriptLine] = Field(default_factory=list)
    attempt_history: list[Attempt] = Field(default_factory=list, alias="attempts_history")

    @classmethod
    def from_api(cls, data: dict[str, Any]) -> InterruptionDetail:
        """Build from the API body, where ``attempts`` is the attempt list, not a count."""
        body = dict(data)
        history = body.get("attempts")
        if isinstance(history, list):
            body["attempts_history"] = history
            body["attempts"] = len(history)
        return cls.model_validate(body)


class ResolveResult(_Model):
    """``POST /api/interruptions/{id}/resolve``."""

    interruption: Interruption
    attempt: Attempt | None = None


class Resync(_Model):
    """The stream says we fell too far behind: refetch, continue after ``last_id``."""

    last_id: int


class Connected(_Model):
    """The stream (re)opened; emitted before its first event."""

    resumed_from: int | None = None


StreamItem = Event | Resync | Connected
