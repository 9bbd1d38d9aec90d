"""A proposal of files for a PR, and what proposing it did (the author's tool result)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from backend.agents.policy import Decision
from backend.gates.state import GateName as GateName  # re-exported: flow, dev_tasks
from backend.prs.records import PrKind, PullRequest

SETTLED: frozenset[str] = frozenset({"awaiting_human", "blocked", "merged", "closed"})
VerdictValue = Literal["pass", "fail", "skipped"]


@dataclass(frozen=True)
class Proposal:
    """An author's files for a PR of ``kind`` (validated paths → contents)."""

    kind: PrKind
    project_id: str
    title: str
    files: dict[str, str]
    author: str
    session_id: str | None = None
    task_id: str | None = None


@dataclass(frozen=True)
class ProposalResult:
    """What a proposal did: opened a PR, committed a correction, waits for approval, or
    changed nothing (``unchanged``: no commit, no ``decide()``, so no decision)."""

    status: Literal["opened", "corrected", "pending", "unchanged"]
    decision: Decision | None
    artifact: PullRequest | None = None
    approval_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The tool result handed back to the model."""
        out: dict[str, Any] = {
            "status": self.status,
            "decision": None if self.decision is None else self.decision.to_dict(),
        }
        if self.status == "unchanged":
            out["detail"] = "no change: the files are identical to the PR's head; not committed"
        if self.artifact is not None:
            out.update(
                pr_action_id=self.artifact.id,
                kind=self.artifact.kind,
                branch=self.artifact.branch,
                pr_url=self.artifact.pr_url,
                head=self.artifact.head,
                gate_status=self.artifact.gate_status,
            )
        if self.approval_id is not None:
            out["approval_id"] = self.approval_id
        return out
