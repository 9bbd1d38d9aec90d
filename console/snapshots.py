"""How the App fetches its snapshots (roster, Approvals, the Inbox) and reports a
response it cannot read. Mixed into the App; kept apart so ``app.py`` stays the App's
lifecycle and stream."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, cast

from console.exceptions import ContractError, NotFoundError
from console.models import Approvals, RosterEntry
from console.models_inbox import InboxItem

if TYPE_CHECKING:
    from console.app import CadenciaConsole

PERSISTENT_TOAST_S = 24 * 3600.0
"""A contract error's toast stays until the operator dismisses it (click), not 5 s."""
ROSTER_ROUTE = "GET /api/roster"
APPROVALS_ROUTE = "GET /api/approvals"
INBOX_ROUTE = "GET /api/inbox"


class SnapshotsMixin:
    """Mixed into :class:`~console.app.CadenciaConsole`."""

    inbox_problem: str

    def report_contract_error(  # type: ignore[misc]
        self: CadenciaConsole, route: str, field: str, detail: str
    ) -> None:
        """Show a response the console cannot read: in the status bar and in a toast that
        stays until dismissed, naming the route and the field. Everything else goes on."""
        if self.contract_errors.get(route) == (field, detail):
            return  # already on screen; a refetch loop must not stack toasts
        self.contract_errors[route] = (field, detail)
        self.notify(
            f"{route}\nfield {field}: {detail}\n(click, or : → Dismiss notifications)",
            title="Backend sent data this console cannot read",
            severity="error",
            timeout=PERSISTENT_TOAST_S,
            markup=False,
        )
        self.status_changed.publish(None)

    async def _load_snapshots(  # type: ignore[misc]
        self: CadenciaConsole, *, roster: bool = True, approvals: bool = True
    ) -> None:
        """Fetch the snapshots independently: one unreadable route must not hide the other.

        Raises:
            ApiError: the first failure that is not a contract error (those are reported).
        """
        calls = {ROSTER_ROUTE: roster, APPROVALS_ROUTE: approvals, INBOX_ROUTE: approvals}
        fetch = {
            ROSTER_ROUTE: self.client.roster,
            APPROVALS_ROUTE: self.client.approvals,
            INBOX_ROUTE: self.client.inbox,
        }
        wanted = [route for route, on in calls.items() if on]
        results = await asyncio.gather(*(fetch[r]() for r in wanted), return_exceptions=True)
        failure: BaseException | None = None
        for route, result in zip(wanted, results, strict=True):
            if isinstance(result, ContractError):
                self.report_contract_error(result.route, result.field, result.detail)
            elif route == INBOX_ROUTE and isinstance(result, NotFoundError):
                # A backend older than the Inbox: Approvals still works; the Inbox says why.
                self.inbox_problem = f"{INBOX_ROUTE}: {result.message} ({result.status})"
                self._approvals_dirty = True
            elif isinstance(result, BaseException):
                failure = failure or result
            elif route == ROSTER_ROUTE:
                self._contract_ok(route)
                self.roster = {e.id: e for e in cast("list[RosterEntry]", result)}
                self._roster_dirty = True
            elif route == INBOX_ROUTE:
                self._contract_ok(route)
                self.apply_inbox(cast("list[InboxItem]", result))
                self._approvals_dirty = True
            else:
                self._contract_ok(route)
                self.approvals = cast("Approvals", result)
                self._approvals_dirty = True
        if failure is not None:
            raise failure

    def _contract_ok(self: CadenciaConsole, route: str) -> None:  # type: ignore[misc]
        if self.contract_errors.pop(route, None) is not None:
            self.status_changed.publish(None)
