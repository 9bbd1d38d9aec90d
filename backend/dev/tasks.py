"""Dev tasks, and their PRs through the one PR pipeline (kind ``dev``).

A ``dev-<module>`` agent's task gets its own branch ``feature/task-<id>``; its first
proposal opens the PR, later ones are corrections on the same branch. Everything after the
proposal is the shared :class:`~backend.prs.actions.PrPipeline`. :class:`DevTasks` gives
the events and a task's own ``status``; :func:`seed_demo_tasks` gives each module one
small task so the demo shows the dev agents working.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any, Literal, cast

from backend.agents.store import Project, TeamStore, new_id
from backend.agents.team import dev_agent_id
from backend.events import EventType, utcnow_iso
from backend.exceptions import ConflictError, NotFoundError, ValidationError
from backend.gates.scanners._base import DEFAULT_TIMEOUT_S
from backend.gates.state import GateStatus, GateSubjectState
from backend.prs.actions import PrPipeline
from backend.prs.gating import agent_at_work, files_payload
from backend.prs.git import DEFAULT_BRANCH, GitProvider
from backend.prs.proposals import GateName, Proposal, VerdictValue
from backend.prs.records import Finding, HistoryEntry, PullRequest
from backend.settings import Settings
from backend.store.db import Row

TaskStatus = Literal["todo", "working", "in_review", "done", "blocked", "closed"]
StoredStatus = Literal["todo", "working", "in_review", "done", "blocked"]


def task_status(stored: str, pr: PullRequest | None) -> TaskStatus:
    """What a task is at: ``blocked`` as stored, else what its PR says, else as stored."""
    if stored == "blocked":
        return "blocked"
    if pr is not None:
        if pr.gate_status == "merged":
            return "done"
        return "closed" if pr.gate_status == "closed" else "in_review"
    return cast(TaskStatus, stored)  # the column's CHECK holds the other values


@dataclass(frozen=True)
class DevTask:
    """A module task and, once proposed, its PR's gate state."""

    id: str
    project_id: str
    module: str
    title: str
    status: TaskStatus
    description: str | None
    story_id: str | None
    session_id: str | None
    reason: str | None
    """Why the task is blocked (or why its last run ended), in words."""
    attempts: int
    branch: str | None
    pr_action_id: str | None
    head: str | None
    files: tuple[str, ...]
    findings: tuple[Finding, ...]
    gate_status: GateStatus | None
    gate_correction_count: int
    blocked: bool
    blocked_reason: str | None
    created_at: str
    updated_at: str

    @classmethod
    def from_rows(cls, row: Row, pr: PullRequest | None) -> DevTask:
        """Build from a ``dev_tasks`` row and the task's PR (if opened)."""
        return cls(
            id=row["id"],
            project_id=row["project_id"],
            module=row["module"],
            title=row["title"],
            status=task_status(str(row["status"]), pr),
            description=row["description"],
            story_id=row["story_id"],
            session_id=row["session_id"],
            reason=row["reason"],
            attempts=int(row["attempts"] or 0),
            branch=pr.branch if pr else None,
            pr_action_id=pr.id if pr else None,
            head=pr.head if pr else None,
            files=pr.files if pr else (),
            findings=pr.findings if pr else (),
            gate_status=pr.gate_status if pr else None,
            gate_correction_count=pr.gate_correction_count if pr else 0,
            blocked=pr.blocked if pr else False,
            blocked_reason=pr.blocked_reason if pr else None,
            created_at=str(row["created_at"]),
            updated_at=pr.updated_at if pr else str(row["updated_at"]),
        )

    @property
    def agent(self) -> str:
        """The dev agent that owns the task."""
        return dev_agent_id(self.module)

    @property
    def state(self) -> GateSubjectState:
        """The gate columns; :class:`ConflictError` before the PR is opened."""
        if self.gate_status is None:
            raise ConflictError(f"task {self.id} has no PR yet", task_id=self.id)
        return GateSubjectState(self.gate_status, self.gate_correction_count, self.blocked_reason)

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        out = dict(self.__dict__)
        out.update(
            files=list(self.files), findings=[dict(f) for f in self.findings], agent=self.agent
        )
        return out


