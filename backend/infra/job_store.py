"""Durable gate jobs: one row per PR in ``gate_jobs``, claimed with a lease.

The rules mirror the ledger's claims (:mod:`backend.ledger.base`): a worker owns a job only
through one conditional UPDATE (``queued``, or ``running`` with an expired lease, and
attempts left), so of two workers — threads or ``cadencia serve`` processes on one
PostgreSQL — exactly one runs a PR's gates. The owner's heartbeat pushes ``lease_until``
forward while the scanners run; a worker that dies stops beating, and once its lease runs
out another worker claims the job again. Unlike a ledger claim a gate run is safe to
repeat (every verdict is a conditional UPDATE on the PR's state), so an expired job is run
again — at most ``max_attempts`` times; then, or after a run that raised, it is ``failed``
and waits for an operator's rerun (the inbox's ``pr_stuck``).
"""

from __future__ import annotations

import time
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal, cast

from backend.events import utcnow_iso
from backend.store.db import Database, Row, Tx

JobStatus = Literal["queued", "running", "done", "failed"]


def _iso(value: Any) -> str:
    """PostgreSQL gives datetimes, SQLite the ISO text we wrote: ISO 8601 UTC either way."""
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat()
    return str(value)


@dataclass(frozen=True)
class GateJobRow:
    """One PR's gate job as stored."""

    pr_id: str
    status: JobStatus
    owner: str | None
    lease_until: float
    attempts: int
    last_error: str | None
    created_at: str
    updated_at: str

    @classmethod
    def from_row(cls, row: Row) -> GateJobRow:
        """Build from a ``gate_jobs`` row."""
        return cls(
            pr_id=row["pr_id"],
            status=cast(JobStatus, row["status"]),
            owner=row["owner"],
            lease_until=float(row["lease_until"]),
            attempts=int(row["attempts"]),
            last_error=row["last_error"],
            created_at=_iso(row["created_at"]),
            updated_at=_iso(row["updated_at"]),
        )

    @property
    def stuck_since(self) -> str:
        """When a stuck job stopped: its failure, or the end of its last lease."""
        if self.status == "running":
            return datetime.fromtimestamp(self.lease_until, UTC).isoformat()
        return self.updated_at

    def live(self, now: float) -> bool:
        """Running under a lease that has not expired (its owner may still be at work)."""
        return self.status == "running" and self.lease_until >= now


def died_reason(attempts: int) -> str:
    """Why a job whose lease ran out on every attempt is left to an operator."""
    return f"the gate run died {attempts} time(s) without finishing (its lease expired)"


class JobStore:
    """Reads and conditional writes of ``gate_jobs``.

    Args:
        db: the state database (the same one as ``pull_requests``).
        lease_s: how long a claim or a heartbeat holds a job.
        max_attempts: claims of one job (each crash costs one) before it is given up.
    """

    def __init__(self, db: Database, *, lease_s: float, max_attempts: int) -> None:
        self.db = db
        self.lease_s = lease_s
        self.max_attempts = max_attempts

    def _tx(self, tx: Tx | None) -> AbstractContextManager[Tx]:
        return nullcontext(tx) if tx is not None else self.db.transaction()

    def enqueue(self, pr_id: str, tx: Tx | None = None) -> JobStatus:
        """Ask for a run of the PR's gates (inside ``tx`` when given).

        Returns:
            ``queued``, or ``running`` when a live run will run once more after it ends.
        """
        params = {"pr_id": pr_id, "epoch": time.time(), "now": utcnow_iso()}
        with self._tx(tx) as sql:
            row = sql.one("gate_job_enqueue", params)
        assert row is not None  # an upsert always returns its row
        return cast(JobStatus, row["status"])

    def adopt_orphans(self) -> list[str]:
        """Queue a job for every PR waiting in a gate without one (rows from before 0009)."""
        with self.db.transaction() as sql:
            return [r["pr_id"] for r in sql.all("gate_jobs_adopt_orphans", {"now": utcnow_iso()})]

    def claim(self, pr_id: str, owner: str) -> int | None:
        """Take the job for ``owner`` if it is claimable; the attempt number, else ``None``."""
        now = time.time()
        params = {
            "pr_id": pr_id,
            "owner": owner,
            "epoch": now,
            "lease_until": now + self.lease_s,
            "max_attempts": self.max_attempts,
            "now": utcnow_iso(),
        }
        with self.db.transaction() as sql:
            row = sql.one("gate_job_claim", params)
        return int(row["attempts"]) if row is not None else None

    def heartbeat(self, pr_id: str, owner: str) -> bool:
        """Extend ``owner``'s lease; ``False`` when the job is no longer its own."""
        params = {"pr_id": pr_id, "owner": owner, "lease_until": time.time() + self.lease_s}
        with self.db.transaction() as sql:
            return sql.one("gate_job_heartbeat", params) is not None

    def finish(self, pr_id: str, owner: str, error: str | None = None) -> JobStatus | None:
        """End ``owner``'s run: ``done`` (or ``failed`` with ``error``), or ``queued`` again
        when a run was requested meanwhile; ``None`` when the job was no longer its own."""
        params = {"pr_id": pr_id, "owner": owner, "error": error, "now": utcnow_iso()}
        with self.db.transaction() as sql:
            row = sql.one("gate_job_finish", params)
        return cast(JobStatus, row["status"]) if row is not None else None

    def give_up_exhausted(self) -> list[GateJobRow]:
        """Mark ``failed`` every expired job that has no attempt left; those jobs."""
        now = time.time()
        given_up = []
        for job in self.due():
            if job.status != "running" or job.attempts < self.max_attempts:
                continue
            params = {
                "pr_id": job.pr_id,
                "epoch": now,
                "max_attempts": self.max_attempts,
                "error": died_reason(job.attempts),
                "now": utcnow_iso(),
            }
            with self.db.transaction() as sql:
                if sql.one("gate_job_give_up", params) is not None:
                    given_up.append(job)
        return given_up

    def get(self, pr_id: str) -> GateJobRow | None:
        """The PR's job, if it has one."""
        with self.db.transaction(write=False) as sql:
            row = sql.one("gate_job_get", {"pr_id": pr_id})
        return GateJobRow.from_row(row) if row is not None else None

    def due(self) -> list[GateJobRow]:
        """Queued jobs and expired running ones (claimable, or out of attempts)."""
        with self.db.transaction(write=False) as sql:
            rows = sql.all("gate_jobs_due", {"epoch": time.time()})
        return [GateJobRow.from_row(r) for r in rows]

    def claimable(self) -> list[str]:
        """PR ids whose job a worker may claim now, oldest request first."""
        return [j.pr_id for j in self.due() if j.attempts < self.max_attempts]

    def stuck(self) -> list[GateJobRow]:
        """Jobs that will not run again on their own, of PRs still waiting in a gate."""
        params = {"epoch": time.time(), "max_attempts": self.max_attempts}
        with self.db.transaction(write=False) as sql:
            rows = sql.all("gate_jobs_stuck", params)
        return [GateJobRow.from_row(r) for r in rows]
