"""Errors the console's HTTP client raises; screens catch these, never httpx's.

Tree::

    ApiError                 any failed call (status 0 = no HTTP response at all)
    ├── AuthError            401: missing or wrong bearer token
    ├── NotFoundError        404: unknown id
    ├── ConflictError        409: invalid transition, or someone else acted first
    │   └── BlockedByLedgerError  409 with the ledger's facts: ``blocked_by_ledger`` (it
    │                             refused to run) or ``not_executed`` (ran, did not execute)
    ├── ContractError        a 2xx body that does not match the console's model of the route
    └── BackendUnavailableError  connect/read failure, timeout, broken stream
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from console.models import LedgerFacts


class ApiError(Exception):
    """A backend call failed.

    Attributes:
        status: HTTP status, or 0 when no response arrived.
        code: The backend's machine-readable error code (``"conflict"``...).
        message: Text fit to show an operator.
    """

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message


class AuthError(ApiError):
    """The backend refused our token (401)."""


class NotFoundError(ApiError):
    """The item does not exist (404)."""


class ConflictError(ApiError):
    """The transition is no longer valid: someone else acted, or the state moved (409)."""


class BlockedByLedgerError(ConflictError):
    """The execute did not execute, and the body says what the ledger holds.

    ``code`` is ``blocked_by_ledger`` (already executed, another amount claimed, in
    flight) or ``not_executed`` (the tool refused, or its outcome is uncertain).

    Attributes:
        ledger: What the ledger holds for the entity (when, which amount, which conversation).
    """

    def __init__(self, status: int, code: str, message: str, ledger: LedgerFacts) -> None:
        super().__init__(status, code, message)
        self.ledger = ledger


class ContractError(ApiError):
    """The backend answered, but with a body the console's models cannot read.

    Attributes:
        route: ``"GET /api/roster"``: which call.
        field: Where in the body, e.g. ``"[0].status"`` (``"(body)"`` for the whole body).
        detail: What was wrong there, in pydantic's words.
    """

    def __init__(self, route: str, field: str, detail: str, status: int = 200) -> None:
        super().__init__(status, "contract", f"{route}: field {field}: {detail}")
        self.route = route
        self.field = field
        self.detail = detail


class BackendUnavailableError(ApiError):
    """No usable HTTP response: connection refused, timeout, or the stream broke."""

    def __init__(self, message: str) -> None:
        super().__init__(0, "unavailable", message)
