"""The webhook channel: one JSON POST per message to ``CADENCIA_CHANNEL_WEBHOOK_URL``.

Each request carries the message's ``Idempotency-Key``, the same on every retry, so a
receiver that honours it shows the message once however many times the answer was lost.
Connection errors, timeouts, 5xx and 429 are transient (retried by the delivery job); any
other non-2xx answer is the receiver refusing the message for good. Sent with urllib3's
pool, not httpx: about a third less CPU per request on this hot path (ADR 0011).
"""

from __future__ import annotations

import json

import urllib3
from urllib3.exceptions import HTTPError as TransportError

from backend.channel.base import OutboundMessage
from backend.channel.exceptions import ChannelError, RetryableChannelError


def _retry_after(value: str | None) -> float | None:
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None  # an HTTP date: the backoff schedule decides instead


class WebhookChannel:
    """POSTs each message to ``url``; see the module docstring for what is retried."""

    name = "webhook"

    def __init__(self, url: str, *, timeout_s: float = 5.0) -> None:
        self.url = url
        # retries=False: the delivery worker owns retries (with backoff and the same key);
        # redirects are not followed, a 3xx is the receiver refusing the message.
        self._http = urllib3.PoolManager(
            maxsize=8,
            timeout=urllib3.Timeout(connect=timeout_s, read=timeout_s),
            retries=False,
        )

    def send(self, message: OutboundMessage) -> None:
        """Deliver ``message``; raises a channel error when the receiver did not take it."""
        body = json.dumps(message.body(), ensure_ascii=False, separators=(",", ":"))
        try:
            response = self._http.request(
                "POST",
                self.url,
                body=body.encode("utf-8"),
                headers={
                    "Content-Type": "application/json",
                    "Idempotency-Key": message.idempotency_key,
                },
                redirect=False,
            )
        except TransportError as exc:
            # Covers connect errors, timeouts and a connection dropped mid-answer: whether
            # the receiver got it is unknown, so resend with the same key.
            raise RetryableChannelError(f"{type(exc).__name__}: {exc}") from exc
        status = response.status
        if 200 <= status < 300:
            return
        text = response.data[:200].decode("utf-8", errors="replace")
        detail = f"HTTP {status}: {text}"
        if status == 429 or status >= 500:
            raise RetryableChannelError(
                detail, retry_after_s=_retry_after(response.headers.get("Retry-After"))
            )
        raise ChannelError(detail)

    def close(self) -> None:
        """Close the connection pool."""
        self._http.clear()
