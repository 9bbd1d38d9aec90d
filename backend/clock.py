"""The one timestamp format of the product: UTC, ISO 8601, milliseconds, ``Z``.

Every stored or shown stamp is made here, so rows written by any package sort and compare
as text in time order. A leaf module (it imports nothing of ours), so any package can stamp
a row without depending on the event log.
"""

from __future__ import annotations

from datetime import UTC, datetime


def utc_iso(moment: datetime) -> str:
    """``moment`` in the one format (a naive datetime is taken as UTC)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def parse_moment(value: object) -> datetime | None:
    """A stored or received stamp (PostgreSQL's datetime, or ISO 8601 text with ``Z`` or an
    offset; a naive one is UTC) as an aware datetime; ``None`` when it cannot be read."""
    if isinstance(value, datetime):
        moment = value
    else:
        try:
            moment = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
        except ValueError:
            return None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment


def utcnow_iso() -> str:
    """Now, UTC, ISO-8601 with milliseconds and a ``Z`` like the seed's events."""
    return utc_iso(datetime.now(UTC))
