"""Errors of the job engine.

Tree::

    CadenciaError                  (backend/exceptions.py)
    └── NotFoundError
        └── UnknownKindError       no handler is registered for a job's kind

    Exception
    └── JobError                   base of what a handler raises to steer its job
        └── RetryAfterError        try again after ``after_s`` seconds, not the backoff's

A ``JobError`` is a signal from a handler to its worker and never leaves the engine, so it
is not a ``CadenciaError``: no API answer is ever made of one. Any other exception a
handler raises is a failed attempt retried with backoff.
"""

from __future__ import annotations

from backend.exceptions import NotFoundError

__all__ = ["JobError", "RetryAfterError", "UnknownKindError"]


class UnknownKindError(NotFoundError):
    """A job was enqueued or scheduled for a kind nobody registered.

    Attributes:
        kind: the kind asked for.
    """

    def __init__(self, kind: str) -> None:
        super().__init__(f"no job handler is registered for kind {kind!r}")
        self.kind = kind


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
