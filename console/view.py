"""What a screen may read of the console: the data and signals the App hands down.

Every screen is built with one :class:`ConsoleView` (the App satisfies it) and reads from it;
it changes nothing on it. What a screen wants done goes up as a message
(:mod:`console.messages`) or through the operator actions it is given.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Protocol

from textual.signal import Signal

from console.client import ConsoleClient
from console.config import ConsoleSettings
from console.feed import FeedLine
from console.models import Approvals, RosterEntry
from console.models_inbox import InboxItem
from console.operator_actions import OperatorActions
from console.takeover import Outcome


class ConsoleView(Protocol):
    """The App's state as screens see it."""

    settings: ConsoleSettings
    client: ConsoleClient
    actions: OperatorActions
    now: Callable[[], datetime]
    """Wall clock for ages (frozen in snapshot tests)."""
    connection: str
    stale_seconds: int
    paused: bool
    paused_count: int
    roster: dict[str, RosterEntry]
    approvals: Approvals
    inbox: list[InboxItem]
    inbox_problem: str
    contract_errors: dict[str, tuple[str, str]]
    outcomes: dict[str, Outcome]
    me: str | None
    """The operator the token names (``GET /api/me``), once known."""
    roster_changed: Signal[None]
    approvals_changed: Signal[None]
    feed_appended: Signal[list[FeedLine]]
    status_changed: Signal[None]
    item_changed: Signal[str]
    conversation_changed: Signal[str]
    clock_ticked: Signal[None]

    def awaiting(self) -> tuple[int, int]:
        """(PRs awaiting a human, unclaimed takeovers) for the header."""
        ...

    def breached_count(self) -> int:
        """How many Inbox items are past their deadline now (the header's count)."""
        ...

    def inbox_is_new(self, item: InboxItem) -> bool:
        """True while the operator has not opened ``item`` nor read it on the list."""
        ...
