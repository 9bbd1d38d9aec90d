"""Separation of duties on PRs: how many approvals a kind needs, and who may give one.

A PR of kind K merges on its N-th approval at its current head, N being
``CADENCIA_REQUIRED_APPROVALS[K]`` (default 1). An approval is recorded and counted under
its principal, the operator its token authenticates: the bootstrap token is one person
whatever name it acts in. A principal counts once per head (a second approve is 409), the
agent that authored the PR never approves it (403), and a correction (a new head) starts
the count again: what was approved is what merges.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from backend.exceptions import ConflictError, ForbiddenError
from backend.store.db import Tx

DEFAULT_REQUIRED = 1


def required_for(required: Mapping[Any, int], kind: str) -> int:
    """Approvals a PR of ``kind`` needs before it merges (``required``: the setting, keyed
    by PR kind)."""
    return int(required.get(kind, DEFAULT_REQUIRED))


@dataclass(frozen=True)
class ApprovalCount:
    """Who approved a PR at its head, and how many it needs."""

    approvers: tuple[str, ...]
    required: int

    @property
    def enough(self) -> bool:
        """The PR may merge."""
        return len(self.approvers) >= self.required

    def text(self) -> str:
        """``1 of 2 approvals (ana)``, what the Inbox shows."""
        who = f" ({', '.join(self.approvers)})" if self.approvers else ""
        return f"{len(self.approvers)} of {self.required} approvals{who}"


def check_approver(pr: Any, operator: str) -> None:
    """Refuse an approval the PR's author would give itself.

    Raises:
        ForbiddenError: ``operator`` is the agent that authored the PR.
    """
    if operator == pr.author:
        raise ForbiddenError(
            f"{operator} authored {pr.id}: the author of a PR never approves it", pr_id=pr.id
        )


def count(tx: Tx, pr: Any, required: int) -> ApprovalCount:
    """The approvals of ``pr`` at its current head."""
    rows = tx.all("pr_approvals_of", {"pr_id": pr.id, "head": pr.head})
    return ApprovalCount(tuple(str(r["operator"]) for r in rows), required)


def record(tx: Tx, pr: Any, operator: str, reason: str | None, required: int) -> ApprovalCount:
    """Add ``operator``'s approval of ``pr`` at its head inside ``tx`` (the PR row locked
    first, so two approvals at once count each other) and return the count.

    Raises:
        ConflictError: ``operator`` already approved this head (one operator counts once).
    """
    tx.one("pr_lock", {"pr_id": pr.id})
    now = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    added = tx.execute(
        "pr_approval_insert",
        {"pr_id": pr.id, "head": pr.head, "operator": operator, "reason": reason, "now": now},
    )
    if added != 1:
        raise ConflictError(
            f"{operator} already approved {pr.id} at {pr.head[:12]}; "
            f"another operator must give the next approval",
            pr_id=pr.id,
        )
    return count(tx, pr, required)
