"""Jobs that ran out of attempts, as the operator sees them: told, rerun or dropped.

The job engine (:mod:`backend.jobs`) knows no domain; this is where a dead job becomes a
``job.dead`` event in the feed and a ``job_dead`` item in the inbox, and where an
operator's rerun or drop is recorded (``job.rerun`` / ``job.dropped``, in the same
transaction as the job's move, so the audit trail never misses one).
"""

from __future__ import annotations

from backend.events import EventLog, EventType
from backend.exceptions import ConflictError, ValidationError
from backend.jobs import Job, Jobs
from backend.jobs.exceptions import UnknownJobError


class DeadJobs:
    """The dead jobs of ``jobs``, with the event log that records what happens to them."""

    def __init__(self, jobs: Jobs, events: EventLog) -> None:
        self.jobs = jobs
        self.events = events

    def told(self, job: Job) -> None:
        """The engine buried ``job``: the feed says so."""
        self.events.append(EventType.JOB_DEAD, _fate(job))

    def all(self, limit: int = 100) -> list[Job]:
        """Dead jobs, oldest death first."""
        return self.jobs.dead(limit)

    def rerun(self, job_id: int, operator: str, reason: str | None = None) -> Job:
        """Queue a dead job again with fresh attempts; the job as it now stands.

        Raises:
            UnknownJobError: no such job.
            ConflictError: the job is not dead, or its key is held by a newer job.
        """
        return self._decide(job_id, operator, reason, EventType.JOB_RERUN)

    def drop(self, job_id: int, operator: str, reason: str | None = None) -> Job:
        """Give up on a dead job: it stays, ``cancelled``, and leaves the inbox."""
        return self._decide(job_id, operator, reason, EventType.JOB_DROPPED)

    def _decide(self, job_id: int, operator: str, reason: str | None, what: EventType) -> Job:
        if not operator.strip():
            raise ValidationError("operator is required and must not be empty")
        job = self.jobs.get(job_id)
        if job is None:
            raise UnknownJobError(job_id)
        if job.state != "dead":
            raise ConflictError(f"job {job_id} is {job.state}, not dead", job_id=job_id)
        move = self.jobs.rerun if what is EventType.JOB_RERUN else self.jobs.drop
        with self.events.db.transaction() as tx:
            if not move(job_id, tx):
                why = "a newer job holds its key" if what is EventType.JOB_RERUN else "it moved"
                raise ConflictError(f"job {job_id} was left as it is: {why}", job_id=job_id)
            event = self.events.append_in(
                tx, what, {**_fate(job), "operator": operator, "reason": reason}
            )
        self.events.publish([event])
        if what is EventType.JOB_RERUN:
            self.jobs.wake(job.kind)
        after = self.jobs.get(job_id)
        assert after is not None  # a job row is never deleted
        return after


def _fate(job: Job) -> dict[str, object]:
    return {
        "job_id": job.id,
        "kind": job.kind,
        "unique_key": job.unique_key,
        "attempts": job.attempts,
        "error": job.last_error,
    }
