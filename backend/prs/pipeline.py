"""The Infra agent's entry points into the one PR pipeline (ADR 0014 decisions 3 and 4).

``propose_infra_pr`` goes through :func:`decide`; the first call of a session opens a PR
(kind ``infra``) on a branch of its own, any later call in the same session is a
correction on the same PR. :class:`InfraPipeline` is the whole
:class:`~backend.prs.actions.PrPipeline` plus these entry points, so one backend runs one
pipeline.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from backend.agents.store import new_id
from backend.exceptions import CadenciaError, ConflictError, ValidationError
from backend.prs.actions import PrPipeline
from backend.prs.gating import files_payload
from backend.prs.kinds import INFRA_AGENT, INFRA_BRANCH
from backend.prs.proposals import Proposal, ProposalResult
from backend.prs.records import PullRequest


class InfraPipeline(PrPipeline):
    """The PR pipeline with the Infra agent's tool behind it.

    ``propose_infra_pr``'s first call of a session creates its branch from ``main``
    (``feature/infra-setup`` for the project's first session,
    ``feature/infra-setup-<session id>`` for every later one), commits every file in ONE
    commit, opens the PR and inserts it (kind ``infra``) in ``awaiting_qa``. Any later call in
    the same session is a correction: one more commit on the SAME branch and PR, no new row
    (files identical to the PR's head are refused as "no change") — the Infra agent uses the
    same tool either way and the difference lives in :class:`~backend.prs.flow.PrFlow`.

    It is the whole :class:`~backend.prs.actions.PrPipeline` (gates, corrections, operator
    actions for every kind) plus these entry points.
    """

    def propose_infra_pr(
        self,
        project_id: str,
        session_id: str,
        title: str,
        files: Sequence[Mapping[str, Any]] | Mapping[str, str],
        agent: str = INFRA_AGENT,
    ) -> ProposalResult:
        """Open the session's infra PR, or commit a correction on it.

        Raises:
            ValidationError: bad title/files, or a project without a repository.
            PathError: a path that could escape the repository; nothing is written.
            ConflictError: ``decide()`` denied the action, the PR is not in
                ``changes_requested`` for a correction.
            NotFoundError: unknown project or session.
        """
        if not title.strip():
            raise ValidationError("a PR needs a title")
        self.store.project(project_id)
        if self.store.session(session_id)["project_id"] != project_id:
            raise ValidationError(f"session {session_id} is not in project {project_id}")
        proposal = Proposal(
            kind="infra",
            project_id=project_id,
            title=title.strip(),
            files={},
            author=agent,
            session_id=session_id,
        )
        try:
            payload = files_payload(files)
        except CadenciaError as exc:
            existing = self.prs.infra_of_session(session_id)
            self.report_failure(proposal, existing.id if existing else new_id("act"), exc)
            raise
        return self.propose(replace(proposal, files=payload))

    def run_until_settled(
        self,
        project_id: str,
        session_id: str,
        title: str,
        files: Sequence[Mapping[str, Any]] | Mapping[str, str],
        agent: str = INFRA_AGENT,
    ) -> PullRequest:
        """Propose, then settle the gates and corrections (the demo and the tests)."""
        result = self.propose_infra_pr(project_id, session_id, title, files, agent)
        if result.artifact is None:
            raise ConflictError(
                f"the proposal is {result.status}, not opened", approval_id=result.approval_id
            )
        if self.auto:
            self.wait_gates()
            return self.prs.get(result.artifact.id)
        return self.settle(result.artifact.id)

    def in_review(self, project_id: str | None = None) -> list[PullRequest]:
        """Infra PRs not merged or closed (the Approvals tab's ``infra_prs``)."""
        return self.open_prs(project_id, "infra")


__all__ = ["INFRA_AGENT", "INFRA_BRANCH", "InfraPipeline", "ProposalResult"]
