"""The background worker that runs the dev agents on the PO's tasks.

Every ``dev_sweep_s`` (and whenever :meth:`DevWorker.wake` is called: a task was created,
execution was activated) it looks for tasks it may take (``dev_tasks_runnable``: todo, or
``working`` under an expired lease, in a project whose execution is active, with no PR
yet), takes each module's oldest one unless that module's agent is already on a task, and
claims it with one conditional UPDATE: two workers (threads or processes on one
PostgreSQL) cannot both win a task, so nothing runs twice at once. While the agent's turn
runs, a heartbeat extends the lease; a process killed mid-turn leaves the task ``working``
with a lease that runs out, and the next sweep anywhere takes it again (its worktree is
reused or recreated).

A turn settles its task through the agent's own tools (``propose_task_pr`` → ``in_review``,
``report_blocked`` → ``blocked``). A turn that ends without either blocks the task with the
agent's last words; a turn that fails (its provider down after the retries) puts it back
to ``todo`` with the error, and after ``dev_max_attempts`` claims blocks it. A turn the
runtime's checks refuse (the agent is paused, or over its budget) costs no attempt: the
task waits in ``todo``.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from contextlib import suppress
from typing import Any

from backend.agents.team import dev_agent_id
from backend.events import EventLog, EventType, utcnow_iso
from backend.exceptions import ConflictError
from backend.infra.dev_agent import DevAgents
from backend.settings import Settings

log = logging.getLogger(__name__)

REFUSALS = frozenset({"agent_paused", "budget_exceeded"})
"""Codes of the turn checks' refusals (the runtime's ``checks``): the task waits, uncounted."""


class DevTaskLeases:
    """The conditional writes of a worker's claim on a task (``sql/dev_task_queries.sql``)."""

    def __init__(self, events: EventLog, *, lease_s: float, max_attempts: int = 3) -> None:
        self.events = events
        self.db = events.db
        self.lease_s = lease_s
        self.max_attempts = max_attempts

    def give_up_dead(self) -> list[str]:
        """Block the tasks whose turn died on each of their ``max_attempts`` claims (each
        blocked in the feed, ``backlog.task_blocked``); their ids."""
        probe = {"epoch": time.time(), "max_attempts": self.max_attempts}
        with self.db.transaction(write=False) as tx:
            if tx.one("dev_tasks_dead_any", probe) is None:
                return []  # the usual sweep: nothing died, nothing written
        params = {
            **probe,
            "reason": f"its turn died {self.max_attempts} time(s) without finishing",
            "now": utcnow_iso(),
        }
        events = []
        with self.db.transaction() as tx:
            rows = tx.all("dev_tasks_give_up", params)
            for row in rows:
                payload = {"task_id": row["id"], "reason": params["reason"]}
                events.append(self._blocked(tx, row, payload))
        self.events.publish(events)
        return [str(r["id"]) for r in rows]

    def _blocked(self, tx: Any, row: Any, payload: dict[str, Any]) -> Any:
        return self.events.append_in(
            tx,
            EventType.BACKLOG_TASK_BLOCKED,
            payload,
            project_id=row["project_id"],
            session_id=row["session_id"],
            agent=dev_agent_id(row["module"]),
        )

    def runnable(self) -> list[dict[str, Any]]:
        """Tasks a worker may take now, at most one per (project, module), oldest first."""
        epoch = time.time()
        with self.db.transaction(write=False) as tx:
            rows = tx.all("dev_tasks_runnable", {"yes": True, "epoch": epoch})
            live = tx.all("dev_tasks_busy", {"epoch": epoch})
        busy = {(r["project_id"], r["module"]) for r in live}
        out = []
        for row in rows:
            key = (row["project_id"], row["module"])
            if key not in busy:
                busy.add(key)
                out.append(row)
        return out

    def claim(self, task_id: str, owner: str) -> int | None:
        """Take the task for ``owner``; its attempt number, or ``None`` when another has it."""
        now = time.time()
        params = {
            "id": task_id,
            "owner": owner,
            "epoch": now,
            "lease_until": now + self.lease_s,
            "now": utcnow_iso(),
        }
        with self.db.transaction() as tx:
            row = tx.one("dev_task_claim", params)
        return int(row["attempts"]) if row is not None else None

    def heartbeat(self, task_id: str, owner: str) -> bool:
        """Extend ``owner``'s lease; ``False`` once the task is no longer its own."""
        params = {"id": task_id, "owner": owner, "lease_until": time.time() + self.lease_s}
        with self.db.transaction() as tx:
            return tx.one("dev_task_heartbeat", params) is not None

    def release(
        self, task_id: str, owner: str, to_status: str, reason: str, *, refund: bool = False
    ) -> str | None:
        """End ``owner``'s claim of a task its turn did not settle (``todo``/``blocked``; a
        block is in the feed, ``backlog.task_blocked``, in the same transaction)."""
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
                events.append(self._blocked(tx, row, {"task_id": task_id, "reason": reason}))
        self.events.publish(events)
        return str(row["status"]) if row is not None else None