class DevTasks:
    """Dev tasks and their PRs (one pipeline with every other kind of PR).

    A task's first proposal opens the PR (gate ``awaiting_qa``), later ones are corrections
    on the same branch. Everything after the proposal — gates, corrections,
    approve/reject/close/unblock — is the shared :class:`~backend.prs.actions.PrPipeline`; the
    methods here that take a task id only find the task's PR. Events: ``dev.task_started``,
    ``pr.gate_changed``, ``artifact.qa_verdict`` / ``artifact.secops_verdict`` with
    ``task_id`` (no ``pr_action_id``: that key marks infra PRs), and ``dev.task_done``
    whenever the PR reaches ``awaiting_human``.

    A task's own ``status`` (migration 0010) is the work around its PR: ``todo`` (the PO
    created it) → ``working`` (a worker runs its agent, :mod:`backend.dev.worker`) →
    ``in_review`` (its PR is open) → ``done`` (merged), or ``blocked`` with a reason
    (``report_blocked``, or the worker gave up). A closed PR reads ``closed``.

    Args:
        store: projects, autonomy, approvals, events.
        settings: ``gate_correction_limit`` and the scanners' settings.
        pipeline: the backend's PR pipeline; without one, a private (manual) pipeline.
        permissions: ``permissions.json`` for ``decide()`` of a private pipeline.
        timeout_s: scanner limit of a private pipeline.
    """

    def __init__(
        self,
        store: TeamStore,
        settings: Settings | None = None,
        *,
        pipeline: PrPipeline | None = None,
        permissions: Any = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
    ) -> None:
        self.store = store
        self.db = store.db
        self.pipeline = pipeline or PrPipeline(
            store, settings, permissions=permissions, timeout_s=timeout_s
        )
        self.settings = self.pipeline.settings

    # -- tasks -----------------------------------------------------------------------------

    def create_task(
        self,
        project_id: str,
        module: str,
        title: str,
        *,
        description: str | None = None,
        story_id: str | None = None,
        session_id: str | None = None,
    ) -> DevTask:
        """Add a ``todo`` task for ``module`` (a module of the project's map).

        Raises:
            NotFoundError: no such project.
            ValidationError: the module is not in the map (the map's modules are named), or
                an empty title; nothing is created.
        """
        project = self.store.project(project_id)
        names = [str(m.get("name")) for m in project.modules()]
        if module not in names:
            known = ", ".join(names) or "none: the Arquiteto has not written the module map"
            raise ValidationError(
                f"module {module!r} is not in project {project_id}'s module map (modules: {known})",
                module=module,
            )
        if not title.strip():
            raise ValidationError("a task needs a title")
        ident = new_id("tsk")
        with self.db.transaction() as tx:
            tx.execute(
                "dev_task_insert",
                {
                    "id": ident,
                    "project_id": project_id,
                    "module": module,
                    "title": title.strip(),
                    "description": (description or "").strip() or None,
                    "story_id": story_id,
                    "session_id": session_id,
                    "now": utcnow_iso(),
                },
            )
        return self.get(ident)

    def set_status(self, task_id: str, status: StoredStatus, reason: str | None = None) -> DevTask:
        """Settle a task (its PR opened, or blocked with ``reason``); ``blocked`` is in the
        feed (``backlog.task_blocked``) in the same transaction."""
        task = self.get(task_id)
        params = {"id": task_id, "status": status, "reason": reason, "now": utcnow_iso()}
        with self.db.transaction() as tx:
            tx.one("dev_task_set_status", params)
            events = []
            if status == "blocked":
                payload = {"task_id": task_id, "reason": reason}
                events.append(
                    self.store.events.append_in(
                        tx,
                        EventType.BACKLOG_TASK_BLOCKED,
                        payload,
                        project_id=task.project_id,
                        session_id=task.session_id,
                        agent=task.agent,
                    )
                )
        self.store.events.publish(events)
        return self.get(task_id)

    def get(self, task_id: str) -> DevTask:
        """One task (:class:`NotFoundError` when unknown)."""
        with self.db.transaction(write=False) as tx:
            row = tx.one("dev_task_get", {"id": task_id})
        if row is None:
            raise NotFoundError(f"no dev task with id {task_id!r}", task_id=task_id)
        return DevTask.from_rows(row, self.pipeline.prs.of_task(task_id))

    def tasks(self, project_id: str) -> list[DevTask]:
        """The project's tasks, oldest first."""
        with self.db.transaction(write=False) as tx:
            rows = tx.all("dev_tasks_of_project", {"project_id": project_id})
        return [DevTask.from_rows(r, self.pipeline.prs.of_task(r["id"])) for r in rows]

    # -- the dev agent's tool --------------------------------------------------------------

    def propose_task_pr(
        self,
        task_id: str,
        files: Sequence[Mapping[str, Any]] | Mapping[str, str],
    ) -> DevTask:
        """Open the task's PR on ``feature/task-<id>``, or commit a correction on it.

        The author is always the task's ``dev-<module>`` agent: the PR's events name the
        module through it.

        Raises:
            ConflictError: ``decide()`` denied (or asked: an approval is created first),
                or a correction outside ``changes_requested``.
            ValidationError, PathError: bad files; nothing is written.
        """
        task = self.get(task_id)
        payload = files_payload(files)
        result = self.pipeline.propose(
            Proposal(
                kind="dev",
                project_id=task.project_id,
                title=task.title,
                files=payload,
                author=task.agent,
                task_id=task.id,
            )
        )
        if result.status == "pending":
            raise ConflictError(
                f"propose_task_pr waits for approval {result.approval_id}",
                approval_id=result.approval_id,
            )
        return self.get(task_id)

    # -- the task's PR in the shared pipeline ------------------------------------------------

    def pr_of(self, task_id: str) -> str:
        """The id of the task's PR.

        Raises:
            NotFoundError: unknown task.
            ConflictError: the task has no PR yet.
        """
        pr_id = self.get(task_id).pr_action_id
        if pr_id is None:
            raise ConflictError(f"task {task_id} has no PR yet", task_id=task_id)
        return pr_id

    def record_verdict(
        self,
        task_id: str,
        gate: GateName,
        verdict: VerdictValue,
        findings: Sequence[Finding] = (),
        reason: str | None = None,
    ) -> DevTask:
        """Record one gate's verdict on the task's PR (see :meth:`PrFlow.record_verdict`)."""
        self.pipeline.record_verdict(self.pr_of(task_id), gate, verdict, findings, reason)
        return self.get(task_id)

    def run_gates(self, task_id: str) -> DevTask:
        """QA then (after a pass) SecOps on the task's files at its head."""
        self.pipeline.run_gates(self.pr_of(task_id))
        return self.get(task_id)

    def settle(self, task_id: str) -> DevTask:
        """Gates and corrections until ``awaiting_human``/``blocked`` (or a skipped gate)."""
        self.pipeline.settle_now(self.pr_of(task_id))
        return self.get(task_id)

    def approve(self, task_id: str, operator: str, reason: str | None = None) -> DevTask:
        """Merge the task PR into ``main`` (only from ``awaiting_human``; one operator wins)."""
        self.pipeline.approve(self.pr_of(task_id), operator, reason)
        return self.get(task_id)

    def reject(self, task_id: str, operator: str, reason: str) -> DevTask:
        """Send the task PR back to its dev agent (a reason is required)."""
        if not reason or not reason.strip():
            raise ValidationError("a reason is required to reject")
        self.pipeline.reject(self.pr_of(task_id), operator, reason)
        return self.get(task_id)

    def timeline(self, task_id: str) -> list[HistoryEntry]:
        """The task PR's gate moves, oldest first."""
        return self.pipeline.timeline(self.pr_of(task_id))

    def git_for(self, task: DevTask) -> GitProvider:
        """The git provider of the task's project repository."""
        return self.pipeline.git(task.project_id)


