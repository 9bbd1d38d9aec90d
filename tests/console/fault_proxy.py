"""A thin fault-injecting HTTP proxy in front of the real backend, for the failure tests.

Every request is forwarded to the backend as is and logged; the knobs only spoil what
comes back: cut the live streams (and refuse new ones), delay a route, answer a route
with a 5xx, garble a body, or rewrite one field of a JSON body (``"status": 3``).
It holds no data and answers nothing on its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

HOP_HEADERS = frozenset({"host", "content-length", "transfer-encoding", "connection"})
STREAM_PATH = "/api/events/stream"


@dataclass
class FaultProxy:
    """The proxy's state; ``app`` is the ASGI app to serve (see ``world.serve``)."""

    upstream: str
    url: str = ""
    """Where the proxy listens, once served."""
    requests: list[tuple[str, str, Any]] = field(default_factory=list)
    """(method, path, JSON body or None) of every request, in order."""
    refuse_streams: bool = False
    delays: dict[str, float] = field(default_factory=dict)
    failures: dict[str, int] = field(default_factory=dict)
    garbled: set[str] = field(default_factory=set)
    rewrites: dict[str, Callable[[Any], Any]] = field(default_factory=dict)
    stream_rewrite: Callable[[Any], Any] | None = None
    """Applied to the JSON ``data`` of every event on the live stream, when set."""

    def __post_init__(self) -> None:
        self._cut = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self.app = Starlette(
            routes=[Route("/{path:path}", self._forward, methods=["GET", "POST"])],
            lifespan=self._lifespan,
        )

    # -- knobs (called from the test's thread) -------------------------------------------

    def drop_streams(self, *, refuse: bool = True) -> None:
        """Cut every open event stream mid-flight; with ``refuse``, answer new ones 503."""
        self.refuse_streams = refuse
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._cut.set)

    def set_field(self, path: str, where: Callable[[Any], Any]) -> None:
        """Rewrite the JSON body of ``GET path`` with ``where(body) -> body``."""
        self.rewrites[path] = where

    def calls(self, method: str, prefix: str) -> list[Any]:
        """Bodies of the logged requests whose path starts with ``prefix``."""
        return [body for m, p, body in self.requests if m == method and p.startswith(prefix)]

    # -- forwarding ----------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def _lifespan(self, _: Starlette) -> AsyncIterator[None]:
        self._loop = asyncio.get_running_loop()
        async with httpx.AsyncClient(base_url=self.upstream, timeout=None) as http:
            self._http = http
            yield

    async def _forward(self, request: Request) -> Response:
        path = request.url.path
        raw = await request.body()
        self.requests.append((request.method, path, json.loads(raw) if raw else None))
        if delay := self.delays.get(path):
            await asyncio.sleep(delay)
        if status := self.failures.get(path):
            error = {"code": "unavailable", "message": "injected by the fault proxy"}
            return JSONResponse({"error": error}, status, headers={"Retry-After": "1"})
        headers = {k: v for k, v in request.headers.items() if k.lower() not in HOP_HEADERS}
        upstream = self._http.build_request(
            request.method, path, params=request.query_params, headers=headers, content=raw
        )
        if path == STREAM_PATH:
            return await self._stream(upstream)
        response = await self._http.send(upstream)
        body = response.content
        if path in self.garbled:
            body = b'{"garbled\x00' + body[: len(body) // 2]
        elif (rewrite := self.rewrites.get(path)) is not None and response.is_success:
            body = json.dumps(rewrite(response.json())).encode()
        out = {k: v for k, v in response.headers.items() if k.lower() not in HOP_HEADERS}
        return Response(body, response.status_code, headers=out)

    async def _stream(self, upstream: httpx.Request) -> Response:
        if self.refuse_streams:
            error = {"code": "unavailable", "message": "stream refused by the fault proxy"}
            return JSONResponse({"error": error}, 503)
        self._cut.clear()
        response = await self._http.send(upstream, stream=True)
        cut = self._cut

        async def body() -> AsyncIterator[bytes]:
            source = self._rewritten(response) if self.stream_rewrite else response.aiter_raw()
            chunks = source.__aiter__()
            try:
                while True:
                    next_chunk = asyncio.ensure_future(chunks.__anext__())
                    next_chunk.add_done_callback(_retrieve)
                    stop = asyncio.ensure_future(cut.wait())
                    done, _ = await asyncio.wait(
                        {next_chunk, stop}, return_when=asyncio.FIRST_COMPLETED
                    )
                    if stop in done:
                        next_chunk.cancel()
                        # Raising after the headers went out makes the server drop the
                        # connection mid-body: the client sees a broken stream, not an end.
                        raise ConnectionAbortedError("stream cut by the fault proxy")
                    stop.cancel()
                    try:
                        yield next_chunk.result()
                    except StopAsyncIteration:
                        return
            finally:
                await response.aclose()

        headers = {k: v for k, v in response.headers.items() if k.lower() not in HOP_HEADERS}
        return StreamingResponse(body(), response.status_code, headers=headers)

    async def _rewritten(self, response: httpx.Response) -> AsyncIterator[bytes]:
        rewrite = self.stream_rewrite
        async for line in response.aiter_lines():
            if rewrite is not None and line.startswith("data: {"):
                line = "data: " + json.dumps(rewrite(json.loads(line[6:])))
            yield (line + "\n").encode()


def _retrieve(future: asyncio.Future[Any]) -> None:
    """A read abandoned by a cut may still fail; that failure is expected, not news."""
    if not future.cancelled():
        future.exception()
