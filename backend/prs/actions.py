"""The operator's actions and reads on a PR of any kind: one set for infra, dev and adr.

Approve merges the PR's branch into ``main`` with real git (only from ``awaiting_human``;
one operator wins); reject (a reason is required) sends it back to its author, who
corrects on the same branch/PR; close ends it; unblock gives a blocked PR a fresh round
of corrections. Every move goes through :func:`next_gate_status`.
"""

from __future__ import annotations

from typing import Any

from backend.events import EventType
from backend.exceptions import ConflictError, ValidationError
from backend.gates.state import GateEvent, next_gate_status
from backend.prs import separation
from backend.prs.flow import GATES, PrFlow, gates_key
from backend.prs.gating import IN_GATE
from backend.prs.git import DEFAULT_BRANCH
from backend.prs.kinds import rules_for
from backend.prs.records import Finding, HistoryEntry, PrKind, PullRequest


class PrPipeline(PrFlow):
    """:class:`PrFlow` plus the operator's actions and the reads of the HTTP API."""

    # -- operator actions ------------------------------------------------------------------

    def approve(
        self,
        pr_id: str,
        operator: str,
        reason: str | None = None,
        *,
        principal: str | None = None,
    ) -> PullRequest:
        """Approve the PR; its last required approval merges it into ``main`` (only from
        ``awaiting_human``). A kind needing N approvals (``required_approvals``) merges on
        the N-th by a different person at the same head; until then the approval is
        recorded on the timeline and the PR stays ``awaiting_human``.

        Args:
            operator: the name the request acts in.
            principal: who its token authenticates, when that is not ``operator`` (the
                bootstrap token acting in another name): the person the approval counts,
                records and names (the merge, ``<kind>.pr_merged``).

        Raises:
            ForbiddenError: ``operator`` or ``principal`` authored the PR.
            ConflictError: not awaiting_human, the principal already approved this head,
                another operator acted first, or the merge conflicts (then nothing
                changes, in git or in the database).
        """
        named = _required(operator, "operator")
        operator = principal or named
        pr = self.prs.get(pr_id)
        separation.check_approver(pr, named)
        separation.check_approver(pr, operator)
        rules = rules_for(pr.kind)
        move = next_gate_status(pr.state, GateEvent.approve(reason), self.limit)
        needed = separation.required_for(self.settings.required_approvals, pr.kind)
        git = self.git(pr.project_id)
        who = operator if named == operator else f"{operator} (as {named})"
        note = f"approved by {who}" + (f": {reason}" if reason else "")
        with self.db.transaction() as tx:
            given = separation.record(tx, pr, operator, reason, needed)
            pr = self.prs.current(tx, pr_id)
            if pr.gate_status != "awaiting_human" or not given.enough:
                # Not the last approval (or the PR moved since it was read: the conditional
                # UPDATE below would refuse it; here the approval simply does not stand).
                if pr.gate_status != "awaiting_human":
                    raise ConflictError(f"{pr_id} is no longer awaiting_human", key=pr_id)
                self.prs.note(tx, pr, operator, f"{given.text()}: {note}")
                return pr
            # The conditional UPDATE comes first: the loser of a race stops here, before
            # git; a failing merge rolls the row back.
            self.prs.transition(tx, pr, move.state, actor=operator, note=note)
            git.merge(pr.branch, DEFAULT_BRANCH, rules.merge_message(pr, operator))
            emits = self.change_emits(rules, pr, move, f"approved by {operator}", None)
            events = self.append(tx, pr, [*emits, *rules.merged(pr, operator)])
        self.events.publish(events)
        return self.prs.get(pr_id)

    def approval_count(self, pr: PullRequest) -> separation.ApprovalCount:
        """Who approved ``pr`` at its head, and how many approvals its kind needs."""
        needed = separation.required_for(self.settings.required_approvals, pr.kind)
        with self.db.transaction(write=False) as tx:
            return separation.count(tx, pr, needed)

    def reject(self, pr_id: str, operator: str, reason: str) -> PullRequest:
        """Send the PR back to its author with a reason (required); it corrects on the PR."""
        reason = _required(reason, "reason")
        finding: Finding = {
            "tool": "operator",
            "rule": "rejected",
            "file": "",
            "line": None,
            "severity": "error",
            "message": reason,
            "gate": "human",
        }
        pr = self._operator(pr_id, GateEvent.reject(reason), operator, reason, [finding])
        if self.auto and pr.gate_status == "changes_requested":
            self.start_gates(pr_id)
        return pr

    def close(self, pr_id: str, operator: str, reason: str | None = None) -> PullRequest:
        """Close the PR for good (from any state but merged/closed)."""
        return self._operator(pr_id, GateEvent.close(reason), operator, reason)

    def unblock(self, pr_id: str, operator: str, reason: str | None = None) -> PullRequest:
        """Give a blocked PR a fresh round of corrections (only from ``blocked``)."""
        return self._operator(pr_id, GateEvent.unblock(reason), operator, reason)

    def _operator(
        self,
        pr_id: str,
        event: GateEvent,
        operator: str,
        reason: str | None,
        findings: list[Finding] | None = None,
    ) -> PullRequest:
        operator = _required(operator, "operator")
        pr = self.prs.get(pr_id)
        rules = rules_for(pr.kind)
        move = next_gate_status(pr.state, event, self.limit)
        note = f"{event.kind} by {operator}" + (f": {reason}" if reason else "")
        with self.db.transaction() as tx:
            self.prs.transition(tx, pr, move.state, actor=operator, note=note, findings=findings)
            events = self.append(tx, pr, self.change_emits(rules, pr, move, note, None))
        self.events.publish(events)
        return self.prs.get(pr_id)

    # -- reads -----------------------------------------------------------------------------

    def get(self, pr_id: str) -> PullRequest:
        """The PR (:class:`NotFoundError` when unknown)."""
        return self.prs.get(pr_id)

    def open_prs(
        self, project_id: str | None = None, kind: PrKind | None = None
    ) -> list[PullRequest]:
        """PRs not merged or closed, oldest first (of one project or kind, or all)."""
        return self.prs.in_review(project_id, kind)

    def files(self, pr_id: str) -> dict[str, Any]:
        """The PR's files at its head and the unified diff against ``main``."""
        pr = self.prs.get(pr_id)
        git = self.git(pr.project_id)
        contents = git.read_files(pr.head, list(pr.files))
        return {
            "pr_action_id": pr_id,
            "kind": pr.kind,
            "branch": pr.branch,
            "head": pr.head,
            "base": DEFAULT_BRANCH,
            "files": [{"path": p, "content": c} for p, c in sorted(contents.items())],
            "diff": (
                git.merged_diff(DEFAULT_BRANCH, pr.head)
                if pr.gate_status == "merged"
                else git.diff(DEFAULT_BRANCH, pr.head)
            ),
        }

    def findings(self, pr_id: str) -> list[Finding]:
        """The latest findings (what the author is asked to fix)."""
        return [dict(f) for f in self.prs.get(pr_id).findings]

    def timeline(self, pr_id: str) -> list[HistoryEntry]:
        """Every gate move with its actor, oldest first."""
        self.prs.get(pr_id)
        return self.prs.history(pr_id)

    # -- gate jobs ---------------------------------------------------------------------------

    def rerun(self, pr_id: str, operator: str, reason: str | None = None) -> PullRequest:
        """Queue the gates of a PR waiting in a gate again (stuck or not) and run them.

        Raises:
            NotFoundError: no such PR.
            ConflictError: the PR is not ``awaiting_qa`` / ``awaiting_secops``.
        """
        operator = _required(operator, "operator")
        pr = self.prs.get(pr_id)
        if pr.gate_status not in IN_GATE:
            raise ConflictError(
                f"no gate to re-run while {pr.gate_status}",
                pr_action_id=pr_id,
                status=pr.gate_status,
            )
        before = self.jobs.latest(gates_key(pr_id))
        payload = {
            "pr_action_id": pr_id,
            "kind": pr.kind,
            "gate_status": pr.gate_status,
            "operator": operator,
            "reason": reason,
            "job_status": before.state if before else None,
            "job_error": before.last_error if before else None,
        }
        if before is not None and before.state == "dead":
            self.jobs.rerun(before.id)  # the dead job itself, so it leaves the inbox
        else:
            self.jobs.enqueue(GATES, {"pr_id": pr_id}, unique_key=gates_key(pr_id), again=True)
        self.events.append(
            EventType.PR_GATES_RERUN,
            payload,
            project_id=pr.project_id,
            session_id=pr.session_id,
        )
        return self.prs.get(pr_id)


def _required(value: str | None, what: str) -> str:
    if value is None or not value.strip():
        raise ValidationError(f"{what} is required and must not be empty")
    return value.strip()
