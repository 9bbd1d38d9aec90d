"""An Inbox item's deadline as the console shows it: time left or overdue, and its state.

The server sends ``due_at`` and ``sla_state`` as of its answer; the list is refetched only
when an event says it changed, so the console recomputes the state from ``due_at`` on its
own clock every second (the way ages move): a row turns ``breached`` on time, and the
header and ``--bell`` follow, with no request. An item from a server older than SLAs has
no ``due_at``: no deadline, never breached. Pure, tested with plain asserts.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from rich.style import Style
from rich.text import Text

from console.models_inbox import InboxItem, SlaState
from console.state import since_text

WARNING_AT = 0.75
"""The share of its SLA after which an item is ``warning`` (the backend's rule)."""
DUE_STYLE: dict[SlaState, str] = {"ok": "dim", "warning": "yellow", "breached": "bold red"}
"""The time-left cell's style per state."""
ROW_STYLE: dict[SlaState, str] = {"ok": "", "warning": "", "breached": "on #3a0d0d"}
"""A background for a whole row: breached rows stand out; warning rows only in their
time-left cell (:data:`DUE_STYLE`), so a long list is not a wall of colour."""


LONG_S = 99 * 86400.0
"""Beyond this, time left is shown as ``>99d``: it fits the column and says enough."""


def _moment(stamp: str | None) -> datetime | None:
    if not stamp:
        return None
    try:
        moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else None


def sla_state(item: InboxItem, now: datetime) -> SlaState | None:
    """``ok`` | ``warning`` | ``breached`` at ``now``; the server's word when ``due_at``
    does not parse; None when the item has no deadline (an older server)."""
    due = _moment(item.due_at)
    if due is None:
        return item.sla_state
    if now >= due:
        return "breached"
    since = _moment(item.since)
    if since is not None and since < due and now >= since + (due - since) * WARNING_AT:
        return "warning"
    return "ok"


def due_text(item: InboxItem, now: datetime) -> str:
    """``4m left``, ``12s over``; ``—`` with no deadline (``overdue`` when only the
    server's state says so)."""
    due = _moment(item.due_at)
    if due is None:
        return "overdue" if item.sla_state == "breached" else "—"
    left = (due - now).total_seconds()
    if left > LONG_S:
        return ">99d"  # a deadline that far is none an operator plans by
    if left > 0:
        return f"{since_text(left)} left"
    return f"{since_text(-left)} over"


def due_cell(item: InboxItem, now: datetime) -> Text:
    """The time-left cell: its words and its state's colour."""
    state = sla_state(item, now)
    return Text(due_text(item, now), style=DUE_STYLE.get(state, "dim") if state else "dim")


def paint_row(cells: tuple[object, ...], state: SlaState | None) -> tuple[object, ...]:
    """``cells`` on the row background of ``state`` (unchanged when it has none)."""
    background = ROW_STYLE.get(state, "") if state else ""
    if not background:
        return cells
    painted: list[object] = []
    for cell in cells:
        text = cell.copy() if isinstance(cell, Text) else Text(str(cell))
        own = text.style if isinstance(text.style, Style) else Style.parse(text.style or "")
        text.style = Style.parse(background) + own
        painted.append(text)
    return tuple(painted)


def breached_ids(items: Iterable[InboxItem], now: datetime) -> set[str]:
    """The ids of the items past their deadline at ``now``."""
    return {i.id for i in items if sla_state(i, now) == "breached"}


def breached_first(items: Iterable[InboxItem], now: datetime) -> list[InboxItem]:
    """``items`` with the breached ones first, each group in its given (server) order."""
    found = list(items)
    late = breached_ids(found, now)
    return [i for i in found if i.id in late] + [i for i in found if i.id not in late]


class BreachWatch:
    """Which breaches the operator was already told of: each item rings once, ever.

    The first look is the console's start: what is breached then is on screen (the header
    counts it) but is not news. Afterwards an item that becomes breached, or arrives
    breached, is new once; leaving the Inbox and coming back does not make it new again.
    """

    def __init__(self) -> None:
        self.known: set[str] | None = None

    def new(self, items: Iterable[InboxItem], now: datetime) -> set[str]:
        """The ids breached at ``now`` that were never reported; they are reported now."""
        late = breached_ids(items, now)
        if self.known is None:
            self.known = late
            return set()
        fresh = late - self.known
        self.known |= fresh
        return fresh
