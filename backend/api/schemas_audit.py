"""Response models of the operator routes: ``GET /api/me`` and ``GET /api/audit``."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from backend.events import Event
from backend.operators.roles import Role


class _Out(BaseModel):
    model_config = ConfigDict(extra="ignore")


class MeOut(_Out):
    """The operator the request's token names (the console learns its role here)."""

    name: str
    role: Role
    bootstrap: bool = Field(description="the bootstrap token (CADENCIA_TOKEN or generated)")


class AuditEntryOut(_Out):
    """One operator action: who, what, target, reason, outcome, when."""

    id: int = Field(description="the event's id in the log")
    ts: str
    type: str = Field(description="the event type (one of OPERATOR_ACTIONS)")
    operator: str = Field(description="who really acted: the token's operator")
    as_operator: str | None = Field(
        None, description="the bootstrap admin acted in this operator's name"
    )
    role: str | None = None
    action: str
    target: dict[str, str]
    reason: str | None = None
    outcome: str = Field(description="done | refused (403/409) | failed (5xx)")
    status: int | None = None
    error: str | None = None

    @classmethod
    def of(cls, event: Event) -> AuditEntryOut:
        """The audit view of an event (``operator.action`` or another operator decision)."""
        p: dict[str, Any] = event.payload
        target = p.get("target")
        if not isinstance(target, dict):
            target = {k: str(p[k]) for k in ("pr_id", "finding", "gate") if k in p}
        return cls(
            id=event.id,
            ts=event.ts,
            type=event.type,
            operator=str(p.get("operator", "")),
            as_operator=p.get("as_operator"),
            role=p.get("role"),
            action=str(p.get("action", event.type)),
            target={str(k): str(v) for k, v in target.items()},
            reason=p.get("reason"),
            outcome=str(p.get("outcome", "done")),
            status=p.get("status"),
            error=p.get("error"),
        )
