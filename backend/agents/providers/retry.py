"""Retries around a real model provider: exponential backoff with full jitter, ``Retry-After``
honoured, everything within one per-call deadline.

What is retried is what the provider marked ``retryable`` on its :class:`ProviderError`
(HTTP 429 and 5xx, transport errors and timeouts, Bedrock's throttling-class errors); a
4xx other than 429 is the request's fault and is never retried. :class:`RetryingProvider`
gives the delays and the deadline.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any

from backend.agents.providers.base import Message, ModelProvider, ModelTurn, ToolSpec
from backend.agents.providers.exceptions import ProviderError, ProviderTimeoutError

log = logging.getLogger(__name__)

RETRYABLE_HTTP = frozenset({429}) | frozenset(range(500, 600))
"""HTTP statuses a retry can get past: any other 4xx is the request's fault."""
RETRYABLE_AWS_CODES = frozenset(
    {
        "ThrottlingException",
        "ServiceUnavailableException",
        "ModelNotReadyException",
        "InternalServerException",
    }
)


def retryable_status(status: int) -> bool:
    """Whether an HTTP error status is worth retrying: 429 and 5xx."""
    return status in RETRYABLE_HTTP


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header: delta-seconds or an HTTP date.

    Returns None when the header is absent or unreadable; a date in the past is 0.
    """
    if value is None or not value.strip():
        return None
    text = value.strip()
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


@dataclass(frozen=True)
class RetryPolicy:
    """How a provider call is retried (``CADENCIA_PROVIDER_*``)."""

    retries: int = 4
    base_s: float = 0.5
    max_s: float = 8.0
    deadline_s: float = 120.0

    @classmethod
    def from_settings(cls, settings: Any) -> RetryPolicy:
        """The policy of a :class:`backend.settings.Settings` (defaults for missing fields)."""
        return cls(
            retries=int(getattr(settings, "provider_retries", cls.retries)),
            base_s=float(getattr(settings, "provider_backoff_s", cls.base_s)),
            max_s=float(getattr(settings, "provider_backoff_max_s", cls.max_s)),
            deadline_s=float(getattr(settings, "provider_deadline_s", cls.deadline_s)),
        )

    def backoff(self, attempt: int, rand: float) -> float:
        """Full-jitter delay before retry ``attempt`` (0-based), ``rand`` in [0, 1)."""
        return rand * min(self.max_s, self.base_s * (2**attempt))


class RetryingProvider:
    """A :class:`ModelProvider` that retries another one.

    Reads of attributes it does not have (``model``, ``url``, ``client``...) go to the
    wrapped provider, so code that inspects a built provider keeps working.

    The delay before retry ``n`` (0-based) is ``uniform(0, min(max_s, base_s * 2**n))`` ("full
    jitter": many agents throttled together do not come back in lockstep), or the provider's
    ``Retry-After`` when it sent one. A wait that would end after the deadline is not started:
    the last error goes to the caller at once, carrying the provider's ``Retry-After`` (the
    API's own ``Retry-After``). ``sleep``, ``clock`` and ``rand`` are injectable so tests
    neither sleep nor depend on chance.

    Args:
        inner: the provider that talks to the model.
        policy: retries, backoff and deadline.
        sleep: awaited between attempts (tests pass a recorder).
        clock: monotonic seconds (the deadline).
        rand: the jitter source, in [0, 1).
    """

    def __init__(
        self,
        inner: ModelProvider,
        policy: RetryPolicy,
        *,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
        clock: Callable[[], float] = time.monotonic,
        rand: Callable[[], float] = random.random,
    ) -> None:
        self.inner = inner
        self.policy = policy
        self.name = inner.name
        self._sleep = sleep
        self._clock = clock
        self._rand = rand
        self.attempts = 0
        """Calls made to ``inner`` over this provider's life (for tests and logs)."""

    def __getattr__(self, item: str) -> Any:
        if item == "inner":  # not set yet (unpickling, a half-built instance)
            raise AttributeError(item)
        return getattr(self.inner, item)

    async def complete(
        self, *, system: str, messages: list[Message], tools: list[ToolSpec]
    ) -> ModelTurn:
        """The inner provider's turn, retried while retryable and inside the deadline.

        Raises:
            ProviderError: not retryable, retries spent, or the deadline reached; the last
                error, with ``attempts`` in its context.
        """
        start = self._clock()
        deadline = start + self.policy.deadline_s
        retry = 0
        while True:
            remaining = deadline - self._clock()
            try:
                self.attempts += 1
                return await asyncio.wait_for(
                    self.inner.complete(system=system, messages=messages, tools=tools),
                    timeout=max(remaining, 0.001),
                )
            except TimeoutError as exc:
                error: ProviderError = ProviderTimeoutError(
                    f"{self.name} did not answer within the {self.policy.deadline_s:g}s "
                    "deadline of this call",
                    retryable=False,
                )
                error.__cause__ = exc
            except ProviderError as exc:
                error = exc
            wait = self._wait(error, retry, deadline)
            if wait is None:
                error.context.setdefault("attempts", retry + 1)
                raise error
            log.warning(
                "%s: retry %d/%d in %.2fs after: %s",
                self.name,
                retry + 1,
                self.policy.retries,
                wait,
                error.message,
            )
            await self._sleep(wait)
            retry += 1

    def _wait(self, error: ProviderError, retry: int, deadline: float) -> float | None:
        """Seconds to wait before the next attempt, or None to give up now."""
        if not error.retryable or retry >= self.policy.retries:
            return None
        hinted = error.retry_after_s
        wait = float(hinted) if hinted is not None else self.policy.backoff(retry, self._rand())
        if self._clock() + wait >= deadline:
            return None  # the answer would come after the caller stopped waiting
        return wait
