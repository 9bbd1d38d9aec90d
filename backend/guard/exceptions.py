"""Errors of the guard's takeovers and of a conversation's customer.

Tree (under :class:`backend.exceptions.CadenciaError`)::

    ConflictError
    ├── BlockedByLedgerError   the operator's execute was blocked by the ledger (409)
    ├── NotExecutedError       the operator's execute ran but did not execute (409)
    └── CustomerMismatchError  a message names another customer than its conversation's (409)
    ValidationError
    └── CustomerMissingError   a conversation's first message names no customer (422)

Both carry ``ledger`` (the :class:`~backend.guard.takeovers.LedgerFacts` as a dict) in
their context; the API puts it in the error body so the operator sees what the ledger holds.
"""

from __future__ import annotations

from backend.exceptions import ConflictError, ValidationError


class BlockedByLedgerError(ConflictError):
    """Already executed, another amount already claimed, or still in flight / uncertain."""

    code = "blocked_by_ledger"


class NotExecutedError(ConflictError):
    """The tool refused or its outcome is uncertain: nothing to report as executed."""

    code = "not_executed"


class CustomerMismatchError(ConflictError):
    """A conversation belongs to the customer its first message named; a message naming
    another one is refused and recorded nowhere. Context: ``conversa_id``, ``cliente_id``
    (the conversation's), ``given``."""

    code = "customer_mismatch"


class CustomerMissingError(ValidationError):
    """A conversation no message has named a customer for gets a message without
    ``cliente_id``: the channel must say whose conversation it is. Context: ``conversa_id``."""

    code = "customer_missing"
