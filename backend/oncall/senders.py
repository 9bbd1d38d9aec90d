"""The two wire formats on-call messages go out in: PagerDuty Events API v2 and a
Slack-compatible incoming webhook. Each send is one HTTP POST; what the answer means for
a retry is decided here, once, for both:

- 2xx: sent;
- 429, or 5xx, or no answer: try again (after ``Retry-After`` when the remote gives one);
- any other 4xx: the request itself is wrong, retrying cannot help (:class:`GiveUpError`:
  the job is dead and shows in the inbox).
"""

from __future__ import annotations

from typing import Any

import httpx

from backend.jobs import GiveUpError, RetryAfterError

TIMEOUT_S = 10.0


def post_json(url: str, body: dict[str, Any], *, timeout_s: float = TIMEOUT_S) -> int:
    """POST ``body``; its status when 2xx, else raise for the job engine (see above)."""
    try:
        answer = httpx.post(url, json=body, timeout=timeout_s)
    except httpx.HTTPError as exc:
        raise ConnectionError(f"{url} did not answer: {exc}") from exc
    if answer.is_success:
        return answer.status_code
    said = answer.text[:300]
    if answer.status_code == 429 or answer.status_code >= 500:
        after = _retry_after(answer.headers.get("Retry-After"))
        message = f"{url} answered {answer.status_code}: {said}"
        if after is not None:
            raise RetryAfterError(after, message)
        raise ConnectionError(message)
    raise GiveUpError(f"{url} refused the event ({answer.status_code}): {said}")


def _retry_after(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        return max(0.0, min(float(value), 3600.0))
    except ValueError:
        return None  # an HTTP date: the backoff decides


def pagerduty_event(
    routing_key: str,
    action: str,
    dedup_key: str,
    *,
    summary: str = "",
    source: str = "",
    severity: str = "warning",
    details: dict[str, Any] | None = None,
    link: str | None = None,
) -> dict[str, Any]:
    """An Events API v2 event: ``trigger`` with its payload, or ``acknowledge``/``resolve``."""
    event: dict[str, Any] = {
        "routing_key": routing_key,
        "event_action": action,
        "dedup_key": dedup_key,
    }
    if action == "trigger":
        event["payload"] = {
            "summary": summary[:1024],
            "source": source,
            "severity": severity,
            "custom_details": details or {},
        }
        if link:
            event["links"] = [{"href": link, "text": "Open in Cadência Ops"}]
    return event


def chat_message(event: str, item: dict[str, Any], link: str | None) -> dict[str, Any]:
    """A Slack-compatible body: ``text`` for people, the item's fields for machines."""
    verbs = {"new": "waiting", "breached": "PAST ITS SLA", "resolved": "resolved"}
    text = f"[{verbs.get(event, event)}] {item['kind']}: {item['title']}"
    if link:
        text += f" <{link}|open>"
    return {"text": text, "event": event, "item": item, "link": link}
