"""Errors of the payment gateway's answers that are not a dependency failing.

:class:`GatewayRefusedError` is a :class:`~backend.exceptions.CadenciaError` leaf: a
refusal (402, 409, 422...) is the world's verdict on this refund, not an outage of ours, so
it is never an :class:`~backend.exceptions.UnavailableError` and the customer is told the
truth (HTTP 200) instead of "try again later" (502). :class:`GatewayMismatchError` is a
:class:`~backend.exceptions.ConflictError` (409). Unreachable, our credentials and 408/429
stay :class:`~backend.exceptions.GatewayError`; 5xx, timeouts and lost connections are
:class:`~backend.exceptions.GatewayUncertainError`.
"""

from __future__ import annotations

from backend.exceptions import CadenciaError, ConflictError


class GatewayRefusedError(CadenciaError):
    """The gateway refused the refund for good; nothing was debited.

    Attributes:
        status: the HTTP status the gateway answered.
        reason: the gateway's own reason, one line, as it wrote it.
        customer: what the customer may read about it.
    """

    code = "gateway_refused"

    def __init__(self, reason: str, *, status: int = 402, **context: object) -> None:
        super().__init__(
            f"o banco recusou ({status}): {reason}", status=status, reason=reason, **context
        )
        self.status = status
        self.reason = reason
        self.customer = f"o banco recusou: {reason}"


class GatewayMismatchError(ConflictError):
    """A claim went to another gateway than the one this backend talks to: only that
    gateway can tell what happened under its key, so nobody else is asked and nothing is
    recorded. Context: ``chave``, ``claim_gateway``, ``gateway`` (this backend's)."""

    code = "gateway_mismatch"
