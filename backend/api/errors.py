"""Every error a client can cause becomes JSON ``{"error": {"code", "message"}}`` with a 4xx.

Also the request-size limit: a body over ``max_body_bytes`` is refused with 413 before it
is read into memory (declared by Content-Length or discovered while streaming).
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from backend.exceptions import (
    CadenciaError,
    ConfigError,
    ConflictError,
    NotFoundError,
    PathError,
    StorageError,
    ValidationError,
)

log = logging.getLogger(__name__)

_STATUS: list[tuple[type[CadenciaError], int]] = [
    (NotFoundError, 404),
    (ConflictError, 409),
    (ValidationError, 422),
    (PathError, 422),
    (ConfigError, 400),
    (StorageError, 503),
]


def error_body(code: str, message: str) -> dict[str, Any]:
    """The one error shape of the API."""
    return {"error": {"code": code, "message": message}}


def status_of(exc: CadenciaError) -> int:
    """HTTP status for a backend error (unknown leaves: 400, the client asked for it)."""
    for cls, status in _STATUS:
        if isinstance(exc, cls):
            return status
    return 400


def install_error_handlers(app: FastAPI) -> None:
    """Map backend, validation and HTTP errors to the JSON error shape."""

    @app.exception_handler(CadenciaError)
    async def _cadencia(_: Request, exc: CadenciaError) -> JSONResponse:
        status = status_of(exc)
        if status >= 500:
            log.error("backend unavailable: %s", exc.message)
        return JSONResponse(error_body(exc.code, exc.message), status_code=status)

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
