"""The console's view of ``GET /api/me`` and ``GET /api/audit`` (checked against the
backend's OpenAPI by the contract test)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


Role = Literal["viewer", "operator", "admin"]


class Me(_Model):
    """Who the console's token names: a viewer gets the read-only console."""

    name: str
    role: Role
    bootstrap: bool


class AuditEntry(_Model):
    """One operator action of the audit trail."""

    id: int
    ts: str
    type: str
    operator: str
    as_operator: str | None = None
    action: str
    target: dict[str, str]
    reason: str | None = None
    outcome: str
    status: int | None = None
    error: str | None = None
