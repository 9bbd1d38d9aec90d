"""The App's workers that read the backend: the start (snapshots and the feed's tail side
by side) and the SSE stream it then follows forever, resuming by event id."""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING

from textual import work

from console.exceptions import ApiError, AuthError, ContractError
from console.feed import FeedLine, from_activity
from console.models import Connected, Malformed, Resync
from console.state import backoff_delay

if TYPE_CHECKING:
    from console.app import CadenciaConsole

FEED_TAIL = 200
"""Feed lines loaded at start (the newest); the live stream follows from the last of them."""


class StreamMixin:
    """Mixed into :class:`~console.app.CadenciaConsole`."""

    @work(group="bootstrap", exclusive=True, exit_on_error=False)
    async def _bootstrap(self: CadenciaConsole) -> None:  # type: ignore[misc]
        # The feed starts from the log's tail (one bounded read), never from event 1: with a
        # month of history, paging from 0 kept the Team screen empty for minutes. Snapshots
        # and the tail load side by side; one failing does not hide the other.
        results = await asyncio.gather(
            self._load_snapshots(), self.client.activity_tail(FEED_TAIL), return_exceptions=True
        )
        tail = results[1]
        if isinstance(tail, list):
            self._pending_feed.extend(from_activity(x) for x in tail)
            self.last_event_id = tail[-1].id if tail else self.last_event_id
        for failure in results:
            if isinstance(failure, ContractError):
                self.report_contract_error(failure.route, failure.field, failure.detail)
            elif isinstance(failure, ApiError):
                self.notify(f"Backend not reachable yet: {failure.message}", severity="warning")
                break
            elif isinstance(failure, BaseException):
                raise failure
        self._flush_pending()
        self.ready.set()
        self.follow_stream()

    @work(group="stream", exclusive=True, exit_on_error=False)
    async def follow_stream(self: CadenciaConsole) -> None:  # type: ignore[misc]
        """Consume the SSE stream forever: resume by id, back off with jitter, never exit."""
        failures = 0
        while True:
            resync = False
            try:
                stream = self.client.stream_events(self.last_event_id)
                async with contextlib.aclosing(stream):
                    async for item in stream:
                        if isinstance(item, Connected):
                            self.stream_connects += 1
                            if failures:
                                await self._load_snapshots()
                            failures = 0
                            self._set_connection("live")
                        elif isinstance(item, Malformed):
                            self.report_contract_error(
                                item.route, f"event {item.id}: {item.field}", item.message
                            )
                            self.last_event_id = item.id or self.last_event_id
                        elif isinstance(item, Resync):
                            self._pending_feed.append(
                                FeedLine(
                                    item.last_id,
                                    "",
                                    "console.resync",
                                    f"fell behind; resynced at event {item.last_id}",
                                )
                            )
                            self.last_event_id = item.last_id
                            await self._load_snapshots()
                            resync = True
                        else:
                            self._on_event(item)
            except AuthError as exc:
                failures += 1
                self.notify(f"Backend refused the token: {exc.message}", severity="error")
            except ApiError:
                failures += 1
            except Exception as exc:
                failures += 1
                self.log.error(f"stream: {exc!r}")
            if resync:
                continue
            self._set_connection("reconnecting")
            await asyncio.sleep(backoff_delay(failures))
