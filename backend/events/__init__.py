"""The append-only event log (:mod:`.log`) and the catalog of event types (:mod:`.catalog`).

``from backend.events import EventLog, EventType`` is the public surface; the payload
models live in :mod:`.payloads`.
"""

from __future__ import annotations

from backend.events.catalog import (
    DESCRIPTIONS,
    EVENTS,
    PAYLOADS,
    TENTATIVA,
    EventSpec,
    EventType,
    check_payload,
    event_type,
)
from backend.events.log import Event, EventLog, Listener, utcnow_iso

__all__ = [
    "DESCRIPTIONS",
    "EVENTS",
    "PAYLOADS",
    "TENTATIVA",
    "Event",
    "EventLog",
    "EventSpec",
    "EventType",
    "Listener",
    "check_payload",
    "event_type",
    "utcnow_iso",
]
