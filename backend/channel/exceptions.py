"""Errors raised by outbound channels: :class:`ChannelError` (the channel did not take the
message) and :class:`RetryableChannelError` (connection error, timeout, 5xx or 429: try
again), both ``UnavailableError``. They never reach an API caller: delivery runs in the
background and records the error in the delivery journal, where the conversation shows it.
"""

from __future__ import annotations

from backend.exceptions import UnavailableError

__all__ = ["ChannelError", "RetryableChannelError"]


class ChannelError(UnavailableError):
    """The channel refused the message for good (e.g. a 4xx other than 429)."""

    code = "channel_error"


class RetryableChannelError(ChannelError):
    """A transient failure: the same message (same idempotency key) may be sent again.

    Attributes:
        retry_after_s: the receiver's ``Retry-After`` when it gave one, else None.
    """

    code = "channel_unavailable"

    def __init__(self, message: str, *, retry_after_s: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after_s
