"""What the job engine stores and what a kind promises: :class:`Job` and :class:`Kind`.

A job is one row of ``jobs``; a kind is the code that runs it plus its limits (how many
run at once in one process, how many attempts, the backoff between them, the lease). The
engine knows kinds only by name: the domain registers them.
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from backend.store.db import Row, loads

JobState = Literal["queued", "running", "done", "failed", "dead", "cancelled"]
"""``failed`` waits for its retry at ``run_at``; ``dead`` ran out of attempts."""

UNFINISHED: frozenset[JobState] = frozenset({"queued", "running", "failed"})
"""States that hold a unique key: enqueueing the key again adds no job."""


@dataclass(frozen=True)
class Job:
    """One job as stored."""

    id: int
    kind: str
    payload: dict[str, Any]
    unique_key: str | None
    state: JobState
    run_at: float
    period_s: float | None
    attempts: int
    max_attempts: int
    owner: str | None
    lease_until: float
    last_error: str | None
    created_at: str
    updated_at: str
    again: bool = False
    """Asked for again while it ran: it is queued once more when this attempt ends."""

    @classmethod
    def from_row(cls, row: Row) -> Job:
        """Build from a ``jobs`` row."""
        period = row["period_s"]
        return cls(
            id=int(row["id"]),
            kind=row["kind"],
            payload=loads(row["payload"]) or {},
            unique_key=row["unique_key"],
            state=cast(JobState, row["state"]),
            run_at=float(row["run_at"]),
            period_s=float(period) if period is not None else None,
            attempts=int(row["attempts"]),
            max_attempts=int(row["max_attempts"]),
            owner=row["owner"],
            lease_until=float(row["lease_until"]),
            last_error=row["last_error"],
            created_at=str(row["created_at"]),
            updated_at=str(row["updated_at"]),
            again=bool(row.get("again") or False),
        )


@dataclass(frozen=True)
class Backoff:
    """Exponential backoff with full jitter: attempt ``n`` waits ``U(0, min(max_s,
    base_s·2ⁿ⁻¹))``, so workers that failed together do not retry together."""

    base_s: float = 1.0
    max_s: float = 300.0

    def delay(self, attempt: int, rng: random.Random | None = None) -> float:
        """Seconds before the retry that follows failed attempt ``attempt`` (1-based)."""
        ceiling = min(self.max_s, self.base_s * 2 ** max(0, attempt - 1))
        return (rng or random).uniform(0, ceiling)


Handler = Callable[["Job"], Any] | Callable[["Job"], Awaitable[Any]]
"""Runs one job; a plain function runs in a thread, a coroutine function on the loop."""


@dataclass(frozen=True)
class Kind:
    """A registered kind of job.

    Attributes:
        name: the kind, as stored in ``jobs.kind``.
        handler: runs one job; returning is success, raising is a failed attempt.
        concurrency: jobs of this kind one process runs at once.
        max_attempts: claims of one job (each crash or failure costs one) before it is dead.
        backoff: the delay before a retry when the handler gives none.
        lease_s: how long a claim or a heartbeat holds a job; beats every third of it.
        on_dead: told of each job of this kind that ran out of attempts (the domain says so
            where its users look); an error in it is logged, never the job's.
        stop_grace_s: how long a stopping worker lets a running job finish before it gives
            the claim back (a thread cannot be cancelled: it would run on unowned).
    """

    name: str
    handler: Handler
    concurrency: int = 1
    max_attempts: int = 5
    backoff: Backoff = field(default_factory=Backoff)
    lease_s: float = 30.0
    on_dead: Callable[[Job], None] | None = None
    stop_grace_s: float = 30.0
