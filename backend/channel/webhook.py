"""The webhook channel: one JSON POST per message to ``CADENCIA_CHANNEL_WEBHOOK_URL``.

Each request carries the message's ``Idempotency-Key``, the same on every retry, so a
receiver that honours it shows the message once however many times the answer was lost.
Connection errors, timeouts, 5xx and 429 are transient (retried by the delivery worker);
any other non-2xx answer is the receiver refusing the message for good.
"""

from __future__ import annotations

import httpx

from backend.channel.base import OutboundMessage
from backend.channel.exceptions import ChannelError, RetryableChannelError


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("Retry-After")
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None  # an HTTP date: the backoff schedule decides instead


class WebhookChannel:
    """POSTs each message to ``url``; see the module docstring for what is retried."""

    name = "webhook"

    def __init__(self, url: str, *, timeout_s: float = 5.0) -> None:
        self.url = url
        self._http = httpx.Client(timeout=timeout_s)

    def send(self, message: OutboundMessage) -> None:
        """Deliver ``message``; raises a channel error when the receiver did not take it."""
        try:
            response = self._http.post(
                self.url,
                json=message.body(),
                headers={"Idempotency-Key": message.idempotency_key},
            )
        except httpx.HTTPError as exc:
            # Covers connect errors, timeouts and a connection dropped mid-answer: whether
            # the receiver got it is unknown, so resend with the same key.
            raise RetryableChannelError(f"{type(exc).__name__}: {exc}") from exc
        if response.is_success:
            return
        detail = f"HTTP {response.status_code}: {response.text[:200]}"
        if response.status_code == 429 or response.status_code >= 500:
            raise RetryableChannelError(detail, retry_after_s=_retry_after(response))
        raise ChannelError(detail)

    def close(self) -> None:
        """Close the connection pool."""
        self._http.close()
