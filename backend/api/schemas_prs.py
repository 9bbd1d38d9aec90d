"""Response models of the PR routes (``/api/prs/...`` and the ``/api/infra-artifacts/...``
aliases): one model per response, built from the pipeline's records."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator

from backend.gates.state import GateStatus
from backend.prs.records import HistoryEntry, PullRequest


class WaivedOut(BaseModel):
    """An operator's waiver of a finding on this PR: it no longer blocks the verdict."""

    operator: str
    reason: str
    created_at: str
    note: str
    """``waived by X: reason``."""


class FindingOut(BaseModel):
    """One gate finding (``cadencia gate --json``'s shape) and the gate that reported it."""

    id: str | None = None
    """The finding's stable id (fingerprint): what a waiver names. ``None`` for an
    operator's rejection and a skipped scanner, which cannot be waived."""
    tool: str
    rule: str
    file: str
    line: int | None = None
    severity: str
    message: str
    gate: str | None = None
    """``qa``, ``secops`` or ``human`` (an operator's rejection)."""
    waived: WaivedOut | None = None


class PullRequestOut(BaseModel):
    """A PR of any kind and where it stands in the gates."""

    id: str
    """Our id of the PR: what every ``/api/prs/{id}`` route takes."""
    kind: Literal["infra", "dev", "adr"]
    remote_id: str | None = None
    """The git provider's id of the PR, once it has one."""
    pr_action_id: str = Field(deprecated="use id (the same value); removed in the next release")
    project_id: str
    session_id: str | None
    task_id: str | None
    author: str
    title: str
    branch: str
    pr_id: str | None = Field(
        deprecated="use remote_id (the same value); removed in the next release"
    )
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

    @model_validator(mode="before")
    @classmethod
    def _names(cls, data: Any) -> Any:
        # The record says pr_action_id / pr_id; the names to read are id / remote_id.
        if isinstance(data, dict):
            data = dict(data)
            data.setdefault("remote_id", data.get("pr_id"))
            data.setdefault("pr_id", data.get("remote_id"))
            if "id" in data:
                data.setdefault("pr_action_id", data["id"])
        return data

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


class WaiverBody(BaseModel):
    """``POST /api/prs/{id}/waivers``: one finding of this PR, and why it may pass."""

    model_config = ConfigDict(extra="forbid")

    finding: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_-]{1,64}$")]
    reason: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=2000)]
    operator: (
        Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._@ -]{0,63}$")] | None
    ) = None
    """Ignored for an operator account (its own name is recorded); the bootstrap admin may
    waive in this name (see ``backend.api.auth.acting``)."""


class WaiverOut(BaseModel):
    """The waiver as recorded, and the PR after it (re-evaluated when nothing else blocked)."""

    pr_id: str
    finding: str
    gate: str
    tool: str
    rule: str
    file: str
    line: int | None
    operator: str
    reason: str
    created_at: str
    note: str
    reevaluated: bool
    """True when no blocking finding was left: the PR went back to ``awaiting_qa``."""
    pr: PullRequestOut
