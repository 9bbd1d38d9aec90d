"""Reads and conditional writes of ``jobs`` (queries in ``sql/job_queries.sql``).

Every write that moves a job is one statement conditioned on its row: a claim takes due
rows (SKIP LOCKED on PostgreSQL, serialised writers on SQLite), and a heartbeat or a finish
matches only while the job is still the caller's (same owner, same attempt, ``running``).
A worker that lost its job — its lease lapsed and another took it, or it was cancelled —
therefore changes nothing. Timestamps compared in SQL are epoch seconds from the caller.
"""

from __future__ import annotations

import time
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from backend.clock import utcnow_iso
from backend.jobs.models import Job
from backend.store.db import Database, Tx, dumps

LAPSED = "its lease lapsed on the last attempt (the worker died or hung)"


class JobStore:
    """The ``jobs`` table of one database."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def _tx(self, tx: Tx | None) -> AbstractContextManager[Tx]:
        return nullcontext(tx) if tx is not None else self.db.transaction()

    def enqueue(
        self,
        kind: str,
        payload: dict[str, Any],
        *,
        run_at: float,
        max_attempts: int,
        unique_key: str | None = None,
        period_s: float | None = None,
        again: bool = False,
        tx: Tx | None = None,
    ) -> tuple[int, bool]:
        """Add a job (inside ``tx`` when given); ``(id, created)``.

        With a ``unique_key`` held by an unfinished job, nothing is added and that job's id
        comes back with ``created`` False; with ``again``, a running holder is also marked to
        run once more when its attempt ends, and a waiting one is brought forward to
        ``run_at``. A recurring job (``period_s``) is upserted: an
        existing one is brought forward to ``run_at`` if it waits for later.
        """
        params = {
            "kind": kind,
            "payload": dumps(payload),
            "unique_key": unique_key,
            "run_at": run_at,
            "period_s": period_s,
            "max_attempts": max_attempts,
            "now": utcnow_iso(),
        }
        name = "job_enqueue" if period_s is None else "job_schedule"
        with self._tx(tx) as sql:
            for _ in range(3):  # the holder can finish between our two statements
                row = sql.one(name, params)
                if row is not None:
                    return int(row["id"]), period_s is None
                held = sql.one("job_unfinished_by_key", {"unique_key": unique_key})
                if held is not None:
                    if again:
                        flag = {
                            "unique_key": unique_key,
                            "yes": True,
                            "run_at": run_at,
                            "now": params["now"],
                        }
                        sql.one("job_again", flag)
                    return int(held["id"]), False
        raise RuntimeError(f"job key {unique_key!r} kept changing hands")  # pragma: no cover

    def claim(self, kind: str, owner: str, *, limit: int, lease_s: float) -> list[Job]:
        """Take up to ``limit`` due jobs of ``kind`` for ``owner``, oldest ``run_at`` first."""
        now = time.time()
        params = {
            "kind": kind,
            "owner": owner,
            "epoch": now,
            "lease_until": now + lease_s,
            "limit": limit,
            "now": utcnow_iso(),
        }
        with self.db.transaction() as sql:
            rows = sql.all("job_claim", params)
        return sorted((Job.from_row(r) for r in rows), key=lambda j: (j.run_at, j.id))

    def heartbeat(self, job: Job, *, lease_s: float) -> bool:
        """Extend the claim's lease; ``False`` when the job is no longer the claim's."""
        params = {**self._mine(job), "lease_until": time.time() + lease_s}
        with self.db.transaction() as sql:
            return sql.one("job_heartbeat", params) is not None

    def succeed(self, job: Job) -> bool:
        """The claim's run returned: ``done``, or a recurring job's next tick."""
        return self._finish("job_succeed", job, {})

    def retry(self, job: Job, *, run_at: float, error: str) -> bool:
        """The claim's run failed with attempts left: ``failed`` until ``run_at``."""
        return self._finish("job_retry", job, {"run_at": run_at, "error": error})

    def bury(self, job: Job, *, error: str) -> bool:
        """The claim's last attempt failed: ``dead``, or a recurring job's next tick."""
        return self._finish("job_bury", job, {"error": error})

    def snooze(self, job: Job, *, run_at: float) -> bool:
        """The handler asked to run later: queued until ``run_at``, attempt refunded."""
        return self._finish("job_snooze", job, {"run_at": run_at})

    def unfinished(self, kind: str) -> int:
        """How many jobs of ``kind`` are queued, running or waiting for a retry."""
        with self.db.transaction(write=False) as sql:
            row = sql.one("jobs_unfinished_count", {"kind": kind})
        return int(row["n"]) if row is not None else 0

    def prune(self, before: str) -> int:
        """Delete done and cancelled jobs last updated before ``before`` (ISO 8601 UTC)."""
        with self.db.transaction() as sql:
            return sql.execute("jobs_prune", {"before": before})

    def by_key(self, unique_key: str, limit: int = 1) -> list[Job]:
        """The jobs ``unique_key`` has named, newest first."""
        with self.db.transaction(write=False) as sql:
            rows = sql.all("jobs_by_key", {"unique_key": unique_key, "limit": limit})
        return [Job.from_row(r) for r in rows]

    def release(self, job: Job) -> bool:
        """Give the claim back unrun (the worker is stopping): queued now, attempt refunded."""
        return self._finish("job_release", job, {})

    def bury_lapsed(self, kind: str) -> list[int]:
        """Bury every job of ``kind`` whose lease lapsed on its last attempt; their ids."""
        params = {
            "kind": kind,
            "epoch": time.time(),
            "error": LAPSED,
            "now": utcnow_iso(),
            "no": False,
        }
        with self.db.transaction() as sql:
            return [int(r["id"]) for r in sql.all("jobs_bury_lapsed", params)]

    def cancel(self, job_id: int) -> bool:
        """Cancel an unfinished job; ``False`` when it had already finished."""
        with self.db.transaction() as sql:
            return sql.one("job_cancel", {"id": job_id, "now": utcnow_iso()}) is not None

    def rerun(self, job_id: int, tx: Tx | None = None) -> bool:
        """Queue a dead job again with fresh attempts; ``False`` when it is not dead or its
        unique key is held by another unfinished job."""
        params = {"id": job_id, "epoch": time.time(), "now": utcnow_iso()}
        with self._tx(tx) as sql:
            return sql.one("job_rerun", params) is not None

    def drop(self, job_id: int, tx: Tx | None = None) -> bool:
        """Give up on a dead job (``cancelled``); ``False`` when it is not dead."""
        with self._tx(tx) as sql:
            return sql.one("job_drop", {"id": job_id, "now": utcnow_iso()}) is not None

    def get(self, job_id: int) -> Job | None:
        """The job, if it exists."""
        with self.db.transaction(write=False) as sql:
            row = sql.one("job_get", {"id": job_id})
        return Job.from_row(row) if row is not None else None

    def dead(self, limit: int = 100) -> list[Job]:
        """Dead jobs, oldest death first."""
        with self.db.transaction(write=False) as sql:
            return [Job.from_row(r) for r in sql.all("jobs_dead", {"limit": limit})]

    def next_due(self, kind: str) -> float | None:
        """When a job of ``kind`` may next be claimable (epoch seconds), if any is pending."""
        with self.db.transaction(write=False) as sql:
            row = sql.one("jobs_next_due", {"kind": kind})
        return float(row["due"]) if row is not None and row["due"] is not None else None

    def _mine(self, job: Job) -> dict[str, Any]:
        return {"id": job.id, "owner": job.owner, "attempt": job.attempts}

    def _finish(self, name: str, job: Job, extra: dict[str, Any]) -> bool:
        params = {
            **self._mine(job),
            "epoch": time.time(),
            "now": utcnow_iso(),
            "no": False,
            **extra,
        }
        with self.db.transaction() as sql:
            return sql.one(name, params) is not None
