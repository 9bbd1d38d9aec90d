"""Durable jobs: work that must happen later or survive a crash, in one engine.

Jobs live in the ``jobs`` table of the state database (SQLite embedded, PostgreSQL for
several processes). A job is claimed with a lease by one conditional UPDATE, heartbeats
while its handler runs, is taken again by one worker once a lease lapses, retries with
full-jitter backoff (or the handler's :class:`RetryAfterError`), and is ``dead`` after
its kind's ``max_attempts``. Enqueue is idempotent by unique key; ``run_at`` makes a
durable timer; :meth:`Jobs.every` a recurring job. The package imports nothing of the
domain: the domain registers a handler per kind.
"""

from __future__ import annotations

from backend.jobs.engine import Jobs
from backend.jobs.exceptions import (
    GiveUpError,
    JobError,
    RetryAfterError,
    SnoozeError,
    UnknownJobError,
    UnknownKindError,
)
from backend.jobs.models import Backoff, Job, JobState, Kind

__all__ = [
    "Backoff",
    "GiveUpError",
    "Job",
    "JobError",
    "JobState",
    "Jobs",
    "Kind",
    "RetryAfterError",
    "SnoozeError",
    "UnknownJobError",
    "UnknownKindError",
]
