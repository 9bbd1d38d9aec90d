"""Response models of the PR routes (``/api/prs/...`` and the ``/api/infra-artifacts/...``
aliases): one model per response, built from the pipeline's records."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from backend.gates.state import GateStatus
from backend.infra.prs import HistoryEntry, PullRequest


class FindingOut(BaseModel):
    """One gate finding (``cadencia gate --json``'s shape) and the gate that reported it."""

    tool: str
    rule: str
    file: str
    line: int | None = None
    severity: str
    message: str
    gate: str | None = None
    """``qa``, ``secops`` or ``human`` (an operator's rejection)."""


class PullRequestOut(BaseModel):
    """A PR of any kind and where it stands in the gates."""

    id: str
    kind: Literal["infra", "dev", "adr"]
    pr_action_id: str
    """The same value as ``id``: the name the infra routes have always used."""
    project_id: str
    session_id: str | None
    task_id: str | None
    author: str
    title: str
    branch: str
    pr_id: str | None
    pr_url: str | None
    head: str
    files: list[str]
    findings: list[FindingOut]
    findings_count: int
    gate_status: GateStatus
    gate_correction_count: int
    blocked: bool
    blocked_reason: str | None
    created_at: str
    updated_at: str

    @classmethod
    def of(cls, pr: PullRequest) -> PullRequestOut:
        """From the pipeline's record."""
        return cls.model_validate(pr.to_dict())


class TimelineItem(BaseModel):
    """One gate move: ``from`` → ``to`` (also as ``status``), by whom, why."""

    model_config = ConfigDict(populate_by_name=True)

    ts: str
    from_: str | None = Field(alias="from")
    to: str
    status: str
    actor: str
    note: str | None

    @classmethod
    def of(cls, entry: HistoryEntry) -> TimelineItem:
        """From one ``gate_history`` row."""
        item: dict[str, Any] = entry.to_dict()
        return cls.model_validate({**item, "status": item["to"]})


class PullRequestDetail(PullRequestOut):
    """A PR with its gate timeline, oldest first."""

    timeline: list[TimelineItem]


class PrFile(BaseModel):
    """One file of the PR at its head."""

    path: str
    content: str


class PrFilesOut(BaseModel):
    """The PR's files at its head and the unified diff against its base."""

    pr_action_id: str
    kind: Literal["infra", "dev", "adr"]
    branch: str
    head: str
    base: str
    files: list[PrFile]
    diff: str


class PrFindingsOut(BaseModel):
    """The latest findings: what the author is asked to fix."""

    findings: list[FindingOut]
