"""Response models of the inbox, approvals (``decide()`` → ask) and handoff lists.

Split from :mod:`backend.api.schemas` to keep modules small; one model per response.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

InboxKindOut = Literal[
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
ApprovalStatusOut = Literal["pending", "approved", "rejected", "failed"]


class _Out(BaseModel):
    model_config = ConfigDict(extra="ignore")


class InboxAction(_Out):
    """A route that acts on an inbox item; ``reason`` says whether its body needs one."""

    name: str
    method: Literal["POST"] = "POST"
    path: str
    reason: Literal["required", "optional", "none"]


class InboxItem(_Out):
    """One thing waiting for a human (``GET /api/inbox``), most urgent first."""

    id: str = Field(description="<kind>:<target_id>, unique in the list")
    kind: InboxKindOut
    target_id: str = Field(description="the id the action routes take")
    project_id: str | None
    project_name: str | None = Field(description="tells two projects of the same name apart")
    title: str
    detail: str = Field(description="why it waits, one line")
    since: str = Field(description="ISO 8601 UTC: when it started waiting")
    age_s: float
    due_at: str = Field(description="ISO 8601 UTC: when its SLA runs out (since + the kind's SLA)")
    sla_state: Literal["ok", "warning", "breached"] = Field(
        description="ok; warning past 75% of its SLA; breached past all of it"
    )
    state: str
    pr_kind: Literal["infra", "dev", "adr"] | None = None
    session_id: str | None = Field(
        default=None, description="the team session it came from (PRs, held actions, handoffs)"
    )
    actions: list[InboxAction]


class ApprovalOut(_Out):
    """A ``decide()`` → ask approval (``GET /api/approvals/{id}``)."""

    id: str
    project_id: str | None
    session_id: str | None
    agent: str
    action: str
    payload: dict[str, Any]
    status: ApprovalStatusOut
    stage: str | None = Field(description="the decide() stage that asked")
    rule: str | None = Field(description="the rule that asked")
    created_at: str
    decided_by: str | None
    decided_at: str | None
    reason: str | None
    result: dict[str, Any] | None = Field(
        description="what executing the approved action did (error when failed)"
    )


class ApprovalDecisionOut(_Out):
    """``POST /api/approvals/{id}/approve|reject``: the decision and what really happened."""

    approval: ApprovalOut
    executed: bool = Field(description="whether the approved action really ran")
    message: str
    pr_id: str | None = Field(default=None, description="the PR the action opened")
