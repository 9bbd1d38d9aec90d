"""Dev task PRs: the same state machine and gate runner as infra PRs.

A ``dev-<module>`` agent's task gets its own branch ``feature/task-<id>``; its first
proposal opens the PR (gate ``awaiting_qa``), later ones are corrections on the same
branch. Events: ``dev.task_started``, ``pr.gate_changed``, ``artifact.qa_verdict`` /
``artifact.secops_verdict`` with ``task_id`` (no ``pr_action_id``: that key marks infra
PRs), and ``dev.task_done`` whenever the PR reaches ``awaiting_human`` (the dev's part is
done; the operator merges). :func:`seed_demo_tasks` gives each module one small task so
the demo shows the dev agents working.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any, cast

from backend.agents.policy import decide
from backend.agents.store import Project, TeamStore, new_id
from backend.agents.team import dev_agent_id
from backend.events import Event, utcnow_iso
from backend.exceptions import ConflictError, NotFoundError, ValidationError
from backend.gates.runner import GateResult, run_qa, run_secops
from backend.gates.scanners._base import DEFAULT_TIMEOUT_S
from backend.gates.state import (
    GateEvent,
    GateStatus,
    GateSubjectState,
    Transition,
    next_gate_status,
)
from backend.gates.verdicts import verdict_event
from backend.infra import planner
from backend.infra.artifacts import (
    Finding,
    HistoryEntry,
    add_history,
    apply_transition,
    read_history,
)
from backend.infra.gate_jobs import (
    BackgroundJobs,
    GateJob,
    agent_at_work,
    drop_branch,
    files_payload,
    gate_findings,
)
from backend.infra.git import DEFAULT_BRANCH, GitProvider
from backend.infra.pipeline import SETTLED, GateName, VerdictValue
from backend.settings import Settings, load_settings
from backend.store.db import Row, Tx, dumps, loads

_QUERY = "dev_task_transition"


@dataclass(frozen=True)
class DevTask:
    """A module task and, once proposed, its PR's gate state."""

    id: str
    project_id: str
    module: str
    title: str
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
    def from_row(cls, row: Row) -> DevTask:
        """Build from a ``dev_tasks`` row."""
        return cls(
            id=row["id"],
            project_id=row["project_id"],
            module=row["module"],
            title=row["title"],
            branch=row["branch"],
            pr_action_id=row["pr_action_id"],
            head=row["head"],
            files=tuple(loads(row["files"]) or ()),
            findings=tuple(loads(row["findings"]) or ()),
            gate_status=cast(GateStatus | None, row["gate_status"]),
            gate_correction_count=int(row["gate_correction_count"]),
            blocked=bool(row["blocked"]),
            blocked_reason=row["blocked_reason"],
            created_at=str(row["created_at"]),
            updated_at=str(row["updated_at"]),
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
    """Dev task PRs through the shared gates (same rules as :class:`InfraPipeline`)."""

    def __init__(
        self,
        store: TeamStore,
        settings: Settings | None = None,
        *,
        permissions: Any = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
    ) -> None:
        self.store = store
        self.events = store.events
        self.db = store.db
        self.settings = settings or load_settings()
        self.permissions = (
            permissions if permissions is not None else self.settings.data_dir / "permissions.json"
        )
        self.timeout_s = timeout_s
        self.jobs = BackgroundJobs(self._record_job_error)

    # -- tasks -----------------------------------------------------------------------------

    def create_task(self, project_id: str, module: str, title: str) -> DevTask:
        """Add a task for ``module`` (a module of the project's map)."""
        project = self.store.project(project_id)
        if module not in {m.get("name") for m in project.modules()}:
            raise ValidationError(f"module {module!r} is not in project {project_id}'s map")
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
                    "blocked": False,
                    "now": utcnow_iso(),
                },
            )
        return self.get(ident)

    def get(self, task_id: str) -> DevTask:
        """One task (:class:`NotFoundError` when unknown)."""
        with self.db.transaction(write=False) as tx:
            row = tx.one("dev_task_get", {"id": task_id})
        if row is None:
            raise NotFoundError(f"no dev task with id {task_id!r}", task_id=task_id)
        return DevTask.from_row(row)

    def tasks(self, project_id: str) -> list[DevTask]:
        """The project's tasks, oldest first."""
        with self.db.transaction(write=False) as tx:
            return [
                DevTask.from_row(r)
                for r in tx.all("dev_tasks_of_project", {"project_id": project_id})
            ]

    # -- the dev agent's tool --------------------------------------------------------------

    def propose_task_pr(
        self,
        task_id: str,
        files: Sequence[Mapping[str, Any]] | Mapping[str, str],
        agent: str | None = None,
    ) -> DevTask:
        """Open the task's PR on ``feature/task-<id>``, or commit a correction on it.

        Raises:
            ConflictError: ``decide()`` denied (or asked: an approval is created first),
                or a correction outside ``changes_requested``.
            ValidationError, PathError: bad files; nothing is written.
        """
        task = self.get(task_id)
        agent = agent or task.agent
        payload = files_payload(files)
        decision = decide(
            agent,
            "propose_task_pr",
            autonomy=self.store.autonomy(task.project_id),
            permissions=self.permissions,
        )
        self.events.append(
            "action.decided",
            {"action": "propose_task_pr", **decision.to_dict()},
            project_id=task.project_id,
            agent=agent,
        )
        if decision.outcome == "ask":
            approval = self.store.request_approval(
                project_id=task.project_id,
                session_id=None,
                agent=agent,
                action="propose_task_pr",
                payload={"task_id": task_id, "paths": sorted(payload)},
                stage=decision.stage,
                rule=decision.rule,
            )
            raise ConflictError(
                f"propose_task_pr waits for approval {approval}", approval_id=approval
            )
        if decision.outcome == "deny":
            raise ConflictError(f"decide() denied propose_task_pr for {agent}: {decision.rule}")
        if task.gate_status is None:
            return self._open(task, payload, agent)
        move = next_gate_status(
            task.state, GateEvent.correction_committed(), self.settings.gate_correction_limit
        )
        assert task.branch is not None
        number = move.state.correction_count
        head = self._git(task).commit_files(
            task.branch, payload, f"{task.title} (correction {number})"
        )
        with self.db.transaction() as tx:
            self._move(
                tx,
                task,
                move,
                agent,
                f"correction {move.state.correction_count}",
                head=head,
                files=sorted(set(task.files) | set(payload)),
            )
            events = self._changed(tx, task, move, "correction committed", agent)
        self.events.publish(events)
        return self.get(task_id)

    def _open(self, task: DevTask, files: dict[str, str], agent: str) -> DevTask:
        self.events.append(
            "dev.task_started",
            {"task_id": task.id, "title": task.title, "module": task.module},
            project_id=task.project_id,
            agent=agent,
        )
        git = self._git(task)
        git.ensure_repo()
        branch = f"feature/task-{task.id}"
        base = git.create_branch(branch, DEFAULT_BRANCH)
        try:
            head = git.commit_files(branch, files, f"{task.title}\n\nTask {task.id}")
        except Exception:
            drop_branch(git.repo_path, branch, base)
            raise
        with self.db.transaction() as tx:
            if not tx.execute(
                "dev_task_open_pr",
                {
                    "id": task.id,
                    "branch": branch,
                    "pr_action_id": new_id("act"),
                    "head": head,
                    "files": dumps(sorted(files)),
                    "now": utcnow_iso(),
                },
            ):
                raise ConflictError(f"task {task.id} already has a PR")
            add_history(tx, task.id, None, "awaiting_qa", agent, f"PR opened on {branch}")
            event = self._event(
                tx,
                task,
                "pr.gate_changed",
                {
                    "task_id": task.id,
                    "from_status": None,
                    "gate_status": "awaiting_qa",
                    "reason": "PR opened",
                },
                agent,
            )
        self.events.publish([event])
        return self.get(task.id)

    # -- gates -----------------------------------------------------------------------------

    def record_verdict(
        self,
        task_id: str,
        gate: GateName,
        verdict: VerdictValue,
        findings: Sequence[Finding] = (),
        reason: str | None = None,
    ) -> DevTask:
        """Record one gate's verdict (``skipped`` stores findings, moves nothing)."""
        task = self.get(task_id)
        stored = [f for f in task.findings if f.get("gate") == "qa"] if gate == "secops" else []
        stored += [{**f, "gate": f.get("gate", gate)} for f in findings]
        make = GateEvent.qa if gate == "qa" else GateEvent.secops
        if verdict == "skipped":
            if task.gate_status != f"awaiting_{gate}":
                raise ConflictError(f"{gate} verdict not allowed while {task.gate_status}")
            move = Transition(task.state, task.state, make(False, "skipped"))
        else:
            move = next_gate_status(
                task.state, make(verdict == "pass", reason), self.settings.gate_correction_limit
            )
        with self.db.transaction() as tx:
            self._move(tx, task, move, gate, f"{gate} {verdict}", findings=stored)
            events = [
                self._event(
                    tx,
                    task,
                    f"artifact.{gate}_verdict",
                    {
                        "verdict": verdict,
                        "task_id": task_id,
                        "findings": stored,
                        "gate_status": move.state.status,
                    },
                    gate,
                )
            ]
            events += self._changed(tx, task, move, reason or f"{gate} {verdict}", gate)
        self.events.publish(events)
        return self.get(task_id)

    def run_gates(self, task_id: str) -> DevTask:
        """QA then (after a pass) SecOps on the task's files at its head."""
        task = self.get(task_id)
        if task.gate_status not in ("awaiting_qa", "awaiting_secops"):
            raise ConflictError(f"no gate to run while {task.gate_status}", task_id=task_id)
        files = self._read(task)
        events = self.store.events
        if task.gate_status == "awaiting_qa":
            with agent_at_work(events, "qa", task.project_id, f"reviewing dev PR {task_id}"):
                result = run_qa(files, self.settings, timeout_s=self.timeout_s)
            task = self._record(task_id, result)
        if task.gate_status == "awaiting_secops":
            with agent_at_work(events, "secops", task.project_id, f"scanning dev PR {task_id}"):
                result = run_secops(files, self.settings, timeout_s=self.timeout_s)
            task = self._record(task_id, result)
        return task

    def _record(self, task_id: str, result: GateResult) -> DevTask:
        event = verdict_event(result)
        verdict: VerdictValue = "skipped" if event is None else result.status
        return self.record_verdict(
            task_id,
            result.gate,
            verdict,
            gate_findings(result),
            None if event is None else event.reason,
        )

    def start_gates(self, task_id: str) -> GateJob:
        """Gates → corrections → gates in the background until the task PR settles."""
        return self.jobs.start(task_id, lambda: self.settle(task_id))

    def settle(self, task_id: str) -> DevTask:
        """Run gates and corrections until ``awaiting_human``/``blocked`` (or a skipped gate)."""
        task = self.get(task_id)
        for _ in range(4 * (self.settings.gate_correction_limit + 2)):
            if task.gate_status in SETTLED:
                break
            if task.gate_status == "changes_requested":
                fixed = planner.correct(self._read(task), [dict(f) for f in task.findings])
                task = self.propose_task_pr(task_id, fixed)
                continue
            before = task.state
            task = self.run_gates(task_id)
            if task.state == before:
                break
        return task

    # -- operator actions ------------------------------------------------------------------

    def approve(self, task_id: str, operator: str, reason: str | None = None) -> DevTask:
        """Merge the task PR into ``main`` (only from ``awaiting_human``; one operator wins)."""
        task = self.get(task_id)
        move = next_gate_status(
            task.state, GateEvent.approve(reason), self.settings.gate_correction_limit
        )
        git = self._git(task)
        with self.db.transaction() as tx:
            self._move(tx, task, move, _who(operator), f"approved by {operator}")
            assert task.branch is not None
            git.merge(task.branch, DEFAULT_BRANCH, f"Merge task {task.id}: {task.title}")
            events = self._changed(tx, task, move, f"approved by {operator}", None)
        self.events.publish(events)
        return self.get(task_id)

    def reject(self, task_id: str, operator: str, reason: str) -> DevTask:
        """Send the task PR back to its dev agent (a reason is required)."""
        if not reason or not reason.strip():
            raise ValidationError("a reason is required to reject")
        task = self.get(task_id)
        move = next_gate_status(
            task.state, GateEvent.reject(reason), self.settings.gate_correction_limit
        )
        with self.db.transaction() as tx:
            self._move(tx, task, move, _who(operator), f"rejected by {operator}: {reason}")
            events = self._changed(tx, task, move, f"rejected by {operator}: {reason}", None)
        self.events.publish(events)
        return self.get(task_id)

    def timeline(self, task_id: str) -> list[HistoryEntry]:
        """The task PR's gate moves, oldest first."""
        self.get(task_id)
        return read_history(self.db, task_id)

    # -- internals -------------------------------------------------------------------------

    def git_for(self, task: DevTask) -> GitProvider:
        """The git provider of the task's project repository."""
        return self._git(task)

    def _git(self, task: DevTask) -> GitProvider:
        repo = self.store.project(task.project_id).repo_path
        if not repo:
            raise ValidationError(f"project {task.project_id} has no repository")
        return GitProvider(repo)

    def _read(self, task: DevTask) -> dict[str, str]:
        assert task.head is not None
        return self._git(task).read_files(task.head, list(task.files))

    def _move(
        self,
        tx: Tx,
        task: DevTask,
        move: Transition,
        actor: str,
        note: str,
        *,
        findings: Sequence[Finding] | None = None,
        head: str | None = None,
        files: Sequence[str] | None = None,
    ) -> None:
        apply_transition(
            tx,
            _QUERY,
            task.id,
            previous=move.previous,
            state=move.state,
            findings=task.findings if findings is None else findings,
            head=head or task.head,
            files=task.files if files is None else files,
            actor=actor,
            note=note,
        )

    def _changed(
        self, tx: Tx, task: DevTask, move: Transition, reason: str, agent: str | None
    ) -> list[Event]:
        if not move.changed_status:
            return []
        events = [
            self._event(
                tx,
                task,
                "pr.gate_changed",
                {
                    "task_id": task.id,
                    "from_status": move.previous.status,
                    "gate_status": move.state.status,
                    "reason": reason,
                },
                agent,
            )
        ]
        if move.state.status == "awaiting_human":
            events.append(
                self._event(
                    tx,
                    task,
                    "dev.task_done",
                    {"task_id": task.id, "title": task.title, "module": task.module},
                    task.agent,
                )
            )
        elif move.state.status == "blocked":
            events.append(
                self._event(
                    tx,
                    task,
                    "backlog.task_blocked",
                    {"task_id": task.id, "reason": move.state.blocked_reason},
                    task.agent,
                )
            )
        return events

    def _event(
        self, tx: Tx, task: DevTask, type: str, payload: dict[str, Any], agent: str | None
    ) -> Event:
        return self.events.append_in(tx, type, payload, project_id=task.project_id, agent=agent)

    def _record_job_error(self, task_id: str, exc: BaseException) -> None:
        message = getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"
        try:
            task = self.get(task_id)
        except NotFoundError:
            return
        self.events.append(
            "backlog.task_blocked",
            {"task_id": task_id, "reason": f"gate run failed: {message}"},
            project_id=task.project_id,
            agent=task.agent,
        )


def _who(operator: str) -> str:
    if not operator or not operator.strip():
        raise ValidationError("operator is required and must not be empty")
    return operator.strip()


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


__all__ = ["DevTask", "DevTasks", "GateStatus", "demo_files", "run_demo_task", "seed_demo_tasks"]
