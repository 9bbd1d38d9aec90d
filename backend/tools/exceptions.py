"""Errors of the customer-service tools, in the tree of :mod:`backend.exceptions`.

:class:`ToolRefusedError` is a :class:`~backend.exceptions.CadenciaError` leaf (the tool
ran and certainly did nothing irreversible), like the gateway's definitive "no"
(:class:`~backend.gateway.exceptions.GatewayRefusedError`).
:class:`DebitUnrecordedError` is a :class:`~backend.exceptions.GatewayUncertainError`;
:class:`UnknownToolError` and :class:`AmountAboveOrderError` are
:class:`~backend.exceptions.ValidationError` s.
"""

from __future__ import annotations

from backend.exceptions import CadenciaError, GatewayUncertainError, ValidationError


class ToolRefusedError(CadenciaError):
    """The tool ran and certainly did nothing irreversible (bad order, amount too high...).

    Attributes:
        customer: what the customer may read about it (the message itself unless the
            message holds what only the ledger and the operator should see).
    """

    code = "tool_refused"

    def __init__(self, message: str, *, customer: str | None = None, **context: object) -> None:
        super().__init__(message, **context)
        self.customer = customer or message


class UnknownToolError(ValidationError):
    """A name that is none of the registered tools (``tool`` in its context)."""

    code = "unknown_tool"


class DebitUnrecordedError(GatewayUncertainError):
    """The gateway answered (the money moved) but writing it down afterwards failed.

    Never ``falhou``: the claim must stay unfinished (``resultado_incerto``) so reconcile
    asks the gateway by key and completes it, and nothing retries the debit blindly.
    """

    code = "debit_unrecorded"


class AmountAboveOrderError(ValidationError):
    """A corrected amount above what the order is worth (``valor``, ``valor_pedido``)."""

    code = "amount_above_order"
