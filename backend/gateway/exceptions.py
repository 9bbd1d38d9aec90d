"""Errors of the payment gateway's answers that are not a dependency failing.

Tree (under :class:`backend.exceptions.CadenciaError`)::

    CadenciaError
    ├── GatewayRefusedError   the gateway answered a definitive "no" (402, 409, 422...)
    ├── ConflictError (backend.exceptions)
    │   └── GatewayMismatchError  a claim went to another gateway than this backend's (409)
    └── GatewayError          (backend.exceptions) unreachable, our credentials, 408/429
        └── GatewayUncertainError   outcome unknown (5xx, timeout, connection lost)

A refusal is the world's verdict on this refund, not an outage of ours: it is never an
:class:`~backend.exceptions.UnavailableError`, so the customer is told the truth (HTTP 200)
instead of "try again later" (502).
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
