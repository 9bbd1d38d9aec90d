"""One kind's worker: claims due jobs, runs them under a heartbeat, records the outcome.

It runs in the backend's asyncio loop (one task per kind) and keeps at most the kind's
``concurrency`` jobs in flight; a plain handler runs in a thread, a coroutine handler on
the loop. Between claims it sleeps until the kind's next job is due, at most ``poll_s``
(another process may enqueue), or until an enqueue in this process wakes it. A database
error costs one round, never the worker. Stopping gives unfinished claims back (queued,
attempt refunded); a crash leaves them to lapse and be claimed again, at least once each.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import time

from backend.jobs.exceptions import GiveUpError, RetryAfterError, SnoozeError
from backend.jobs.models import Job, Kind
from backend.jobs.store import JobStore

log = logging.getLogger(__name__)

ERROR_CHARS = 2000
"""``last_error`` keeps the start of a long message: enough to read, bounded in the row."""


def describe(exc: BaseException) -> str:
    """What ``last_error`` says about a failed attempt."""
    return f"{type(exc).__name__}: {exc}"[:ERROR_CHARS]


class KindWorker:
    """Runs the jobs of one :class:`Kind` for ``owner`` (unique per engine instance)."""

    def __init__(self, store: JobStore, kind: Kind, owner: str, *, poll_s: float) -> None:
        self.store = store
        self.kind = kind
        self.owner = owner
        self.poll_s = poll_s
        self._wake = asyncio.Event()
        self._running: dict[asyncio.Task[None], Job] = {}

    def wake(self) -> None:
        """Look for due jobs now (call on the worker's loop)."""
        self._wake.set()

    async def run(self) -> None:
        """Claim and run jobs until cancelled."""
        try:
            while True:
                await self._wait(await self._round())
        finally:
            await self._give_back()

    async def _round(self) -> float:
        """Claim what is due if there is room; how long to wait before the next round.

        Only a read happens while nothing is due, so an idle kind costs no write lock.
        """
        free = self.kind.concurrency - len(self._running)
        try:
            due = await asyncio.to_thread(self.store.next_due, self.kind.name)
            if free <= 0 or due is None or due > time.time():
                return self.poll_s if free <= 0 or due is None else due - time.time()
            buried = await asyncio.to_thread(self.store.bury_lapsed, self.kind.name)
            for job_id in buried:
                await self._tell_dead(job_id)
            claimed = await asyncio.to_thread(
                self.store.claim, self.kind.name, self.owner, limit=free, lease_s=self.kind.lease_s
            )
        except Exception as exc:  # the worker must outlive a bad round (database down)
            log.warning("jobs %s: round failed: %r", self.kind.name, exc)
            return self.poll_s
        for job in claimed:
            task = asyncio.create_task(self._run_one(job), name=f"job-{job.id}")
            self._running[task] = job
            task.add_done_callback(self._done)
        # Nothing claimed although a job is due: another worker is taking it right now.
        return 0.0 if claimed else 0.05

    async def _wait(self, timeout: float) -> None:
        if timeout > 0:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), min(self.poll_s, timeout))
        self._wake.clear()

    def _done(self, task: asyncio.Task[None]) -> None:
        self._running.pop(task, None)
        self._wake.set()

    async def _run_one(self, job: Job) -> None:
        beat = asyncio.create_task(self._heartbeat(job), name=f"job-{job.id}-heartbeat")
        handler = self.kind.handler
        try:
            if inspect.iscoroutinefunction(handler):
                await handler(job)
            else:
                await asyncio.to_thread(handler, job)
        except Exception as exc:  # a cancel (the worker stopping) passes through
            await self._record(job, exc)
        else:
            await self._record(job, None)
        finally:
            beat.cancel()

    async def _record(self, job: Job, exc: Exception | None) -> None:
        try:
            buried = await asyncio.to_thread(record, self.store, self.kind, job, exc)
        except Exception as err:  # its lease lapses and the job runs again
            log.warning("jobs %s #%d: outcome not recorded: %r", job.kind, job.id, err)
            return
        if buried:
            await self._tell_dead(job.id)

    async def _tell_dead(self, job_id: int) -> None:
        """Hand a job that is now ``dead`` to its kind's ``on_dead``."""
        if self.kind.on_dead is None:
            return
        try:
            job = await asyncio.to_thread(self.store.get, job_id)
            if job is not None and job.state == "dead":
                await asyncio.to_thread(self.kind.on_dead, job)
        except Exception as exc:  # the job is dead either way; only the telling failed
            log.warning("jobs %s #%d: on_dead failed: %r", self.kind.name, job_id, exc)

    async def _heartbeat(self, job: Job) -> None:
        while True:
            await asyncio.sleep(self.kind.lease_s / 3)
            try:
                mine = await asyncio.to_thread(self.store.heartbeat, job, lease_s=self.kind.lease_s)
            except Exception as exc:  # the next beat may get through before the lease lapses
                log.warning("jobs %s #%d: heartbeat failed: %r", job.kind, job.id, exc)
                continue
            if not mine:
                log.warning("jobs %s #%d: cancelled or taken by another worker", job.kind, job.id)
                return

    async def _give_back(self) -> None:
        """Let running jobs finish for up to ``stop_grace_s``, then give the rest back."""
        if self._running:
            await asyncio.wait(list(self._running), timeout=self.kind.stop_grace_s)
        jobs = list(self._running.values())
        for task in list(self._running):
            task.cancel()
        for job in jobs:
            with contextlib.suppress(Exception):
                await asyncio.to_thread(self.store.release, job)


def record(store: JobStore, kind: Kind, job: Job, exc: Exception | None) -> bool:
    """Write one attempt's outcome; whether it buried the job (its last attempt failed).

    Success is ``done`` (or the next tick); a :class:`SnoozeError` queues it again with
    the attempt refunded; any other error is a retry after the backoff (or the handler's
    :class:`RetryAfterError`), or the end when no attempt is left.
    """
    if exc is None:
        mine = store.succeed(job)
    elif isinstance(exc, SnoozeError):
        mine = store.snooze(job, run_at=time.time() + exc.after_s)
    elif job.attempts >= job.max_attempts or isinstance(exc, GiveUpError):
        log.warning("jobs %s #%d: last attempt failed: %r", job.kind, job.id, exc)
        return store.bury(job, error=describe(exc))
    else:
        after = (
            exc.after_s if isinstance(exc, RetryAfterError) else kind.backoff.delay(job.attempts)
        )
        log.info("jobs %s #%d: attempt %d failed: %r", job.kind, job.id, job.attempts, exc)
        mine = store.retry(job, run_at=time.time() + after, error=describe(exc))
    if not mine:
        log.warning("jobs %s #%d: lost before it finished; outcome dropped", job.kind, job.id)
    return False


def run_here(store: JobStore, kind: Kind, job: Job) -> None:
    """Run a claimed job in this thread and record its outcome (see ``Jobs.drain``)."""
    if inspect.iscoroutinefunction(kind.handler):
        raise TypeError(f"jobs of kind {kind.name!r} run on a loop, not in Jobs.drain")
    error: Exception | None = None
    try:
        kind.handler(job)
    except Exception as exc:
        error = exc
    if record(store, kind, job, error) and kind.on_dead is not None:
        dead = store.get(job.id)
        if dead is not None and dead.state == "dead":
            kind.on_dead(dead)
