"""What screens and the operator actions tell the App: Textual messages that bubble up.

Data goes down to screens as attributes (:class:`console.view.ConsoleView`); anything that
changes the App's state comes back up as one of these, so no screen reaches into the App.
"""

from __future__ import annotations

from textual.message import Message

from console.takeover import Outcome


class InboxSeen(Message):
    """The operator looked at these Inbox items (opened one, or read the list)."""

    def __init__(self, ids: frozenset[str]) -> None:
        super().__init__()
        self.ids = ids


class ContractBroken(Message):
    """A response the console cannot read: the App shows it until the route reads well."""

    def __init__(self, route: str, field: str, detail: str) -> None:
        super().__init__()
        self.route = route
        self.field = field
        self.detail = detail


class ActionReported(Message):
    """An operator action's answer: its outcome on the item, a feed line, what to refetch."""

    def __init__(
        self,
        item_key: str,
        outcome: Outcome | None,
        feed: tuple[str, str] | None,
        *,
        roster: bool = False,
    ) -> None:
        super().__init__()
        self.item_key = item_key
        self.outcome = outcome
        self.feed = feed
        self.roster = roster