def demo_files(project: Project, task: DevTask, git: GitProvider) -> dict[str, str]:
    """The scripted dev agent's change for a demo task: one line in the module's README."""
    path = next(
        (str(m.get("path") or ".") for m in project.modules() if m.get("name") == task.module), "."
    )
    readme = (PurePosixPath(path) / "README.md").as_posix() if path != "." else "README.md"
    try:
        current = git.read_files(DEFAULT_BRANCH, [readme])[readme]
    except NotFoundError:
        current = f"# {task.module}\n"
    line = f"- {task.title} (by {task.agent})\n"
    return {readme: current if line in current else current.rstrip("\n") + "\n\n" + line}


def seed_demo_tasks(dev_tasks: DevTasks, project: Project) -> list[DevTask]:
    """Give each ``dev-<module>`` of ``project`` one small task (idempotent per module)."""
    existing = {t.module for t in dev_tasks.tasks(project.id)}
    created = []
    for module in project.modules():
        name = str(module.get("name"))
        if name not in existing:
            created.append(
                dev_tasks.create_task(project.id, name, f"Document how to run {name} locally")
            )
    return created


def run_demo_task(dev_tasks: DevTasks, task_id: str) -> DevTask:
    """The scripted dev agent works one demo task: propose its change, then settle the gates."""
    task = dev_tasks.get(task_id)
    project = dev_tasks.store.project(task.project_id)
    with agent_at_work(
        dev_tasks.store.events, task.agent, task.project_id, f"working on {task.title}"
    ):
        files = demo_files(project, task, dev_tasks.git_for(task))
        dev_tasks.propose_task_pr(task_id, files)
    return dev_tasks.settle(task_id)


__all__ = [
    "DevTask",
    "DevTasks",
    "GateStatus",
    "TaskStatus",
    "demo_files",
    "run_demo_task",
    "seed_demo_tasks",
]
