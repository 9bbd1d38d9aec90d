"""The one timestamp format of the product: UTC, ISO 8601, milliseconds, ``Z``.

A leaf module (it imports nothing of ours), so any package can stamp a row without
depending on the event log.
"""

from __future__ import annotations

from datetime import UTC, datetime


def utcnow_iso() -> str:
    """Now, UTC, ISO-8601 with milliseconds and a ``Z`` like the seed's events."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
