"""An operator's decision on a ``decide()`` → ask approval, and executing what was approved.

Every action that asks today is a PR proposal, so approving one makes the proposal through
the one PR pipeline (:meth:`PrFlow.propose` with the approval's id: it does not ask again).
What approving did is told as it is, and a failing dependency leaves the approval pending;
rejecting needs a reason. :class:`Decisions` gives the outcomes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from backend.agents.approvals import Approval, ApprovalStore
from backend.exceptions import CadenciaError, UnavailableError, ValidationError
from backend.prs.actions import PrPipeline
from backend.prs.gating import files_payload
from backend.prs.kind_adr import adr_proposal
from backend.prs.proposals import Proposal, ProposalResult
from backend.prs.records import PrKind


@dataclass(frozen=True)
class Decided:
    """What an operator's decision did."""

    approval: Approval
    executed: bool
    message: str
    pr_id: str | None = None


def _required(value: str | None, what: str) -> str:
    if value is None or not value.strip():
        raise ValidationError(f"{what} is required and must not be empty")
    return value.strip()


class Decisions:
    """Approve (and execute) or reject pending approvals over the store and the pipeline.

    Every action that asks today is a PR proposal (``open_adr_pr``, ``open_infra_pr``,
    ``propose_task_pr``), so approving one makes the proposal through the one PR pipeline
    (:meth:`PrFlow.propose` with the approval's id: it does not ask again; a deny still
    denies). What approving did is told as it is:

    - the action ran → ``approved``, ``executed`` true, the PR's id;
    - the action could not run (denied now, the branch exists, bad files...) → ``failed`` with
      the error in ``result.error``; the agent's next turn reads it like a rejection;
    - one of our dependencies failed (database, git unavailable...) → the error propagates
      (502/503) and the approval stays ``pending``, so the operator can try again.

    Rejecting needs a reason, which the requesting agent's next turn sees
    (:mod:`backend.agents.runtime`). Of two operators deciding at once, one wins; the other
    gets :class:`ConflictError` (409).
    """

    def __init__(self, approvals: ApprovalStore, pipeline: PrPipeline) -> None:
        self.approvals = approvals
        self.pipeline = pipeline
        self.executors: dict[str, Callable[[Approval], Proposal]] = {
            "open_infra_pr": self._infra,
            "propose_task_pr": self._task,
            "open_adr_pr": self._adr,
        }

    def approve(self, approval_id: str, operator: str, reason: str | None = None) -> Decided:
        """Approve and execute the pending action (see :class:`Decisions`).

        Raises:
            NotFoundError: unknown approval.
            ConflictError: not pending, or another operator is deciding it.
            UnavailableError: a dependency failed; the approval stays pending.
        """
        operator = _required(operator, "operator")
        approval = self.approvals.claim(approval_id, operator)
        try:
            result = self._execute(approval)
        except UnavailableError:
            self.approvals.release(approval_id, operator)
            raise
        except CadenciaError as exc:
            failed = self.approvals.decide(
                approval_id,
                operator,
                "failed",
                reason=reason,
                result={"executed": False, "error": exc.message},
            )
            return Decided(failed, False, f"approved, but {approval.action} failed: {exc.message}")
        except BaseException:
            self.approvals.release(approval_id, operator)
            raise
        pr_id = result.artifact.id if result.artifact else None
        done = self.approvals.decide(
            approval_id,
            operator,
            "approved",
            reason=reason,
            result={"executed": True, "status": result.status, "pr_id": pr_id},
        )
        return Decided(done, True, f"{approval.action} executed: PR {pr_id} {result.status}", pr_id)

    def reject(self, approval_id: str, operator: str, reason: str) -> Decided:
        """Reject with a reason (required); the requesting agent's next turn sees it."""
        operator = _required(operator, "operator")
        reason = _required(reason, "reason")
        done = self.approvals.decide(
            approval_id, operator, "rejected", reason=reason, result={"executed": False}
        )
        told = (
            f"{done.agent}'s next turn in session {done.session_id} sees the reason"
            if done.session_id
            else f"recorded for {done.agent} (it runs no session turns to tell)"
        )
        return Decided(done, False, f"{done.action} rejected; {told}")

    # -- executing the approved action -----------------------------------------------------

    def _execute(self, approval: Approval) -> ProposalResult:
        build = self.executors.get(approval.action)
        if build is None:
            raise ValidationError(f"nothing in this backend executes {approval.action!r}")
        if not approval.project_id:
            raise ValidationError(f"approval {approval.id} names no project")
        result = self.pipeline.propose(build(approval), approval_id=approval.id)
        if result.artifact is None:
            raise ValidationError(f"{approval.action} did not open a PR ({result.status})")
        return result

    def _proposal(self, approval: Approval, kind: PrKind, **extra: Any) -> Proposal:
        payload = approval.payload
        title = str(payload.get("title") or extra.pop("title", "") or "").strip()
        if not title:
            raise ValidationError(f"approval {approval.id} has no title to propose")
        return Proposal(
            kind=kind,
            project_id=str(approval.project_id),
            title=title,
            files=files_payload(payload.get("files") or []),
            author=approval.agent,
            session_id=approval.session_id,
            **extra,
        )

    def _infra(self, approval: Approval) -> Proposal:
        return self._proposal(approval, "infra")

    def _task(self, approval: Approval) -> Proposal:
        task_id = approval.payload.get("task_id")
        if not task_id:
            raise ValidationError(f"approval {approval.id} names no task")
        proposal = self._proposal(approval, "dev", task_id=str(task_id))
        # A dev PR belongs to its task, not to a session.
        return Proposal(**{**proposal.__dict__, "session_id": None})

    def _adr(self, approval: Approval) -> Proposal:
        payload = approval.payload
        if payload.get("files"):
            task_id = payload.get("task_id")
            return self._proposal(approval, "adr", task_id=str(task_id) if task_id else None)
        # Asked before ADR PRs went through the pipeline: the approval holds the text only.
        return adr_proposal(
            self.pipeline,
            project_id=str(approval.project_id),
            session_id=approval.session_id,
            author=approval.agent,
            title=str(payload.get("title") or ""),
            content=str(payload.get("content") or ""),
            slug=payload.get("slug"),
        )