class DevWorker:
    """Runs dev agents on runnable tasks (see the module docstring).

    Args:
        agents: the dev agents' runtime and tools.
        settings: ``dev_lease_s``, ``dev_sweep_s``, ``dev_max_attempts``.
        owner: this worker's name in the leases (default: a fresh random one per process).
    """

    def __init__(self, agents: DevAgents, settings: Settings, owner: str | None = None) -> None:
        self.agents = agents
        self.dev_tasks = agents.dev_tasks
        self.settings = settings
        self.owner = owner or f"dev-worker-{uuid.uuid4().hex[:8]}"
        self.leases = DevTaskLeases(
            self.dev_tasks.store.events,
            lease_s=settings.dev_lease_s,
            max_attempts=settings.dev_max_attempts,
        )
        self._wake = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._running: dict[str, tuple[tuple[str, str], asyncio.Task[None]]] = {}
        self._refused: dict[tuple[str, str], float] = {}

    def wake(self) -> None:
        """Sweep now instead of at the next interval (from any thread; a no-op before
        :meth:`run` started)."""
        if self._loop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._wake.set)

    async def run(self) -> None:
        """Sweep until cancelled; a failing round is logged and the next one tries again."""
        self._loop = asyncio.get_running_loop()
        try:
            while True:
                try:
                    await self.sweep()
                except Exception as exc:  # the loop must outlive one bad round
                    log.warning("dev task round failed: %r", exc)
                self._wake.clear()
                with suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), self.settings.resolved_dev_sweep_s())
        finally:
            jobs = [job for _key, job in self._running.values()]
            for job in jobs:
                job.cancel()
            if jobs:
                await asyncio.gather(*jobs, return_exceptions=True)

    async def sweep(self) -> list[str]:
        """Claim and start what may run now (and drop finished tasks' worktrees); the ids of
        the tasks this call started."""
        await asyncio.to_thread(self.agents.prune)
        await asyncio.to_thread(self.leases.give_up_dead)
        started = []
        for row in await asyncio.to_thread(self.leases.runnable):
            task_id = str(row["id"])
            key = (str(row["project_id"]), str(row["module"]))
            if task_id in self._running or self._module_busy(key):
                continue
            if self._refused.get(key, 0.0) > time.monotonic():
                continue  # its agent refused a turn a moment ago (paused, over budget)
            attempt = await asyncio.to_thread(self.leases.claim, task_id, self.owner)
            if attempt is None:
                continue  # another worker won it
            job = asyncio.create_task(self._work(task_id, attempt, *key), name=f"dev-{task_id}")
            self._running[task_id] = (key, job)
            job.add_done_callback(self._forget(task_id))
            started.append(task_id)
        return started

    def _forget(self, task_id: str) -> Any:
        def done(_job: asyncio.Task[None]) -> None:
            self._running.pop(task_id, None)

        return done

    async def wait_idle(self) -> None:
        """Wait for the turns in flight (tests)."""
        while self._running:
            jobs = [job for _key, job in self._running.values()]
            await asyncio.gather(*jobs, return_exceptions=True)

    def _module_busy(self, key: tuple[str, str]) -> bool:
        return any(running == key for running, _job in self._running.values())

    async def _work(self, task_id: str, attempt: int, project_id: str, module: str) -> None:
        beat = asyncio.create_task(self._heartbeat(task_id))
        try:
            result = await self.agents.work(task_id)
            said = (result.text or "").strip() or "(no answer)"
            reason = f"the agent ended its turn without propose_task_pr or report_blocked: {said}"
            await asyncio.to_thread(self.leases.release, task_id, self.owner, "blocked", reason)
        except asyncio.CancelledError:
            # Shutting down: give the task back now rather than after the lease runs out.
            self.leases.release(task_id, self.owner, "todo", "the backend stopped mid-turn")
            raise
        except Exception as exc:
            if isinstance(exc, ConflictError) and exc.code in REFUSALS:
                # Refused before it ran (paused, over budget): not the task's failure, so
                # not an attempt; this worker leaves the module alone for a while.
                wait = time.monotonic() + self.settings.dev_lease_s / 2
                self._refused[(project_id, module)] = wait
                await asyncio.to_thread(
                    self.leases.release, task_id, self.owner, "todo", exc.message, refund=True
                )
                return
            log.warning("dev task %s: turn failed (attempt %d): %r", task_id, attempt, exc)
            give_up = attempt >= self.settings.dev_max_attempts
            reason = f"turn failed (attempt {attempt}): {getattr(exc, 'message', None) or exc!r}"
            to = "blocked" if give_up else "todo"
            await asyncio.to_thread(self.leases.release, task_id, self.owner, to, reason)
        finally:
            beat.cancel()

    async def _heartbeat(self, task_id: str) -> None:
        while True:
            await asyncio.sleep(self.settings.dev_lease_s / 3)
            if not await asyncio.to_thread(self.leases.heartbeat, task_id, self.owner):
                return
