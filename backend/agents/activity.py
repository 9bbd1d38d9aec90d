"""One operator-readable line per event: the activity feed.

:func:`render` turns any event — a ``backend.events.Event``, any object with the same
attributes, or a mapping — into an :class:`ActivityLine`; it never raises, whatever the
payload holds. The event types themselves (names, meanings, payload models) are
``backend.events.EventType`` and its catalog; the per-type texts are in
:mod:`backend.agents.activity_texts`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from backend.agents.activity_texts import RENDERERS, EventView, Payload, clip
from backend.events import TENTATIVA
from backend.redact import redact_text

__all__ = ["TENTATIVA", "ActivityLine", "EventView", "as_event", "generic_text", "render"]


def as_event(obj: Any) -> EventView:
    """View ``obj`` (a mapping or an object with event attributes) as an :class:`EventView`.

    Missing or odd fields get harmless defaults; a payload that is not a mapping is kept
    under ``{"value": ...}`` so nothing downstream has to type-check it again.
    """
    if isinstance(obj, EventView):
        return obj
    get: Callable[[str], Any]
    if isinstance(obj, Mapping):
        get = obj.get
    else:

        def get(name: str) -> Any:
            return getattr(obj, name, None)

    payload = get("payload")
    if payload is None:
        payload = {}
    elif isinstance(payload, Mapping):
        payload = dict(payload)
    else:
        payload = {"value": payload}
    try:
        event_id = int(get("id") or 0)
    except (TypeError, ValueError):
        event_id = 0
    return EventView(
        id=event_id,
        type=str(get("type") or "unknown"),
        ts=str(get("ts") or ""),
        project_id=_opt_str(get("project_id")),
        session_id=_opt_str(get("session_id")),
        agent=_opt_str(get("agent")),
        payload=payload,
    )


def _opt_str(value: Any) -> str | None:
    return None if value is None else str(value)


@dataclass(frozen=True)
class ActivityLine:
    """One line of the activity feed; ``kind`` is the event type."""

    id: int
    ts: str
    kind: str
    text: str

    def to_dict(self) -> dict[str, Any]:
        """The HTTP API's shape ``{id, ts, kind, text}``."""
        return {"id": self.id, "ts": self.ts, "kind": self.kind, "text": self.text}


def render(event: Any) -> ActivityLine:
    """Render ``event`` as one English line for operators. Never raises.

    Any URL the line quotes (a provider's error, a spec) is shown without credentials,
    whatever the event recorded.
    """
    view = as_event(event)
    renderer = RENDERERS.get(view.type)
    text: str | None = None
    if renderer is not None:
        try:
            text = renderer(Payload(view))
        except Exception:
            text = None
    return ActivityLine(view.id, view.ts, view.type, redact_text(text or generic_text(view)))


def generic_text(view: EventView) -> str:
    """The line of an event no renderer knows (or whose renderer gave up on the payload)."""
    who = f" by {view.agent}" if view.agent else ""
    keys = [k for k in view.payload if not k.startswith("_")][:4]
    details = ", ".join(f"{k}={clip(view.payload[k], 40)}" for k in keys)
    return f"{view.type}{who}" + (f" ({details})" if details else "")
