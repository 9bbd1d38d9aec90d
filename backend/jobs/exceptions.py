"""Errors of the job engine. ``UnknownKindError`` and ``UnknownJobError`` are ``NotFoundError``
(an API answer can be made of them). A handler steers its job by raising a ``JobError``:
:class:`RetryAfterError` (retry after ``after_s``), :class:`SnoozeError` (not now, no
attempt spent) or :class:`GiveUpError` (dead at once). A ``JobError`` never leaves the
engine, so it is not a ``CadenciaError``; any other exception is a failed attempt retried
with backoff.
"""

from __future__ import annotations

from backend.exceptions import NotFoundError

__all__ = [
    "GiveUpError",
    "JobError",
    "RetryAfterError",
    "SnoozeError",
    "UnknownJobError",
    "UnknownKindError",
]


class UnknownKindError(NotFoundError):
    """A job was enqueued or scheduled for a kind nobody registered.

    Attributes:
        kind: the kind asked for.
    """

    def __init__(self, kind: str) -> None:
        super().__init__(f"no job handler is registered for kind {kind!r}")
        self.kind = kind


class UnknownJobError(NotFoundError):
    """No job has this id.

    Attributes:
        job_id: the id asked for.
    """

    def __init__(self, job_id: int) -> None:
        super().__init__(f"no job {job_id}", job_id=job_id)
        self.job_id = job_id


class JobError(Exception):
    """Base of the errors a handler raises to tell the engine what to do with its job."""


class RetryAfterError(JobError):
    """This attempt failed; the next one runs ``after_s`` seconds from now.

    The attempt still counts towards the kind's ``max_attempts``.

    Attributes:
        after_s: the delay the handler asks for (e.g. a remote's ``Retry-After``).
    """

    def __init__(self, after_s: float, message: str = "retry later") -> None:
        super().__init__(message)
        self.after_s = max(0.0, float(after_s))


class SnoozeError(JobError):
    """The job cannot run now (its agent is paused, say): queue it ``after_s`` from now.

    The attempt is refunded, so waiting never makes a job dead.

    Attributes:
        after_s: how long to wait before the next try.
    """

    def __init__(self, after_s: float, message: str = "not now") -> None:
        super().__init__(message)
        self.after_s = max(0.0, float(after_s))


class GiveUpError(JobError):
    """Retrying cannot help (the remote refused the request as malformed): the job is dead
    now, whatever attempts it has left, and waits for an operator in the inbox."""
