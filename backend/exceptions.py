"""Errors raised by the backend: one tree, rooted at :class:`CadenciaError`.

A 4xx leaf means the caller can fix the request; an :class:`UnavailableError` means the
request was fine and a dependency of ours was not, so the caller may retry later;
:class:`ConfigError` means this backend is set up wrongly. The tree and the HTTP status of
each branch are on :class:`CadenciaError`. Each leaf carries its context as attributes;
errors from psycopg, botocore and httpx are translated at the boundary with
``raise ... from exc``.
"""

from __future__ import annotations


class CadenciaError(Exception):
    """Base class of every error the backend raises on purpose.

    Tree::

        CadenciaError
        ├── ConfigError              our own settings, URLs or scripts are wrong (HTTP 503)
        ├── NotFoundError            an id that does not exist (HTTP 404)
        ├── ForbiddenError           the operator's role or identity may not do this (HTTP 403)
        ├── ConflictError            a state transition that is not allowed now (HTTP 409)
        │   └── AgentPausedError         an operator paused the agent: it runs no new turn
        │   └── BudgetExceededError      the agent spent today's token budget (budget_exceeded)
        ├── ValidationError          input that does not fit its schema (HTTP 422)
        ├── PathError                a file path escapes where it must stay (HTTP 422)
        └── UnavailableError         one of our dependencies failed (HTTP 502/503, Retry-After)
            ├── StorageError             a database or table could not be used (503)
            │   └── MigrationError
            ├── LedgerError              the idempotency ledger could not decide (503)
            ├── SecretError              a secret could not be read (503)
            ├── ScannerError             a gate scanner could not run (503)
            ├── GatewayError             the payment gateway refused or failed (502)
            │   └── GatewayUncertainError   outcome unknown (timeout, connection lost mid-call)
            └── ProviderError            a model provider failed or answered garbage (502)
                └── (ProviderTimeoutError, in backend/agents/providers/exceptions.py)

    The split the API relies on: a 4xx leaf means the caller can fix the request; an
    :class:`UnavailableError` means the request was fine and something we depend on was not,
    so the caller may retry later (``retry_after_s``). :class:`ConfigError` is neither: the
    request was fine, but this backend is set up wrongly, and no retry helps until an
    operator fixes it.
    """

    code = "error"

    def __init__(self, message: str, **context: object) -> None:
        super().__init__(message)
        self.message = message
        self.context = context


class ConfigError(CadenciaError):
    code = "config_error"


class NotFoundError(CadenciaError):
    code = "not_found"


class ForbiddenError(CadenciaError):
    """The operator the token names may not do this (role too low, or a duty they may not
    hold, e.g. approving their own PR)."""

    code = "forbidden"


class ConflictError(CadenciaError):
    code = "conflict"


class AgentPausedError(ConflictError):
    """An operator paused this agent (``POST /api/agents/{id}/pause``): no new turn runs.

    Attributes (context): ``agent``, ``paused_by``.
    """

    code = "agent_paused"


class BudgetExceededError(ConflictError):
    """An agent used its tokens for the (UTC) day; an operator may raise the budget."""

    code = "budget_exceeded"


class ValidationError(CadenciaError):
    code = "invalid_input"


class PathError(CadenciaError):
    code = "invalid_path"


class UnavailableError(CadenciaError):
    """A dependency of ours (database, ledger, gateway, secrets, scanner, model) failed.

    Attributes:
        retry_after_s: seconds after which a retry may succeed (the API's ``Retry-After``).
    """

    code = "unavailable"
    retry_after_s: float | None = 5


class StorageError(UnavailableError):
    code = "storage_error"


class MigrationError(StorageError):
    code = "migration_error"


class LedgerError(UnavailableError):
    code = "ledger_error"


class GatewayError(UnavailableError):
    code = "gateway_error"


class GatewayUncertainError(GatewayError):
    code = "gateway_uncertain"


class SecretError(UnavailableError):
    code = "secret_error"


class ScannerError(UnavailableError):
    code = "scanner_error"
    retry_after_s = 30  # e.g. semgrep is still being installed into the data dir


class ProviderError(UnavailableError):
    """A model provider could not produce a usable turn.

    Attributes:
        retryable: whether the same call may succeed later (HTTP 429/5xx, transport
            errors, timeouts, Bedrock throttling); a 4xx refusal or garbage is not.
        retry_after_s: the provider's ``Retry-After`` in seconds, None when it sent none
            (the API then answers the default ``Retry-After``).
    """

    code = "provider_error"
    retryable = False

    def __init__(
        self,
        message: str,
        *,
        retryable: bool | None = None,
        retry_after_s: float | None = None,
        **context: object,
    ) -> None:
        super().__init__(message, **context)
        if retryable is not None:
            self.retryable = retryable
        self.retry_after_s = retry_after_s


def unavailable_cause(exc: BaseException | None) -> UnavailableError | None:
    """The first :class:`UnavailableError` in ``exc`` or its ``__cause__`` chain, or None.

    A tool may wrap a dependency failure in its own refusal (``raise ... from exc``); the
    caller that must answer 502/503 looks through the wrapper with this.
    """
    seen = 0
    while exc is not None and seen < 16:
        if isinstance(exc, UnavailableError):
            return exc
        exc = exc.__cause__
        seen += 1
    return None
