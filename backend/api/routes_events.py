"""The event log over HTTP: ``GET /api/events`` (raw events) and ``GET /api/activity``
(one operator line per event), in three bounded forms, each a range scan of the primary key.

``?after=ID`` catches up, ``?tail=N`` starts a feed, ``?before=ID`` scrolls back
(:func:`read_log`). Every form answers at most ``limit`` events and, when more follow in
its direction, the cursor of the next page (:mod:`backend.api.paging`).
"""

from __future__ import annotations

import asyncio
from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request, Response

from backend.agents.activity import render
from backend.api.auth import require_token
from backend.api.paging import (
    DEFAULT_LIMIT,
    MAX_LIMIT,
    PAGED,
    BadCursorError,
    Cursor,
    decode_cursor,
    encode_cursor,
    set_next,
)
from backend.api.schemas import ERRORS, ActivityLineOut, EventOut
from backend.events import Event
from backend.exceptions import ValidationError

router = APIRouter(prefix="/api", dependencies=[Depends(require_token)], responses=ERRORS)

AfterId = Annotated[int | None, Query(ge=0, le=2**53, description="events after this id")]
Before = Annotated[int | None, Query(ge=1, le=2**53, description="events below this id")]
Tail = Annotated[int | None, Query(ge=1, le=MAX_LIMIT, description="the newest N events")]
OptionalLimit = Annotated[int | None, Query(ge=1, le=MAX_LIMIT, description="events per page")]
_TOP = 2**62  # above every id: ``before`` of the tail
_FORMS = ("after", "before", "tail", "cursor")
_UP, _DOWN = "up", "down"


async def read_log(
    request: Request,
    response: Response,
    route: str,
    *,
    after: int | None,
    before: int | None,
    tail: int | None,
    cursor: str | None,
    limit: int | None,
) -> list[Event]:
    """One bounded page of the log in the form the query asked for.

    - ``?after=ID`` (default 0): the events after ID, oldest first — how a reader catches up;
    - ``?tail=N``: the newest N events, oldest first — how a feed starts;
    - ``?before=ID``: the events below ID, newest first — how a feed scrolls back.

    Every form answers at most ``limit`` (``tail``: N) events and, when more follow in its
    direction, the cursor of the next page (``X-Next-Cursor``, ``Link``; see
    :mod:`backend.api.paging`). A tail's next page is the older one (``before`` its first
    event), so ``tail`` then cursors walks the whole log backwards.

    Raises:
        ValidationError: two forms at once, or ``limit`` with ``tail``.
        BadCursorError: a cursor this route did not issue.
    """
    forms = (after, before, tail, cursor)
    given = [name for name, v in zip(_FORMS, forms, strict=True) if v is not None]
    if len(given) > 1 or (tail is not None and limit is not None):
        both = given if len(given) > 1 else ["tail", "limit"]
        raise ValidationError(f"use one of after, before, tail or cursor, not {' and '.join(both)}")
    log = request.app.state.backend.events
    if cursor is not None:
        direction, at = decode_cursor(route, cursor, (str, int)) or ("", 0)
        if direction not in (_UP, _DOWN):
            raise BadCursorError("the cursor names no direction of this route")
        after, before = (int(at), None) if direction == _UP else (None, int(at))
    size = tail or limit or DEFAULT_LIMIT
    if tail is not None or before is not None:
        rows: list[Event] = await asyncio.to_thread(log.before, before or _TOP, size + 1)
        page = rows[:size]
        if len(rows) > size:
            drop = ["after", "before", "tail", "limit"]
            set_next(
                request,
                response,
                encode_cursor(route, (_DOWN, page[-1].id)),
                drop=drop,
                params={"limit": size},
            )
        return page[::-1] if tail is not None else page
    rows = await asyncio.to_thread(log.after, after or 0, size + 1)
    page = rows[:size]
    if len(rows) > size:
        set_next(request, response, encode_cursor(route, (_UP, page[-1].id)), drop=["after"])
    return page


@router.get("/events", responses=PAGED)
async def events(
    request: Request,
    response: Response,
    after: AfterId = None,
    before: Before = None,
    tail: Tail = None,
    cursor: Cursor = None,
    limit: OptionalLimit = None,
) -> list[EventOut]:
    """Events of the log: ``after`` (default 0) oldest first, ``tail`` the newest N
    oldest first, ``before`` newest first; ``limit`` default 100, at most 1000."""
    got = await read_log(
        request,
        response,
        "events",
        after=after,
        before=before,
        tail=tail,
        cursor=cursor,
        limit=limit,
    )
    return [EventOut.model_validate(e.to_dict()) for e in got]


@router.get("/activity", responses=PAGED)
async def activity(
    request: Request,
    response: Response,
    after: AfterId = None,
    before: Before = None,
    tail: Tail = None,
    cursor: Cursor = None,
    limit: OptionalLimit = None,
) -> list[ActivityLineOut]:
    """One operator-readable line per event, in the same forms as ``/api/events``
    (a feed starts with ``?tail=200``)."""
    got = await read_log(
        request,
        response,
        "activity",
        after=after,
        before=before,
        tail=tail,
        cursor=cursor,
        limit=limit,
    )
    return [ActivityLineOut.model_validate(render(e).to_dict()) for e in got]
