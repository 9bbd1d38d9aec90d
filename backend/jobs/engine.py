"""The job engine's face: kinds are registered, jobs enqueued, workers started.

:class:`Jobs` knows no domain. The domain registers a handler per kind
(:meth:`Jobs.register`) and enqueues work (:meth:`Jobs.enqueue`, idempotent by unique key;
``run_at`` in the future makes a durable timer) or a recurring job (:meth:`Jobs.every`,
one row per key that is queued again for its next tick, so processes sharing a database
run each tick once). :meth:`Jobs.start` runs one :class:`KindWorker` per kind on the
backend's loop through the caller's ``spawn``.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import time
import uuid
from collections.abc import Callable, Coroutine
from datetime import UTC, datetime
from typing import Any

from backend.clock import utc_iso
from backend.jobs.exceptions import UnknownJobError, UnknownKindError
from backend.jobs.models import Backoff, Handler, Job, Kind
from backend.jobs.store import JobStore
from backend.jobs.worker import KindWorker, run_here
from backend.store.db import Database, Tx

log = logging.getLogger(__name__)

Spawn = Callable[[Coroutine[Any, Any, None], str], "asyncio.Task[Any]"]


class Jobs:
    """Durable jobs on ``db``'s ``jobs`` table.

    Args:
        db: the state database (jobs commit with the domain's rows when given its ``tx``).
        poll_s: the longest a worker sleeps before looking for jobs another process queued.
        on_dead: told of every job that ran out of attempts, after its kind's ``on_dead``.
    """

    def __init__(
        self,
        db: Database,
        *,
        poll_s: float = 1.0,
        on_dead: Callable[[Job], None] | None = None,
    ) -> None:
        self.store = JobStore(db)
        self.poll_s = poll_s
        self.on_dead = on_dead
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.kinds: dict[str, Kind] = {}
        self._workers: dict[str, KindWorker] = {}
        self._loop: asyncio.AbstractEventLoop | None = None

    def register(
        self,
        name: str,
        handler: Handler,
        *,
        concurrency: int = 1,
        max_attempts: int = 5,
        backoff: Backoff | None = None,
        lease_s: float = 30.0,
        on_dead: Callable[[Job], None] | None = None,
        stop_grace_s: float = 30.0,
    ) -> Kind:
        """Declare the handler of jobs of kind ``name`` (see :class:`Kind`)."""
        kind = Kind(
            name,
            handler,
            concurrency,
            max_attempts,
            backoff or Backoff(),
            lease_s,
            self._told(on_dead),
            stop_grace_s,
        )
        self.kinds[name] = kind
        return kind

    def _told(self, own: Callable[[Job], None] | None) -> Callable[[Job], None] | None:
        """A kind's ``on_dead`` followed by the engine's (each one's error is its own)."""
        if own is None and self.on_dead is None:
            return None

        def told(job: Job) -> None:
            for hook in (own, self.on_dead):
                if hook is None:
                    continue
                try:
                    hook(job)
                except Exception:
                    log.exception("jobs %s #%d: on_dead failed", job.kind, job.id)

        return told

    def _kind(self, name: str) -> Kind:
        try:
            return self.kinds[name]
        except KeyError:
            raise UnknownKindError(name) from None

    def enqueue(
        self,
        kind: str,
        payload: dict[str, Any] | None = None,
        *,
        unique_key: str | None = None,
        run_at: float | None = None,
        again: bool = False,
        tx: Tx | None = None,
    ) -> tuple[int, bool]:
        """Add a job due at ``run_at`` (epoch seconds; now by default); ``(id, created)``.

        With ``tx`` it commits with the caller's transaction (the in-process wake-up comes
        before that commit; the worker's poll finds the job). A ``unique_key`` held by an
        unfinished job adds nothing and returns that job; with ``again`` a holder that is
        running now runs once more after this attempt, and one waiting for later (a retry,
        a snooze) is brought forward to ``run_at``, so no request is lost or delayed.
        """
        spec = self._kind(kind)
        found = self.store.enqueue(
            kind,
            payload or {},
            run_at=time.time() if run_at is None else run_at,
            max_attempts=spec.max_attempts,
            unique_key=unique_key,
            again=again,
            tx=tx,
        )
        self._wake(kind)
        return found

    def every(
        self,
        kind: str,
        period_s: float,
        payload: dict[str, Any] | None = None,
        *,
        unique_key: str | None = None,
        first_at: float | None = None,
    ) -> int:
        """Run ``kind`` now (or at ``first_at``), then ``period_s`` after each run ends.

        One row per ``unique_key`` (the kind's name by default) across every process; an
        existing one waiting for a later tick is brought forward. A tick whose attempts
        all fail is not dead: it waits for the next tick. A cancelled one stops until
        ``every`` is called again (the next start).
        """
        spec = self._kind(kind)
        job_id, _ = self.store.enqueue(
            kind,
            payload or {},
            run_at=time.time() if first_at is None else first_at,
            max_attempts=spec.max_attempts,
            unique_key=unique_key or kind,
            period_s=period_s,
        )
        self._wake(kind)
        return job_id

    def cancel(self, job_id: int) -> bool:
        """Cancel an unfinished job (a running one's outcome is then dropped)."""
        return self.store.cancel(job_id)

    def rerun(self, job_id: int, tx: Tx | None = None) -> bool:
        """Queue a dead job again with fresh attempts (inside ``tx`` when given)."""
        found = self.store.rerun(job_id, tx)
        job = self.store.get(job_id) if found and tx is None else None
        if job is not None:
            self._wake(job.kind)
        return found

    def drop(self, job_id: int, tx: Tx | None = None) -> bool:
        """Give up on a dead job: it stays, ``cancelled``, and runs no more."""
        return self.store.drop(job_id, tx)

    def wake(self, kind: str) -> None:
        """Have ``kind``'s worker look for due jobs now (after a commit made one due)."""
        self._wake(kind)

    def get(self, job_id: int) -> Job | None:
        """The job, if it exists."""
        return self.store.get(job_id)

    def prune(self, older_than_s: float) -> int:
        """Delete done and cancelled jobs finished more than ``older_than_s`` ago; how many.

        Dead jobs stay until an operator reruns or drops them.
        """
        before = datetime.fromtimestamp(time.time() - older_than_s, UTC)
        return self.store.prune(utc_iso(before))

    def latest(self, unique_key: str) -> Job | None:
        """The newest job ``unique_key`` named, whatever its state."""
        found = self.store.by_key(unique_key)
        return found[0] if found else None

    def wait(self, job_id: int, timeout: float | None = None, *, poll_s: float = 0.1) -> Job:
        """Block (a thread, never the loop) until the job is done, dead or cancelled.

        Raises:
            TimeoutError: it is still unfinished after ``timeout`` seconds.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            job = self.store.get(job_id)
            if job is None or job.state in ("done", "dead", "cancelled"):
                if job is None:
                    raise UnknownJobError(job_id)
                return job
            if deadline is not None and time.monotonic() >= deadline:
                raise TimeoutError(f"job {job_id} ({job.kind}) is still {job.state}")
            time.sleep(poll_s)

    def wait_idle(self, kind: str, timeout: float | None = None, *, poll_s: float = 0.1) -> None:
        """Block until no job of ``kind`` is queued, running or waiting for a retry."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.store.unfinished(kind):
            if deadline is not None and time.monotonic() >= deadline:
                raise TimeoutError(f"jobs of kind {kind!r} are still unfinished")
            time.sleep(poll_s)

    def drain(self, kind: str) -> int:
        """Run every due job of ``kind`` here, in this thread, until none is due.

        For commands and tests that run no workers: each job is claimed like a worker's,
        run without a heartbeat (its lease must outlast it) and its outcome recorded.
        Coroutine handlers cannot run here. Returns how many jobs ran.
        """
        spec = self._kind(kind)
        for job_id in self.store.bury_lapsed(kind):
            dead = self.store.get(job_id)
            if spec.on_dead is not None and dead is not None and dead.state == "dead":
                spec.on_dead(dead)
        ran = 0
        while claimed := self.store.claim(kind, self.owner, limit=1, lease_s=spec.lease_s):
            for job in claimed:
                ran += 1
                run_here(self.store, spec, job)
        return ran

    def dead(self, limit: int = 100) -> list[Job]:
        """Jobs that ran out of attempts, oldest first."""
        return self.store.dead(limit)

    @property
    def started(self) -> bool:
        """Whether this engine's workers run (:meth:`start` was called)."""
        return self._loop is not None

    def start(self, spawn: Spawn) -> None:
        """Run one worker per registered kind on the running loop, through ``spawn``."""
        self._loop = asyncio.get_running_loop()
        for name, kind in self.kinds.items():
            worker = KindWorker(self.store, kind, self.owner, poll_s=self.poll_s)
            self._workers[name] = worker
            spawn(worker.run(), f"jobs-{name}")

    def _wake(self, kind: str) -> None:
        worker, loop = self._workers.get(kind), self._loop
        if worker is None or loop is None or loop.is_closed():
            return
        try:
            if asyncio.get_running_loop() is loop:
                worker.wake()
                return
        except RuntimeError:  # a thread without a loop
            pass
        loop.call_soon_threadsafe(worker.wake)
