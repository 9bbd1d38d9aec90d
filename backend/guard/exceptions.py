"""Errors of the guard's takeovers and of a conversation's customer.

Under :mod:`backend.exceptions`: :class:`BlockedByLedgerError`,
:class:`NotExecutedError` and :class:`CustomerMismatchError` are
:class:`~backend.exceptions.ConflictError` s (409), :class:`CustomerMissingError` a
:class:`~backend.exceptions.ValidationError` (422). The two takeover errors carry
``ledger`` (the :class:`~backend.guard.takeovers.LedgerFacts` as a dict) in their
context; the API puts it in the error body so the operator sees what the ledger holds.
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
