"""The dev agents at work on the PO's tasks, as ``dev`` jobs on the job engine.

One job per (project, module): its unique key makes a module's agent work one task at a
time across every process, and the job's lease is the only lease (a process killed
mid-turn leaves the job to another worker, which takes the same task again in the same
worktree). A run works the module's next task; if more wait, it asks for itself again.
A turn settles its task through the agent's own tools (``propose_task_pr`` → in review,
``report_blocked``); a turn that ends without either blocks the task with the agent's
last words; a failed turn counts an attempt and, at ``dev_max_attempts``, blocks it. A turn
the runtime refuses (paused, over budget) costs nothing: the job snoozes.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from backend.agents.team import dev_agent_id
from backend.dev.agents import DevAgents
from backend.events import EventLog, EventType, utcnow_iso
from backend.exceptions import ConflictError
from backend.jobs import Backoff, Job, Jobs, RetryAfterError, SnoozeError
from backend.settings import Settings

log = logging.getLogger(__name__)

DEV = "dev"
"""The job kind of a module's dev agent (payload ``{"project_id", "module"}``)."""

REFUSALS = frozenset({"agent_paused", "budget_exceeded"})
"""Codes of the turn checks' refusals (the runtime's ``checks``): the task waits, uncounted."""


def dev_key(project_id: str, module: str) -> str:
    """The unique key of a module's dev job: one task at a time per agent."""
    return f"dev:{project_id}:{module}"


class DevTaskQueue:
    """Which task a module's agent works next, and the conditional moves of one attempt
    (``sql/dev_task_queries.sql``); blocks are in the feed, ``backlog.task_blocked``."""

    def __init__(self, events: EventLog, *, max_attempts: int) -> None:
        self.events = events
        self.db = events.db
        self.max_attempts = max_attempts

    def runnable_modules(self) -> list[tuple[str, str]]:
        """(project, module) pairs with a task their agent may take now."""
        with self.db.transaction(write=False) as tx:
            rows = tx.all("dev_modules_runnable", {"yes": True})
        return [(str(r["project_id"]), str(r["module"])) for r in rows]

    def next_of(self, project_id: str, module: str) -> dict[str, Any] | None:
        """The module's next task (one its dead job left working first), if any."""
        params = {"project_id": project_id, "module": module, "yes": True}
        with self.db.transaction(write=False) as tx:
            return tx.one("dev_task_next_of_module", params)

    def take(self, task_id: str, owner: str) -> int | None:
        """Start an attempt of the task for ``owner``; its number, or ``None`` if settled."""
        params = {"id": task_id, "owner": owner, "now": utcnow_iso()}
        with self.db.transaction() as tx:
            row = tx.one("dev_task_take", params)
        return int(row["attempts"]) if row is not None else None

    def give_up(self, task_id: str) -> bool:
        """Block a task whose turn died on each of its attempts; whether it was."""
        reason = f"its turn died {self.max_attempts} time(s) without finishing"
        params = {
            "id": task_id,
            "max_attempts": self.max_attempts,
            "reason": reason,
            "now": utcnow_iso(),
        }
        with self.db.transaction() as tx:
            row = tx.one("dev_task_give_up", params)
            events = [] if row is None else [self._blocked(tx, row, reason)]
        self.events.publish(events)
        return row is not None

    def release(
        self, task_id: str, owner: str, to_status: str, reason: str, *, refund: bool = False
    ) -> str | None:
        """End ``owner``'s attempt of a task its turn did not settle (``todo``/``blocked``)."""
        params = {
            "id": task_id,
            "owner": owner,
            "to_status": to_status,
            "reason": reason,
            "refund": 1 if refund else 0,
            "now": utcnow_iso(),
        }
        events = []
        with self.db.transaction() as tx:
            row = tx.one("dev_task_release", params)
            if row is not None and row["status"] == "blocked":
                events.append(self._blocked(tx, row, reason))
        self.events.publish(events)
        return str(row["status"]) if row is not None else None

    def _blocked(self, tx: Any, row: Any, reason: str) -> Any:
        return self.events.append_in(
            tx,
            EventType.BACKLOG_TASK_BLOCKED,
            {"task_id": row["id"], "reason": reason},
            project_id=row["project_id"],
            session_id=row["session_id"],
            agent=dev_agent_id(row["module"]),
        )


