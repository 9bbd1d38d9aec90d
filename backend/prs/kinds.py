"""What differs between kinds of PR, behind one small strategy per kind.

The flow (:class:`backend.prs.flow.PrFlow`) is the same for every kind: ``decide()``,
commit on the PR's branch, the gates through the shared state machine, corrections on the
same branch/PR, the operator's actions. A :class:`KindRules` only answers the questions
whose answers differ: the ``decide()`` action, the branch, commit and merge messages, how
the author corrects what the findings name, and the events' names and payloads. The event
types and payloads are the ones the console, the roster and the activity feed already
read: infra PRs are named by ``pr_action_id`` (ADR 0014 §6), dev PRs by ``task_id``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from backend.agents.policy import ActionType
from backend.agents.team import DEV_PREFIX
from backend.events import EventType
from backend.exceptions import ConflictError, ValidationError
from backend.gates.state import Transition
from backend.prs.git import DEFAULT_BRANCH, GitProvider
from backend.prs.records import Finding, PrKind, PullRequest, PullRequests

INFRA_AGENT = "infra"
INFRA_BRANCH = "feature/infra-setup"

Fixer = Callable[[dict[str, str], list[Finding]], dict[str, str]]
"""The rule-based fixer: ``(files, findings) -> corrected files``. The pipeline is given
one (the planner's ``correct``) and hands it to the kind; no kind imports a planner."""


@dataclass(frozen=True)
class Emit:
    """One event to append: its type, payload and acting agent."""

    type: EventType
    payload: dict[str, Any]
    agent: str | None


def emit(type: EventType, payload: dict[str, Any], agent: str | None) -> Emit:
    """One event for the flow to append (a named emitter, so event-name checks see it)."""
    return Emit(type, payload, agent)


class KindRules(ABC):
    """The per-kind answers; the base holds what kinds share."""

    kind: ClassVar[PrKind]
    action: ClassVar[ActionType]
    changed_type: ClassVar[EventType]
    author_tool: ClassVar[str | None] = None
    """The tool the author proposes with when a model writes its corrections (``None``:
    this kind's corrections always come from the rule-based fixer)."""

    @abstractmethod
    def branch(self, *, task_id: str | None) -> str:
        """The branch a new PR of this kind is opened on."""

    def branch_for(
        self, *, task_id: str | None, session_id: str | None, taken: Callable[[str], bool]
    ) -> str:
        """The branch for a new PR, given which branches already exist (``taken``)."""
        return self.branch(task_id=task_id)

    def create_branch(
        self, git: GitProvider, *, task_id: str | None, session_id: str | None
    ) -> tuple[str, str]:
        """Create the new PR's branch from ``main``; returns ``(branch, base sha)``.

        Raises:
            ConflictError: the branch exists and this kind has no other to offer.
        """
        branch = self.branch_for(task_id=task_id, session_id=session_id, taken=git.branch_exists)
        try:
            return branch, git.create_branch(branch, DEFAULT_BRANCH)
        except ConflictError:
            # Another session took it between the check and the create: take the next one.
            again = self.branch_for(task_id=task_id, session_id=session_id, taken=git.branch_exists)
            if again == branch:
                raise
            return again, git.create_branch(again, DEFAULT_BRANCH)

    @abstractmethod
    def existing(
        self, prs: PullRequests, *, session_id: str | None, task_id: str | None
    ) -> PullRequest | None:
        """The open PR a new proposal corrects (ADR 0014: corrections reuse the PR)."""

    @abstractmethod
    def approval_payload(
        self, title: str, files: dict[str, str], task_id: str | None
    ) -> dict[str, Any]:
        """What the approval a ``decide()`` "ask" creates shows the maintainer."""

    @abstractmethod
    def ref(self, pr: PullRequest) -> dict[str, Any]:
        """The payload keys that name the PR in its events."""

    def verdict_ref(self, pr: PullRequest) -> dict[str, Any]:
        """The keys naming the PR in ``artifact.<gate>_verdict`` events."""
        return self.ref(pr)

    @abstractmethod
    def label(self, pr: PullRequest) -> str:
        """How the QA/SecOps roster detail names the PR (``infra PR act_…``)."""

    @abstractmethod
    def commit_message(self, pr_id: str, title: str, task_id: str | None) -> str:
        """The message of the PR's first commit."""

    @abstractmethod
    def merge_message(self, pr: PullRequest, operator: str) -> str:
        """The message of the merge commit on ``main``."""

    @abstractmethod
    def opened(self, pr: PullRequest) -> list[Emit]:
        """Events of a PR that was just opened."""

    def corrected(self, pr: PullRequest, paths: list[str], number: int) -> list[Emit]:
        """Events of a correction committed on the same branch/PR (besides the move)."""
        return []

    def reached(self, pr: PullRequest, move: Transition) -> list[Emit]:
        """Events besides ``changed_type`` when a move lands in ``move.state.status``."""
        return []

    def merged(self, pr: PullRequest, operator: str) -> list[Emit]:
        """Events of a merge (besides the move)."""
        return []

    def proposal_failed(self, pr_id: str, error: str, author: str) -> Emit | None:
        """The event for a proposal that failed before or while committing."""
        return None

    @abstractmethod
    def job_failed(self, pr: PullRequest | None, pr_id: str, error: str) -> Emit | None:
        """The event for a background gate run that crashed."""

    def correct(
        self, files: dict[str, str], findings: list[Finding], fixer: Fixer
    ) -> dict[str, str]:
        """The offline author's correction of ``files`` for ``findings``: ``fixer``'s."""
        return fixer(files, [dict(f) for f in findings])

    def changed(self, pr: PullRequest, move: Transition, reason: str, agent: str | None) -> Emit:
        """The ``<kind>.gate_changed`` event of a status move."""
        return emit(
            self.changed_type,
            {
                **self.ref(pr),
                "from_status": move.previous.status,
                "gate_status": move.state.status,
                "reason": reason,
            },
            agent,
        )


class InfraRules(KindRules):
    """The Infra agent's PR: one per session, the project's first on ``feature/infra-setup``,
    every later session's on ``feature/infra-setup-<session id>`` (ADR 0014: one infra PR
    cycle per session; an earlier session's branch, merged or not, stays its own)."""

    kind = "infra"
    action = "open_infra_pr"
    changed_type = EventType.INFRA_GATE_CHANGED
    author_tool = "propose_infra_pr"

    def branch(self, *, task_id: str | None) -> str:
        return INFRA_BRANCH

    def branch_for(
        self, *, task_id: str | None, session_id: str | None, taken: Callable[[str], bool]
    ) -> str:
        if not taken(INFRA_BRANCH):
            return INFRA_BRANCH
        if not session_id:
            raise ValidationError("an infra PR belongs to a session")
        return f"{INFRA_BRANCH}-{session_id}"

    def existing(
        self, prs: PullRequests, *, session_id: str | None, task_id: str | None
    ) -> PullRequest | None:
        if not session_id:
            raise ValidationError("an infra PR belongs to a session")
        return prs.infra_of_session(session_id)

    def approval_payload(
        self, title: str, files: dict[str, str], task_id: str | None
    ) -> dict[str, Any]:
        return {"title": title, "files": [{"path": p, "content": c} for p, c in files.items()]}

    def ref(self, pr: PullRequest) -> dict[str, Any]:
        return {"pr_action_id": pr.id}

    def verdict_ref(self, pr: PullRequest) -> dict[str, Any]:
        return {"pr_action_id": pr.id, "task_id": None}

    def label(self, pr: PullRequest) -> str:
        return f"infra PR {pr.id}"

    def commit_message(self, pr_id: str, title: str, task_id: str | None) -> str:
        return f"{title}\n\nInfra PR {pr_id}"

    def merge_message(self, pr: PullRequest, operator: str) -> str:
        return f"Merge infra PR {pr.id}: {pr.title}\n\nApproved by {operator}"

    def opened(self, pr: PullRequest) -> list[Emit]:
        payload = {
            "pr_action_id": pr.id,
            "branch": pr.branch,
            "paths": list(pr.files),
            "pr_url": pr.pr_url,
            "gate_status": pr.gate_status,
        }
        return [emit(EventType.INFRA_PR_OPENED, payload, pr.author)]

    def corrected(self, pr: PullRequest, paths: list[str], number: int) -> list[Emit]:
        payload = {"pr_action_id": pr.id, "paths": paths, "correction": number}
        return [emit(EventType.INFRA_PR_CORRECTED, payload, pr.author)]

    def reached(self, pr: PullRequest, move: Transition) -> list[Emit]:
        if move.state.status != "blocked":
            return []
        payload = {"pr_action_id": pr.id, "reason": move.state.blocked_reason}
        return [emit(EventType.INFRA_ARTIFACT_BLOCKED, payload, None)]

    def merged(self, pr: PullRequest, operator: str) -> list[Emit]:
        return [
            emit(EventType.INFRA_PR_MERGED, {"pr_action_id": pr.id, "operator": operator}, None)
        ]

    def proposal_failed(self, pr_id: str, error: str, author: str) -> Emit | None:
        return emit(EventType.INFRA_PR_FAILED, {"pr_action_id": pr_id, "error": error}, author)

    def job_failed(self, pr: PullRequest | None, pr_id: str, error: str) -> Emit | None:
        payload = {"pr_action_id": pr_id, "error": f"gate run failed: {error}"}
        return emit(EventType.INFRA_PR_FAILED, payload, "qa")


class DevRules(KindRules):
    """A ``dev-<module>`` agent's task PR on ``feature/task-<task id>``."""

    kind = "dev"
    action = "propose_task_pr"
    changed_type = EventType.PR_GATE_CHANGED
    author_tool = "propose_task_pr"

    def branch(self, *, task_id: str | None) -> str:
        if not task_id:
            raise ValidationError("a dev PR belongs to a task")
        return f"feature/task-{task_id}"

    def create_branch(
        self, git: GitProvider, *, task_id: str | None, session_id: str | None
    ) -> tuple[str, str]:
        # The task's worktree (backend.dev.worktrees) made the branch from main before
        # its agent proposed anything: the PR opens on it.
        branch = self.branch(task_id=task_id)
        if git.branch_exists(branch):
            return branch, git.head(f"refs/heads/{branch}")
        return branch, git.create_branch(branch, DEFAULT_BRANCH)

    def existing(
        self, prs: PullRequests, *, session_id: str | None, task_id: str | None
    ) -> PullRequest | None:
        if not task_id:
            raise ValidationError("a dev PR belongs to a task")
        return prs.of_task(task_id)

    def approval_payload(
        self, title: str, files: dict[str, str], task_id: str | None
    ) -> dict[str, Any]:
        # The files too: approving the proposal executes it (backend.prs.decisions).
        files_out = [{"path": p, "content": c} for p, c in sorted(files.items())]
        return {"task_id": task_id, "title": title, "paths": sorted(files), "files": files_out}

    def ref(self, pr: PullRequest) -> dict[str, Any]:
        return {"task_id": pr.task_id}

    def label(self, pr: PullRequest) -> str:
        return f"dev PR {pr.task_id}"

    def commit_message(self, pr_id: str, title: str, task_id: str | None) -> str:
        return f"{title}\n\nTask {task_id}"

    def merge_message(self, pr: PullRequest, operator: str) -> str:
        return f"Merge task {pr.task_id}: {pr.title}\n\nApproved by {operator}"

    def opened(self, pr: PullRequest) -> list[Emit]:
        task = {"task_id": pr.task_id, "title": pr.title, "module": _module(pr)}
        opened = {
            "task_id": pr.task_id,
            "from_status": None,
            "gate_status": pr.gate_status,
            "reason": "PR opened",
        }
        return [
            emit(EventType.DEV_TASK_STARTED, task, pr.author),
            emit(self.changed_type, opened, pr.author),
        ]

    def reached(self, pr: PullRequest, move: Transition) -> list[Emit]:
        task = {"task_id": pr.task_id}
        if move.state.status == "awaiting_human":
            # The dev's part is done; the operator merges.
            done = {**task, "title": pr.title, "module": _module(pr)}
            return [emit(EventType.DEV_TASK_DONE, done, pr.author)]
        if move.state.status == "blocked":
            blocked = {**task, "reason": move.state.blocked_reason}
            return [emit(EventType.BACKLOG_TASK_BLOCKED, blocked, pr.author)]
        return []

    def job_failed(self, pr: PullRequest | None, pr_id: str, error: str) -> Emit | None:
        if pr is None:
            return None
        payload = {"task_id": pr.task_id, "reason": f"gate run failed: {error}"}
        return emit(EventType.BACKLOG_TASK_BLOCKED, payload, pr.author)


def _module(pr: PullRequest) -> str:
    # The author of a dev PR is its module's agent, ``dev-<module>``.
    return pr.author.removeprefix(DEV_PREFIX)


RULES: dict[PrKind, KindRules] = {"infra": InfraRules(), "dev": DevRules()}


def rules_for(kind: PrKind) -> KindRules:
    """The strategy of ``kind``.

    Raises:
        ValidationError: a kind whose PRs have no flow in this backend yet.
    """
    try:
        return RULES[kind]
    except KeyError:
        raise ValidationError(f"no PR flow for kind {kind!r}", kind=kind) from None
