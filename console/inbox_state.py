"""What the App knows about the Inbox: the items (server order), which ones the operator
has not looked at yet, and the bell for arrivals. Mixed into the App."""

from __future__ import annotations

from typing import TYPE_CHECKING

from console.inbox_view import arrivals
from console.models_inbox import InboxItem

if TYPE_CHECKING:
    from console.app import CadenciaConsole


class InboxStateMixin:
    """Mixed into :class:`~console.app.CadenciaConsole` (which calls :meth:`_init_inbox`)."""

    inbox: list[InboxItem]
    inbox_seen: set[str]
    inbox_problem: str
    bells: int

    def _init_inbox(self) -> None:
        self.inbox = []
        """``GET /api/inbox``, most urgent first, as the server ordered it."""
        self.inbox_seen = set()
        """Ids on the Inbox the last time the operator left it (or opened the item)."""
        self.inbox_problem = ""
        """Why the Inbox could not be fetched (an older backend without the route)."""
        self.bells = 0
        """Bells rung for arrivals (``--bell``); tests and the operator's log read it."""
        self._inbox_known: set[str] | None = None

    def apply_inbox(self: CadenciaConsole, items: list[InboxItem]) -> None:  # type: ignore[misc]
        """Take a fresh Inbox; ring the bell once if something arrived since the last one."""
        arrived = arrivals(self._inbox_known, items)
        self._inbox_known = {i.id for i in items}
        self.inbox = items
        self.inbox_problem = ""
        if arrived and self.settings.bell:
            self.bells += 1
            self.bell()

    def inbox_is_new(self, item: InboxItem) -> bool:
        """True while the operator has not looked at ``item`` on the Inbox."""
        return item.id not in self.inbox_seen

    def mark_inbox_seen(self, ids: set[str] | None = None) -> None:
        """The operator looked: at ``ids`` (an opened item), or at the whole list (left it)."""
        if ids is None:
            self.inbox_seen = {i.id for i in self.inbox}
        else:
            self.inbox_seen |= ids
