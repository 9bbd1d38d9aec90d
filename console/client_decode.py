"""Turning the backend's HTTP responses into the console's models and errors.

Every body is validated against its model here, and every way it can be wrong (not JSON,
a field of the wrong shape, an error response) becomes one of :mod:`console.exceptions`,
so a screen catches :class:`~console.exceptions.ApiError` and keeps running.
"""

from __future__ import annotations

import json
from typing import Any, TypeVar

import httpx
from httpx_sse import ServerSentEvent
from pydantic import TypeAdapter, ValidationError

from console.exceptions import (
    ApiError,
    AuthError,
    BlockedByLedgerError,
    ConflictError,
    ContractError,
    NotFoundError,
)
from console.models import LedgerFacts, Malformed, Resync, StreamEvent, StreamItem

STREAM_ROUTE = "GET /api/events/stream"

_T = TypeVar("_T")


def read_json(response: httpx.Response, route: str) -> Any:
    try:
        return response.json()
    except ValueError as exc:
        raise ContractError(route, "(body)", "not JSON", response.status_code) from exc


_ADAPTERS: dict[object, TypeAdapter[Any]] = {}
"""One adapter per response shape, built on first use (building one costs more than a call)."""


def parse(shape: type[_T], body: Any, route: str) -> _T:
    """Validate ``body`` as ``shape``; a mismatch becomes :class:`ContractError`.

    pydantic's error must not escape: a screen catches :class:`ApiError` and keeps
    running, where an unexpected exception would kill the worker that loads the data.
    """
    try:
        adapter = _ADAPTERS.get(shape) or _ADAPTERS.setdefault(shape, TypeAdapter(shape))
        return adapter.validate_python(body)  # type: ignore[no-any-return]
    except ValidationError as exc:
        field, detail = _first_error(exc)
        raise ContractError(route, field, detail) from exc


def _first_error(exc: ValidationError) -> tuple[str, str]:
    errors = exc.errors(include_url=False)
    first = errors[0]
    field = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in first["loc"]).lstrip(".")
    more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
    return field or "(body)", f"{first['msg']}, got {first.get('input')!r}{more}"


def stream_item(shape: type[StreamEvent] | type[Resync], sse: ServerSentEvent) -> StreamItem:
    """One SSE message as a model, or :class:`Malformed` naming what was wrong."""
    event_id = int(sse.id) if sse.id and sse.id.isdigit() else None
    try:
        return parse(shape, json.loads(sse.data), STREAM_ROUTE)
    except ContractError as exc:
        return Malformed(id=event_id, route=STREAM_ROUTE, field=exc.field, message=exc.detail)
    except ValueError:
        return Malformed(id=event_id, route=STREAM_ROUTE, field="(data)", message="not JSON")


def error_from(response: httpx.Response) -> ApiError:
    """Translate an error response (``{"error": {"code", "message"}}``) to our tree."""
    code, message = "http_error", response.reason_phrase or "error"
    error: Any = None
    try:
        body = response.json()
        error = body.get("error") if isinstance(body, dict) else None
        if isinstance(error, dict):
            code = str(error.get("code") or code)
            message = str(error.get("message") or message)
        elif isinstance(body, dict) and "detail" in body:
            message = str(body["detail"])
    except ValueError:
        pass
    status = response.status_code
    if status == 409 and isinstance(error, dict) and error.get("ledger") is not None:
        try:
            facts = parse(LedgerFacts, error["ledger"], f"409 {code}")
        except ContractError:
            pass  # still a conflict; without readable facts it is shown as a plain one
        else:
            return BlockedByLedgerError(status, code, message, facts)
    cls = {401: AuthError, 403: AuthError, 404: NotFoundError, 409: ConflictError}.get(
        status, ApiError
    )
    return cls(status, code, message)
