"""Every error becomes JSON ``{"error": {"code", "message"}}`` with a status that tells the truth.

4xx when the caller can fix the request; 502 when a dependency we call on the caller's
behalf failed, 503 when our own infrastructure did (both with ``Retry-After``) or when this
backend is misconfigured; 500 only for a bug nobody anticipated. :func:`status_of` gives
the rules. Also the request-size limit: :class:`BodySizeLimit` refuses a body over
``max_body_bytes`` with 413 before it is read into memory.
"""

from __future__ import annotations

import logging
import math
import sqlite3
from typing import Any

import httpx
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from backend.exceptions import (
    CadenciaError,
    ConfigError,
    ConflictError,
    ForbiddenError,
    GatewayError,
    NotFoundError,
    PathError,
    ProviderError,
    UnavailableError,
    ValidationError,
)

log = logging.getLogger(__name__)

_STATUS: list[tuple[type[CadenciaError], int]] = [
    (NotFoundError, 404),
    (ForbiddenError, 403),
    (ConflictError, 409),
    (ValidationError, 422),
    (PathError, 422),
    (GatewayError, 502),
    (ProviderError, 502),
    (UnavailableError, 503),
    (ConfigError, 503),
]
CLIENT_FAULT = 400
"""Status of a :class:`CadenciaError` leaf outside the tree above: raised about the
request (e.g. a tool refusing an order it does not know)."""


BODY_CONTEXT = ("ledger",)
"""Context keys of an error that are part of its body: a blocked execute's ledger facts."""


def error_body(code: str, message: str, **extra: Any) -> dict[str, Any]:
    """The one error shape of the API (``extra``: e.g. ``ledger`` on a blocked execute)."""
    return {"error": {"code": code, "message": message, **extra}}


def status_of(exc: CadenciaError) -> int:
    """HTTP status for a backend error.

    - 4xx: the caller can fix the request (malformed, unauthorized, unknown id, not allowed
      now, invalid input, too large).
    - 502: a dependency we call on the caller's behalf answered badly or not at all (the
      payment gateway, a model provider), with ``Retry-After``.
    - 503: our own infrastructure is unavailable (database, ledger, secret store, scanner),
      with ``Retry-After``; or this backend is misconfigured (:class:`ConfigError`), without
      one, because only an operator fixing the settings helps. A ConfigError is never a 400:
      every one of them is raised about *our* settings, URLs or scripts, never about the
      request, so blaming the caller would send them looking in the wrong place.
    - 500 only for a bug nobody anticipated (logged with its traceback).

    Driver errors that slip past a translation (``raise ... from exc`` at the boundary is the
    rule) are still a dependency failing, so they are answered 503 too, without their text.
    """
    for cls, status in _STATUS:
        if isinstance(exc, cls):
            return status
    return CLIENT_FAULT


def headers_of(exc: CadenciaError) -> dict[str, str] | None:
    """``Retry-After`` (whole seconds, at least 1) for a dependency failure a retry can get
    past: the dependency's own hint when it gave one (a model provider's ``Retry-After``),
    else the error's default."""
    if not isinstance(exc, UnavailableError):
        return None
    after = exc.retry_after_s
    if after is None:
        after = UnavailableError.retry_after_s
    if not after:
        return None
    return {"Retry-After": str(max(1, math.ceil(after)))}


def _driver_errors() -> tuple[type[Exception], ...]:
    """Exceptions of the database, AWS and HTTP clients that mean "a dependency failed"."""
    found: list[type[Exception]] = [sqlite3.OperationalError, httpx.TransportError]
    try:
        import psycopg

        found += [psycopg.OperationalError, psycopg.InterfaceError]  # PoolTimeout included
    except ImportError:  # pragma: no cover - psycopg is a dependency; keep the API importable
        pass
    try:
        from botocore.exceptions import BotoCoreError, ClientError

        found += [BotoCoreError, ClientError]
    except ImportError:  # pragma: no cover
        pass
    return tuple(found)


DRIVER_ERRORS = _driver_errors()
DRIVER_RETRY_AFTER_S = 5


def install_error_handlers(app: FastAPI) -> None:
    """Map backend, validation and HTTP errors to the JSON error shape."""

    @app.exception_handler(CadenciaError)
    async def _cadencia(_: Request, exc: CadenciaError) -> JSONResponse:
        status = status_of(exc)
        if status >= 500:
            log.error("answering %d %s: %s", status, exc.code, exc.message)
        extra = {k: exc.context[k] for k in BODY_CONTEXT if exc.context.get(k) is not None}
        return JSONResponse(
            error_body(exc.code, exc.message, **extra),
            status_code=status,
            headers=headers_of(exc),
        )

    for driver_error in DRIVER_ERRORS:

        @app.exception_handler(driver_error)
        async def _driver(_: Request, exc: Exception) -> JSONResponse:
            # Not translated where it was raised: say which dependency, keep its text
            # (connection strings, SQL) in the log only.
            log.error("untranslated dependency error: %r", exc, exc_info=exc)
            return JSONResponse(
                error_body("unavailable", f"a dependency failed ({type(exc).__name__}); retry"),
                status_code=503,
                headers={"Retry-After": str(DRIVER_RETRY_AFTER_S)},
            )

    @app.exception_handler(RequestValidationError)
    async def _validation(_: Request, exc: RequestValidationError) -> JSONResponse:
        errors = exc.errors()
        if any(e.get("type") == "json_invalid" for e in errors):
            return JSONResponse(
                error_body("malformed_json", "the request body is not valid JSON"), status_code=400
            )
        parts = []
        for e in errors[:5]:
            where = ".".join(str(p) for p in e.get("loc", ()) if p != "body") or "body"
            parts.append(f"{where}: {e.get('msg', 'invalid')}")
        return JSONResponse(error_body("invalid_input", "; ".join(parts)), status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        codes = {401: "unauthorized", 404: "not_found", 405: "method_not_allowed", 413: "too_large"}
        return JSONResponse(
            error_body(codes.get(exc.status_code, "http_error"), str(exc.detail)),
            status_code=exc.status_code,
            headers=getattr(exc, "headers", None),
        )

    @app.exception_handler(Exception)
    async def _unexpected(_: Request, exc: Exception) -> JSONResponse:
        log.exception("unexpected error")
        return JSONResponse(
            error_body("internal", "unexpected server error; see the backend log"), status_code=500
        )


class BodySizeLimit:
    """Pure ASGI middleware: refuse bodies over ``limit`` bytes with 413."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", []):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = -1
                if declared < 0 or declared > self.limit:
                    await _reject(send, self.limit)
                    return
        seen = 0
        too_large = False

        async def limited() -> Message:
            nonlocal seen, too_large
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    too_large = True
                    raise _TooLarge
            return message

        try:
            await self.app(scope, limited, send)
        except _TooLarge:
            await _reject(send, self.limit)


class _TooLarge(Exception):
    pass


async def _reject(send: Send, limit: int) -> None:
    import json

    body = json.dumps(error_body("too_large", f"request body over {limit} bytes")).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 413,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
