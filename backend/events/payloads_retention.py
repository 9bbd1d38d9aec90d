"""Payload models of the retention events (``cadencia events archive`` / ``restore``).

Retention's own events, apart from the product's in :mod:`backend.events.payloads` (same
base, same rules).
"""

from __future__ import annotations

from backend.events.payloads import Payload


class EventsArchived(Payload):
    file: str  # the archive's file name (not its directory)
    before: str  # YYYY-MM-DD: events before 00:00 UTC of that day were candidates
    archived: int
    kept: int  # older events kept because live state still reads them
    first_id: int | None
    last_id: int | None


class EventsRestored(Payload):
    file: str
    restored: int
    skipped: int  # ids already in the log
