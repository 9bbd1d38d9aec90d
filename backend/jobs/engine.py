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
import os
import socket
import time
import uuid
from collections.abc import Callable, Coroutine
from typing import Any

from backend.jobs.exceptions import UnknownKindError
from backend.jobs.models import Backoff, Handler, Job, Kind
from backend.jobs.store import JobStore
from backend.jobs.worker import KindWorker
from backend.store.db import Database, Tx

Spawn = Callable[[Coroutine[Any, Any, None], str], "asyncio.Task[Any]"]


class Jobs:
    """Durable jobs on ``db``'s ``jobs`` table.

    Args:
        db: the state database (jobs commit with the domain's rows when given its ``tx``).
        poll_s: the longest a worker sleeps before looking for jobs another process queued.
    """

    def __init__(self, db: Database, *, poll_s: float = 1.0) -> None:
        self.store = JobStore(db)
        self.poll_s = poll_s
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
    ) -> Kind:
        """Declare the handler of jobs of kind ``name`` (see :class:`Kind`)."""
        kind = Kind(name, handler, concurrency, max_attempts, backoff or Backoff(), lease_s)
        self.kinds[name] = kind
        return kind

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
        tx: Tx | None = None,
    ) -> tuple[int, bool]:
        """Add a job due at ``run_at`` (epoch seconds; now by default); ``(id, created)``.

        With ``tx`` it commits with the caller's transaction (the in-process wake-up comes
        before that commit; the worker's poll finds the job). A ``unique_key`` held by an
        unfinished job adds nothing and returns that job.
        """
        spec = self._kind(kind)
        found = self.store.enqueue(
            kind,
            payload or {},
            run_at=time.time() if run_at is None else run_at,
            max_attempts=spec.max_attempts,
            unique_key=unique_key,
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

    def rerun(self, job_id: int) -> bool:
        """Queue a dead job again with fresh attempts."""
        found = self.store.rerun(job_id)
        job = self.store.get(job_id) if found else None
        if job is not None:
            self._wake(job.kind)
        return found

    def drop(self, job_id: int) -> bool:
        """Give up on a dead job: it stays, ``cancelled``, and runs no more."""
        return self.store.drop(job_id)

    def get(self, job_id: int) -> Job | None:
        """The job, if it exists."""
        return self.store.get(job_id)

    def dead(self, limit: int = 100) -> list[Job]:
        """Jobs that ran out of attempts, oldest first."""
        return self.store.dead(limit)

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