class DevWorker:
    """Runs dev agents on runnable tasks through ``dev`` jobs (see the module docstring).

    Args:
        agents: the dev agents' runtime and tools.
        settings: ``dev_lease_s`` (the job's lease), ``dev_max_attempts``.
        jobs: the engine the ``dev`` kind is registered on.
    """

    def __init__(self, agents: DevAgents, settings: Settings, jobs: Jobs) -> None:
        self.agents = agents
        self.dev_tasks = agents.dev_tasks
        self.settings = settings
        self.jobs = jobs
        self.queue = DevTaskQueue(
            self.dev_tasks.store.events, max_attempts=settings.dev_max_attempts
        )
        jobs.register(
            DEV,
            self._run,
            concurrency=4,
            # The task counts its own attempts and blocks first; the job outlives them.
            max_attempts=settings.dev_max_attempts + 2,
            backoff=Backoff(base_s=1.0, max_s=settings.dev_lease_s / 2),
            lease_s=settings.dev_lease_s,
            stop_grace_s=0.0,  # a turn is cancelled at once; the task goes back to todo
        )

    def wake(self) -> list[str]:
        """Queue a job for every module with a task to take (any thread); their keys."""
        keys = []
        for project_id, module in self.queue.runnable_modules():
            self._ask(project_id, module)
            keys.append(dev_key(project_id, module))
        return keys

    def _ask(self, project_id: str, module: str) -> None:
        payload = {"project_id": project_id, "module": module}
        self.jobs.enqueue(DEV, payload, unique_key=dev_key(project_id, module), again=True)

    async def _run(self, job: Job) -> None:
        project_id, module = str(job.payload["project_id"]), str(job.payload["module"])
        await asyncio.to_thread(self.agents.prune)
        worked = await self.work_next(project_id, module, f"job-{job.id}-{job.attempts}")
        if worked is not None:  # there may be more: this job runs once more after this one
            await asyncio.to_thread(self._ask, project_id, module)

    async def work_next(self, project_id: str, module: str, owner: str) -> str | None:
        """Work the module's next task here; its id, or ``None`` when there was none.

        Raises:
            SnoozeError: the agent refused the turn (paused, over budget).
            RetryAfterError: the turn failed with attempts left (the task is ``todo``).
        """
        row = await asyncio.to_thread(self.queue.next_of, project_id, module)
        if row is None:
            return None
        task_id = str(row["id"])
        if row["status"] == "working" and int(row["attempts"]) >= self.queue.max_attempts:
            await asyncio.to_thread(self.queue.give_up, task_id)
            return task_id
        attempt = await asyncio.to_thread(self.queue.take, task_id, owner)
        if attempt is None:
            return None
        try:
            result = await self.agents.work(task_id)
        except asyncio.CancelledError:
            # Shutting down: give the task back now rather than after the lease runs out.
            self.queue.release(task_id, owner, "todo", "the backend stopped mid-turn")
            raise
        except Exception as exc:
            await self._failed(task_id, owner, attempt, exc)
            return task_id
        said = (result.text or "").strip() or "(no answer)"
        reason = f"the agent ended its turn without propose_task_pr or report_blocked: {said}"
        await asyncio.to_thread(self.queue.release, task_id, owner, "blocked", reason)
        return task_id

    async def _failed(self, task_id: str, owner: str, attempt: int, exc: Exception) -> None:
        if isinstance(exc, ConflictError) and exc.code in REFUSALS:
            # Refused before it ran (paused, over budget): not the task's failure, so not
            # an attempt; the module's job waits a while before it asks again.
            await asyncio.to_thread(
                self.queue.release, task_id, owner, "todo", exc.message, refund=True
            )
            raise SnoozeError(self.settings.dev_lease_s / 2, exc.message) from exc
        log.warning("dev task %s: turn failed (attempt %d): %r", task_id, attempt, exc)
        give_up = attempt >= self.settings.dev_max_attempts
        reason = f"turn failed (attempt {attempt}): {getattr(exc, 'message', None) or exc!r}"
        to = "blocked" if give_up else "todo"
        await asyncio.to_thread(self.queue.release, task_id, owner, to, reason)
        if not give_up:
            raise RetryAfterError(self.settings.resolved_dev_sweep_s(), reason) from exc
