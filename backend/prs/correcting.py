"""Corrections of a PR, a collaborator of :class:`backend.prs.flow.PrFlow`: who corrects,
and when the loop stops.

The findings go to the PR's author (a model turn when it is on a model, else the
rule-based fixer through the PR's kind), and the files go through :meth:`PrFlow.propose`
on the same branch/PR. :meth:`Corrections.settle` alternates gates and corrections and
stops instead of spinning; :class:`Corrections` gives the rules.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from backend.events import Event, EventLog, EventType
from backend.exceptions import ConflictError, NotFoundError
from backend.prs.authoring import (
    NO_CHANGE,
    AuthorTurn,
    CorrectionAuthor,
    CorrectionRequest,
    same_files,
)
from backend.prs.git import GitProvider
from backend.prs.kinds import Emit, Fixer, emit, rules_for
from backend.prs.proposals import SETTLED, Proposal, ProposalResult
from backend.prs.records import PullRequest, PullRequests
from backend.store.db import Database, Tx


class Flow(Protocol):
    """What corrections need of the PR flow: its stores, its author and fixer, proposing,
    the gates, and reading a PR's files."""

    prs: PullRequests
    db: Database
    events: EventLog
    author: CorrectionAuthor | None
    fixer: Fixer

    @property
    def limit(self) -> int: ...
    def propose(self, proposal: Proposal) -> ProposalResult: ...
    def run_gates(self, pr_id: str) -> PullRequest: ...
    def read(self, pr: PullRequest) -> dict[str, str]: ...
    def git(self, project_id: str) -> GitProvider: ...
    def append(self, tx: Tx, pr: PullRequest, emits: Sequence[Emit]) -> list[Event]: ...


class Corrections:
    """The corrections of ``flow``'s PRs.

    :meth:`correct` hands the findings (an operator's reason among them) to the PR's author:
    a model turn through the flow's :data:`~backend.prs.authoring.CorrectionAuthor` when the
    author is on a model, else the rule-based fixer the flow was given, through the PR's kind
    (which may decline it). Either way the files go through :meth:`PrFlow.propose`, which
    commits on the same branch/PR, or refuses a correction with no diff (:meth:`no_change`:
    not committed, not counted). :meth:`settle` alternates gates and corrections and stops on
    a settled PR, a correction waiting for approval, or one that changed nothing (instead of
    spinning).
    """

    def __init__(self, flow: Flow) -> None:
        self.flow = flow

    def correct(self, pr_id: str) -> ProposalResult:
        """The author fixes what the findings (and an operator's reason) name, and proposes
        again on the same PR: a model turn when the author is on a model, else the rules.

        Returns:
            ``corrected`` (a commit with a diff), ``pending`` (``decide()`` asked) or
            ``unchanged`` (nothing to commit: not counted, the PR stays ``changes_requested``).
        """
        pr = self.flow.prs.get(pr_id)
        if pr.gate_status != "changes_requested":
            raise ConflictError(f"nothing to correct while {pr.gate_status}")
        rules = rules_for(pr.kind)
        files = self.flow.read(pr)
        # An operator waived these on this PR: the author must not "fix" them away.
        findings = [f for f in pr.findings if not f.get("waived")]
        turn: AuthorTurn | None = None
        if self.flow.author is not None and rules.author_tool is not None:
            turn = self.flow.author(CorrectionRequest(pr, files, findings, rules.author_tool))
        if turn is None:
            fixed = rules.correct(files, findings, self.flow.fixer)
            proposal = Proposal(
                kind=pr.kind,
                project_id=pr.project_id,
                title=pr.title,
                files=fixed,
                author=pr.author,
                session_id=pr.session_id,
                task_id=pr.task_id,
            )
            return self.flow.propose(proposal)
        return self._after_turn(pr, turn)

    def _after_turn(self, before: PullRequest, turn: AuthorTurn) -> ProposalResult:
        # The model's tool calls went through propose(); what the PR looks like now says
        # what they did. A turn that committed nothing is a "no change" like any other.
        pr = self.flow.prs.get(before.id)
        statuses = turn.statuses()
        if pr.head != before.head:
            return ProposalResult("corrected", None, pr)
        if "pending" in statuses:
            return ProposalResult("pending", None, pr)
        if "unchanged" not in statuses and pr.gate_status == "changes_requested":
            why = "; ".join(turn.errors()) or "the author proposed no files"
            pr = self.no_change(pr, pr.author, why)
        return ProposalResult("unchanged", None, pr)

    def settle(self, pr_id: str) -> PullRequest:
        """Gates → (changes_requested → correct → gates)* until awaiting_human or blocked;
        it stops where a correction waits for approval or changed nothing."""
        pr = self.flow.prs.get(pr_id)
        for _ in range(4 * (self.flow.limit + 2)):
            if pr.gate_status in SETTLED:
                return pr
            if pr.gate_status == "changes_requested":
                if self.correct(pr_id).status != "corrected":
                    return self.flow.prs.get(pr_id)
                pr = self.flow.prs.get(pr_id)
            else:
                before = pr.state
                pr = self.flow.run_gates(pr_id)
                if pr.state == before:  # a skipped gate: running again will not help
                    return pr
        return pr

    def no_change(self, pr: PullRequest, author: str, detail: str) -> PullRequest:
        """Record a correction with no diff: a note and an event, no commit, no count."""
        with self.flow.db.transaction() as tx:
            self.flow.prs.transition(tx, pr, pr.state, actor=author, note=f"{NO_CHANGE}: {detail}")
            payload = {
                "pr_action_id": pr.id,
                "kind": pr.kind,
                "task_id": pr.task_id,
                "detail": detail,
            }
            unchanged = emit(EventType.PR_CORRECTION_UNCHANGED, payload, author)
            events = self.flow.append(tx, pr, [unchanged])
        self.flow.events.publish(events)
        return self.flow.prs.get(pr.id)

    def same_as_head(self, pr: PullRequest, files: dict[str, str]) -> bool:
        """Whether a correction's files are already the PR's head (a \"no change\")."""
        if pr.gate_status != "changes_requested":
            return False  # not a correction: the state machine answers
        try:
            current = self.flow.git(pr.project_id).read_files(pr.head, sorted(files))
        except NotFoundError:
            return False  # a new file is a change
        return same_files(current, files)
