"""The audit trail: every acting request is recorded, and listed at ``GET /api/audit``.

:class:`AuditTrail` (an ASGI middleware) writes one ``operator.action`` event for every
non-read ``/api`` request whose token named an operator, after the route ran and before
the response leaves, so a client that reads the audit after its answer finds it. A refused
action is audited like a done one; what is not recorded (a customer channel, no valid
token, malformed input) is on :class:`AuditTrail`.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from backend.api.auth import CHANNEL_ROUTES, READS, require_token
from backend.api.paging import (
    DEFAULT_LIMIT,
    MAX_LIMIT,
    PAGED,
    Cursor,
    PageLimit,
    decode_cursor,
    next_page,
)
from backend.api.schemas import ERRORS
from backend.api.schemas_audit import AuditEntryOut, MeOut
from backend.events import Event, EventType
from backend.exceptions import ValidationError
from backend.operators.roles import CHANNEL, Actor

log = logging.getLogger(__name__)

router = APIRouter(prefix="/api", dependencies=[Depends(require_token)], responses=ERRORS)
OperatorFilter = Annotated[
    str | None, Query(pattern=r"^[A-Za-z0-9][A-Za-z0-9._@ -]{0,63}$", description="who acted")
]
AfterId = Annotated[int, Query(ge=0, le=2**53, description="entries after this event id")]
TargetFilter = Annotated[
    str | None,
    Query(
        pattern=r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$",
        description="the item acted on: a PR, approval, interruption, handoff... id",
    ),
]
AuditTail = Annotated[
    int | None, Query(ge=1, le=MAX_LIMIT, description="the newest N entries, oldest first")
]
_MAX_ERROR_BODY = 64 * 1024


def outcome_of(status: int) -> str | None:
    """The audit outcome of an HTTP status; None for input the API could not take (400,
    404, 413, 422): nothing was attempted, nothing changed, nothing is recorded."""
    if status < 400:
        return "done"
    if status in (403, 409):
        return "refused"
    return None if status < 500 else "failed"


class AuditTrail:
    """ASGI middleware recording each acting request as an ``operator.action`` event.

    Each event says who (the token's operator), what (the route), target (the path's ids),
    reason (the body's), outcome (done; refused for 403/409; failed for 5xx) and when. A
    refused action is audited like a done one. A customer channel posting a customer message
    is the customer, not an operator: not recorded (an operator's token posting one is that
    operator's action). A request with no valid token (401) names nobody and is not recorded,
    nor is input the API refused as malformed (400/404/413/422: nothing was attempted).
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or scope["method"] in READS
            or not scope["path"].startswith("/api/")
        ):
            await self.app(scope, receive, send)
            return
        state: dict[str, Any] = scope.setdefault("state", {})
        held: list[Message] = []
        recorded = False

        async def audited(message: Message) -> None:
            nonlocal recorded
            if recorded:
                await send(message)
                return
            held.append(message)
            start = held[0]
            if message["type"] == "http.response.start" and start["status"] < 400:
                pass  # no body to read: record now
            elif message["type"] == "http.response.body" and message.get("more_body", False):
                if sum(len(m.get("body", b"")) for m in held) < _MAX_ERROR_BODY:
                    return  # keep the error body to name its code
            elif message["type"] != "http.response.body":
                return
            recorded = True
            await self._record(scope, state, start["status"], held[1:])
            for m in held:
                await send(m)

        await self.app(scope, receive, audited)

    async def _record(
        self, scope: Scope, state: dict[str, Any], status: int, body: list[Message]
    ) -> None:
        actor = state.get("operator")
        app = scope.get("app")
        backend = getattr(getattr(app, "state", None), "backend", None)
        outcome = outcome_of(status)
        route = scope.get("route")
        if (
            not isinstance(actor, Actor)
            or backend is None
            or outcome is None
            or (actor.role == CHANNEL and getattr(route, "endpoint", None) in CHANNEL_ROUTES)
        ):
            return
        target = {str(k): str(v) for k, v in (scope.get("path_params") or {}).items()}
        payload: dict[str, Any] = {
            "operator": actor.name,
            "role": actor.role,
            "action": getattr(route, "name", None) or scope["path"],
            "method": scope["method"],
            "path": scope["path"],
            "target": target,
            "subject": next(iter(target.values()), None),
            "outcome": outcome,
            "status": status,
            "reason": state.get("audit_reason"),
            "as_operator": state.get("audit_as"),
            "body_operator": state.get("audit_body_operator"),
            "error": _error_code(body) if status >= 400 else None,
        }
        payload = {k: v for k, v in payload.items() if v is not None}
        try:
            await asyncio.to_thread(backend.events.append, EventType.OPERATOR_ACTION, payload)
        except Exception:
            # The action already happened (or was refused); its answer must still go out.
            log.exception("audit: could not record %s %s", scope["method"], scope["path"])


def _error_code(body: list[Message]) -> str | None:
    raw = b"".join(m.get("body", b"") for m in body)
    try:
        error = json.loads(raw)["error"]
        return str(error["code"])
    except (ValueError, KeyError, TypeError):
        return None


@router.get("/me")
async def me(request: Request) -> MeOut:
    """The operator this token names and its role (viewer, operator, admin)."""
    actor: Actor = request.state.operator
    return MeOut(name=actor.name, role=actor.role, bootstrap=actor.bootstrap)


def _audit_page(
    backend: Any, operator: str | None, target: str | None, after: int, limit: int, *, tail: bool
) -> list[Event]:
    """Oldest first after ``after``; with ``tail``, the newest ``limit`` (oldest first)."""
    upto = backend.events.last_id()  # only settled ids: a later page never skips one
    query = "audit_tail" if tail else "audit_page"
    if target is not None:
        query += "_subject"  # the item's index; the operator, if given, filters that range
    elif operator is not None:
        query += "_operator"
    params = {"after": after, "upto": upto, "operator": operator, "subject": target, "limit": limit}
    with backend.db.transaction(write=False) as tx:
        rows = tx.all(query, params)
    events = [Event.from_row(r) for r in rows]
    return events[::-1] if tail else events


@router.get("/audit", responses=PAGED)
async def audit(
    request: Request,
    response: Response,
    operator: OperatorFilter = None,
    target: TargetFilter = None,
    after: AfterId = 0,
    tail: AuditTail = None,
    limit: PageLimit = DEFAULT_LIMIT,
    cursor: Cursor = None,
) -> list[AuditEntryOut]:
    """Every operator action (of one ``operator``, on one ``target`` item), oldest first,
    after event ``after``: who, what, target, reason, outcome (done, refused, failed) and
    when. ``?tail=N`` instead answers the newest N (oldest first, no next page): what the
    console's audit screen and an item's timeline show."""
    if tail is not None:
        if after or cursor is not None:
            raise ValidationError("tail reads the newest entries: give it without after or cursor")
        got = await asyncio.to_thread(
            _audit_page, request.app.state.backend, operator, target, 0, tail, tail=True
        )
        return [AuditEntryOut.of(e) for e in got]
    position = decode_cursor("audit", cursor, (int,))
    start = int(position[0]) if position else after
    got = await asyncio.to_thread(
        _audit_page, request.app.state.backend, operator, target, start, limit + 1, tail=False
    )
    page = next_page(request, response, got, limit, "audit", lambda e: (e.id,), drop=["after"])
    return [AuditEntryOut.of(e) for e in page]
