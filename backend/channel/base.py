"""The outbound channel interface and the retry schedule every channel shares.

A channel takes one :class:`OutboundMessage` per call and either accepts it or raises a
:mod:`backend.channel.exceptions` error. The idempotency key is fixed per message when the
message is recorded, so a retry after a lost answer can never deliver it twice to a
receiver that honours the key.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict

from backend.channel.exceptions import ChannelError, RetryableChannelError

__all__ = [
    "Channel",
    "ChannelError",
    "OutboundMessage",
    "RetryPolicy",
    "RetryableChannelError",
]


class OutboundMessage(BaseModel):
    """What a channel receives (the webhook's JSON body)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    message_id: int
    conversa_id: str
    autor: str
    texto: str
    ts: str
    idempotency_key: str

    def body(self) -> dict[str, Any]:
        """The JSON body sent to the customer's channel."""
        return {
            "messageId": self.message_id,
            "conversaId": self.conversa_id,
            "autor": self.autor,
            "texto": self.texto,
            "ts": self.ts,
        }


class Channel(Protocol):
    """Delivers one message to the customer (blocking; the worker runs it in a thread)."""

    name: str

    def send(self, message: OutboundMessage) -> None:
        """Hand ``message`` over.

        Raises:
            RetryableChannelError: a transient failure; send again later with the same key.
            ChannelError: the channel refused it for good.
        """
        ...

    def close(self) -> None:
        """Release connections."""
        ...


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff with full jitter, bounded by a total deadline.

    Delay ``n`` (before attempt ``n + 2``) is drawn uniformly from
    ``[0, min(max_s, base_s * 2**n)]`` ("full jitter": concurrent senders that failed
    together do not retry in lockstep). Retrying stops once the next attempt would start
    more than ``deadline_s`` after the first one.
    """

    base_s: float = 0.5
    max_s: float = 10.0
    deadline_s: float = 60.0

    def ceiling(self, n: int) -> float:
        """The largest delay before retry ``n`` (0-based), before jitter."""
        return float(min(self.max_s, self.base_s * (2**n)))

    def next_delay(
        self, n: int, elapsed_s: float, rng: random.Random, retry_after_s: float | None = None
    ) -> float | None:
        """The delay before retry ``n`` (0-based) when ``elapsed_s`` have passed since the
        first attempt, or None when that retry would start after the deadline.

        A receiver's ``Retry-After`` longer than the jittered delay wins (capped at
        ``max_s``): it knows best when it can take the message again.
        """
        delay = rng.uniform(0.0, self.ceiling(n))
        if retry_after_s is not None:
            delay = max(delay, min(retry_after_s, self.max_s))
        if elapsed_s + delay > self.deadline_s:
            return None
        return delay
