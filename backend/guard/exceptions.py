"""Errors of the guard's takeovers.

Tree (under :class:`backend.exceptions.CadenciaError`)::

    ConflictError
    ├── BlockedByLedgerError   the operator's execute was blocked by the ledger (409)
    └── NotExecutedError       the operator's execute ran but did not execute (409)

Both carry ``ledger`` (the :class:`~backend.guard.takeovers.LedgerFacts` as a dict) in
their context; the API puts it in the error body so the operator sees what the ledger holds.
"""

from __future__ import annotations

from backend.exceptions import ConflictError


class BlockedByLedgerError(ConflictError):
    """Already executed, another amount already claimed, or still in flight / uncertain."""

    code = "blocked_by_ledger"


class NotExecutedError(ConflictError):
    """The tool refused or its outcome is uncertain: nothing to report as executed."""

    code = "not_executed"
