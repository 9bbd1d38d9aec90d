"""Errors raised by the backend.

Tree::

    CadenciaError
    ├── ConfigError              bad settings or URLs
    ├── StorageError             a database or table could not be used
    │   └── MigrationError
    ├── NotFoundError            an id that does not exist (HTTP 404)
    ├── ConflictError            a state transition that is not allowed now (HTTP 409)
    ├── ValidationError          input that does not fit its schema (HTTP 422)
    ├── LedgerError              the idempotency ledger could not decide
    ├── GatewayError             the payment gateway refused or failed
    │   └── GatewayUncertainError   outcome unknown (timeout, connection lost mid-call)
    ├── SecretError              a secret could not be read
    ├── PathError                a file path escapes where it must stay
    └── ScannerError             a gate scanner could not run

Each leaf carries its context as attributes; errors from psycopg, botocore and
httpx are translated at the boundary with ``raise ... from exc``.
"""

from __future__ import annotations


class CadenciaError(Exception):
    """Base class of every error the backend raises on purpose."""

    code = "error"

    def __init__(self, message: str, **context: object) -> None:
        super().__init__(message)
        self.message = message
        self.context = context


class ConfigError(CadenciaError):
    code = "config_error"


class StorageError(CadenciaError):
    code = "storage_error"


class MigrationError(StorageError):
    code = "migration_error"


class NotFoundError(CadenciaError):
    code = "not_found"


class ConflictError(CadenciaError):
    code = "conflict"


class ValidationError(CadenciaError):
    code = "invalid_input"


class LedgerError(CadenciaError):
    code = "ledger_error"


class GatewayError(CadenciaError):
    code = "gateway_error"


class GatewayUncertainError(GatewayError):
    code = "gateway_uncertain"


class SecretError(CadenciaError):
    code = "secret_error"


class PathError(CadenciaError):
    code = "invalid_path"


class ScannerError(CadenciaError):
    code = "scanner_error"
