"""Read routes: health, metrics, roster, approvals and the live stream (the log's pages are
in routes_events)."""

from __future__ import annotations

import asyncio
import contextlib
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Annotated, Any, TypeVar, cast

from fastapi import APIRouter, Depends, Header, Query, Request, Response
from sse_starlette import ServerSentEvent
from sse_starlette.sse import EventSourceResponse

from backend.agents.activity import render
from backend.api.auth import require_token, still_authenticated
from backend.api.models import After
from backend.api.routes_docs import metrics_access
from backend.api.schemas import (
    ERRORS,
    STREAM_RESPONSE,
    ApprovalsOut,
    HealthOut,
    InterruptionItem,
    RosterEntryOut,
    StreamEventData,
    StreamResyncData,
)
from backend.api.schemas_prs import PullRequestOut
from backend.broadcast import Resync
from backend.events import Event

public = APIRouter()
PING_S = 15.0
"""Seconds between the stream's pings; its token is checked again as often."""
T = TypeVar("T")
router = APIRouter(prefix="/api", dependencies=[Depends(require_token)], responses=ERRORS)


def _backend(request: Request) -> Any:
    return request.app.state.backend


@public.get("/healthz", response_model=HealthOut)
async def healthz() -> HealthOut:
    """Liveness (no auth)."""
    return HealthOut()


@public.get(
    "/metrics",
    dependencies=[Depends(metrics_access)],
    response_class=Response,
    responses={200: {"content": {"text/plain": {"schema": {"type": "string"}}}}},
)
async def metrics(request: Request) -> Response:
    """Prometheus text: ``cadencia_interrupcoes_por_teto_total`` and friends (no token from
    loopback by default; ``CADENCIA_METRICS_ACCESS`` = open | loopback | token)."""
    # The gauges read the database at scrape time: off the event loop.
    text = await asyncio.to_thread(_backend(request).guard.metrics.prometheus_text)
    return Response(text, media_type="text/plain; version=0.0.4")


@router.get("/roster")
async def roster(
    request: Request,
    project_id: str | None = None,
    at: Annotated[int | None, Query(ge=0, le=2**53)] = None,
) -> list[RosterEntryOut]:
    """The team roster of a project (default: the newest): live from the projection
    tables, or with ``at=N`` as it stood at event N (the nearest snapshot at or before N
    plus at most ``CADENCIA_ROSTER_SNAPSHOT_EVERY`` events replayed; handoffs and autonomy
    as the log recorded them, no usage)."""
    got = await asyncio.to_thread(_backend(request).team.roster, project_id, at)
    return [RosterEntryOut.model_validate(r) for r in got]


@router.get("/approvals")
async def approvals(request: Request) -> ApprovalsOut:
    """Infra PRs in review and unresolved takeovers, awaiting-human / open first."""
    prs, interruptions = await asyncio.to_thread(_backend(request).approvals)
    return ApprovalsOut(
        infra_prs=[PullRequestOut.model_validate(p) for p in prs],
        interruptions=[InterruptionItem.of(i) for i in interruptions],
        uncertain=await asyncio.to_thread(_backend(request).uncertain_items),
    )


class _EventStream(EventSourceResponse):
    """The SSE response, with its media type on the class so OpenAPI names it."""

    media_type = "text/event-stream"


@router.get(
    "/events/stream",
    response_class=_EventStream,
    responses=STREAM_RESPONSE,
)
async def stream(
    request: Request,
    after: Annotated[int | None, After] = None,
    last_event_id: Annotated[str | None, Header(alias="Last-Event-ID")] = None,
) -> _EventStream:
    """SSE: ``id`` = event log id; resume with ``Last-Event-ID`` (or ``?after=``) without
    gap or duplicate; ``resync`` when the client fell too far behind; pings every 15 s.
    The token is checked again as often: a revoked token's stream ends within a ping."""
    resume: int | None = after
    if last_event_id is not None and last_event_id.strip().isdigit():
        resume = int(last_event_id.strip())
    hub = _backend(request).broadcaster
    cache: _EncodedCache = request.app.state.sse_cache

    async def generate() -> Any:
        # One chunk per wake-up: everything waiting for this client, each event's frame
        # encoded once for all clients (bytes pass through sse-starlette untouched).
        batches = hub.subscribe_batches(resume)
        async for batch in _while_checked(batches, lambda: still_authenticated(request), PING_S):
            if isinstance(batch, Resync):
                data = StreamResyncData(last_id=batch.last_id).model_dump_json()
                yield ServerSentEvent(data=data, event="resync").encode()
                continue
            yield b"".join([cache.frame(event) for event in batch])

    return _EventStream(generate(), ping=PING_S, send_timeout=30)


async def _while_checked(
    source: AsyncIterator[T], check: Callable[[], Awaitable[bool]], every_s: float
) -> AsyncIterator[T]:
    """``source``'s items until ``check()`` fails; it runs every ``every_s`` seconds whether
    items flow or not (a quiet subscription would otherwise never notice).

    One item at a time passes through a queue of one, so a slow reader still slows
    ``source`` (the hub's backpressure and resync work as before).
    """
    queue: asyncio.Queue[tuple[bool, T | None]] = asyncio.Queue(maxsize=1)

    async def pump() -> None:
        async for item in source:
            await queue.put((True, item))
        await queue.put((False, None))

    loop = asyncio.get_running_loop()
    task = asyncio.create_task(pump())
    due = loop.time() + every_s
    try:
        while True:
            try:
                more, item = await asyncio.wait_for(queue.get(), max(0.0, due - loop.time()))
            except TimeoutError:
                if task.done() and queue.empty():
                    task.result()  # the source failed: raise its error here
                    return
                if not await check():
                    return
                due = loop.time() + every_s
                continue
            if not more:
                return
            yield cast(T, item)
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


class _EncodedCache:
    """Each event's SSE frame is built once, however many subscribers stream it (bounded)."""

    def __init__(self, size: int = 4096) -> None:
        self.size = size
        self._frames: OrderedDict[int, bytes] = OrderedDict()

    def encode(self, event: Event) -> str:
        """The SSE ``data`` of ``event``: its JSON plus its feed line (as /api/activity)."""
        # A shallow dict: ``Event.to_dict`` (dataclasses.asdict) deep-copies the payload,
        # which pydantic copies again anyway.
        fields = {
            "id": event.id,
            "type": event.type,
            "ts": event.ts,
            "project_id": event.project_id,
            "session_id": event.session_id,
            "agent": event.agent,
            "payload": event.payload,
            "text": render(event).text,
        }
        return StreamEventData.model_validate(fields).model_dump_json(fallback=str)

    def frame(self, event: Event) -> bytes:
        """The whole SSE message of ``event`` (``id``, ``event``, ``data``), as sent."""
        got = self._frames.get(event.id)
        if got is None:
            got = ServerSentEvent(data=self.encode(event), id=str(event.id), event="event").encode()
            self._frames[event.id] = got
            if len(self._frames) > self.size:
                self._frames.popitem(last=False)
        return got


def install_stream_cache(app: Any) -> None:
    """Give the app its shared SSE encoding cache."""
    app.state.sse_cache = _EncodedCache()
