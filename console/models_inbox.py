"""Typed shapes of the Inbox routes (``GET /api/inbox``, approvals, handoffs) as the
console reads them. Same rules as :mod:`console.models`: unknown fields are ignored and
``tests/console/test_contract.py`` checks each model against the backend's openapi."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

InboxKind = Literal[
    "pr",
    "pr_blocked",
    "pr_stuck",
    "job_dead",
    "unanswered",
    "action_approval",
    "handoff",
    "interruption",
    "uncertain",
]
ApprovalStatus = Literal["pending", "approved", "rejected", "failed"]
SlaState = Literal["ok", "warning", "breached"]
HandoffStatus = Literal["offered", "accepted", "declined"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class InboxAction(_Model):
    """One thing the operator can do to an Inbox item, and the route that does it."""

    name: str
    method: Literal["POST"] = "POST"
    path: str
    reason: Literal["required", "optional", "none"] = "none"


class InboxItem(_Model):
    """One row of ``GET /api/inbox``: something waiting for a human."""

    id: str
    """``<kind>:<target_id>``, unique in the list."""
    kind: InboxKind
    target_id: str
    project_id: str | None = None
    project_name: str | None = None
    title: str = ""
    detail: str = ""
    since: str = ""
    age_s: float = 0
    due_at: str | None = None
    """ISO 8601 UTC: when its SLA runs out. None from a server older than SLAs: no deadline."""
    sla_state: SlaState | None = None
    """The server's verdict when it answered (``warning`` past 75% of the SLA); None from
    an older server. The console recomputes it from ``due_at`` on its own clock
    (:mod:`console.sla`)."""
    state: str = ""
    pr_kind: Literal["infra", "dev", "adr"] | None = None
    session_id: str | None = None
    """The team session it came from: a restarted demo's items are told apart by it."""
    actions: list[InboxAction] = Field(default_factory=list)

    def action(self, name: str) -> InboxAction | None:
        """The action called ``name`` if this item offers it (the only source of keys)."""
        return next((a for a in self.actions if a.name == name), None)


class ApprovalOut(_Model):
    """``GET /api/approvals/{id}``: an action ``decide()`` held for a human, and why."""

    id: str
    project_id: str | None = None
    session_id: str | None = None
    agent: str = ""
    action: str = ""
    payload: dict[str, Any] = Field(default_factory=dict)
    status: ApprovalStatus = "pending"
    stage: str | None = None
    rule: str | None = None
    created_at: str = ""
    decided_by: str | None = None
    decided_at: str | None = None
    reason: str | None = None
    result: dict[str, Any] | None = None


class ApprovalDecisionOut(_Model):
    """``POST /api/approvals/{id}/approve|reject``: what really happened."""

    approval: ApprovalOut
    executed: bool = False
    message: str = ""
    pr_id: str | None = None


class JobOut(_Model):
    """A durable job after an operator's rerun or drop (``POST /api/jobs/{id}/...``)."""

    id: int
    kind: str = ""
    state: str = ""
    attempts: int = 0
    max_attempts: int = 0
    last_error: str | None = None


class HandoffOut(_Model):
    """A handoff offer between two agents (``GET /api/handoffs``, accept, decline)."""

    id: str
    project_id: str
    session_id: str
    from_agent: str
    to_agent: str
    status: HandoffStatus
    note: str | None = None
    offered_at: str = ""
    accepted_at: str | None = None
    accepted_by: str | None = None
