"""The delivery worker: takes each outbound message off the journal and hands it over.

It runs in the backend's event loop (``Backend.spawn``), never on the request path. On
start it picks up every delivery still ``pending`` (a crash or a stop left it there),
then each new outbound message as its transaction commits. Messages of one conversation
go out in order, one at a time; conversations do not wait for each other, so a channel
that is down for one customer delays nobody else's messages beyond their own retries.
Every attempt is counted in the journal; a transient failure is retried with the same
idempotency key on :class:`~backend.channel.base.RetryPolicy`'s schedule until its
deadline, then the delivery is ``failed`` with the last error.

Closing a delivery is a commit of its own (an fsync on SQLite), so closings are group
committed: the first one is written at once, and those that finish while it is being
written go together in the next commit. Each delivery still waits for its own closing
to commit before the next message of its conversation goes out; a crash before that
commit leaves the delivery ``pending`` and it is sent again with the same idempotency key.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections import defaultdict
from typing import Any

from backend.channel.base import Channel, OutboundMessage, RetryPolicy
from backend.channel.exceptions import ChannelError, RetryableChannelError
from backend.guard.conversations import Conversations

log = logging.getLogger(__name__)


class DeliveryWorker:
    """Delivers the journal's pending messages through ``channel``; ``await run()``."""

    def __init__(
        self,
        conversations: Conversations,
        channel: Channel,
        policy: RetryPolicy,
        *,
        rng: random.Random | None = None,
    ) -> None:
        self.conversations = conversations
        self.channel = channel
        self.policy = policy
        self._rng = rng or random.Random()
        self._queue: asyncio.Queue[int] = asyncio.Queue()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._inflight: set[int] = set()
        self._order: defaultdict[str, asyncio.Lock] = defaultdict(asyncio.Lock)
        self._tasks: set[asyncio.Task[Any]] = set()
        self._closing: list[tuple[int, Any, str | None, asyncio.Future[None]]] = []
        """Finished deliveries waiting for the next closing commit."""
        self._closer: asyncio.Task[None] | None = None

    def _notify(self, message_id: int) -> None:
        # Called after a commit, from whatever thread committed it.
        loop = self._loop
        if loop is None:
            return
        with contextlib.suppress(RuntimeError):  # the loop closed: next start retries it
            loop.call_soon_threadsafe(self._queue.put_nowait, message_id)

    async def run(self) -> None:
        """Deliver until cancelled; pending deliveries survive cancellation in the journal."""
        self._loop = asyncio.get_running_loop()
        self.conversations.add_outbound_listener(self._notify)
        try:
            for ident in await asyncio.to_thread(self.conversations.pending_deliveries):
                self._queue.put_nowait(ident)
            while True:
                ident = await self._queue.get()
                if ident in self._inflight:
                    continue
                self._inflight.add(ident)
                task = asyncio.create_task(self._deliver(ident), name=f"deliver-{ident}")
                self._tasks.add(task)
                task.add_done_callback(self._done)
        finally:
            self.conversations.remove_outbound_listener(self._notify)
            for task in list(self._tasks):
                task.cancel()
            if self._tasks:
                await asyncio.gather(*self._tasks, return_exceptions=True)

    def _done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("delivery task %s failed: %r", task.get_name(), task.exception())

    async def _deliver(self, ident: int) -> None:
        try:
            row = await asyncio.to_thread(self.conversations.delivery, ident)
            if row is None or row["status"] != "pending":
                return
            message = OutboundMessage(
                message_id=ident,
                conversa_id=row["conversa_id"],
                autor=row["role"],
                texto=row["text"],
                ts=str(row["ts"]),
                idempotency_key=row["idempotency_key"],
            )
            async with self._order[message.conversa_id]:
                await self._attempts(message)
        finally:
            self._inflight.discard(ident)

    async def _attempts(self, message: OutboundMessage) -> None:
        started = time.monotonic()
        retry = 0
        while True:
            try:
                await asyncio.to_thread(self.channel.send, message)
            except RetryableChannelError as exc:
                error = str(exc)
                delay = self.policy.next_delay(
                    retry, time.monotonic() - started, self._rng, exc.retry_after
                )
                if delay is None:
                    await self._finish(message, "failed", f"deadline passed: {error}")
                    return
                await asyncio.to_thread(
                    self.conversations.record_attempt, message.message_id, error
                )
                await asyncio.sleep(delay)
                retry += 1
                continue
            except ChannelError as exc:
                await self._finish(message, "failed", str(exc))
                return
            await self._finish(message, "delivered", None)
            return

    async def _finish(self, message: OutboundMessage, status: Any, error: str | None) -> None:
        """Close the delivery; return once its closing has committed."""
        if status == "failed":
            log.warning("message %d could not be delivered: %s", message.message_id, error)
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._closing.append((message.message_id, status, error, done))
        if self._closer is None or self._closer.done():
            self._closer = asyncio.create_task(self._close_waiting(), name="delivery-closer")
            self._tasks.add(self._closer)
            self._closer.add_done_callback(self._done)
        await done

    @property
    def closings_waiting(self) -> int:
        """Finished deliveries waiting for the next closing commit (the one in progress
        not counted)."""
        return len(self._closing)

    async def _close_waiting(self) -> None:
        """Commit every closing waiting, in one transaction, until none is left."""
        while self._closing:
            batch, self._closing = self._closing, []
            try:
                await asyncio.to_thread(
                    self.conversations.finish_deliveries, [item[:3] for item in batch]
                )
            except Exception as exc:  # each waiting delivery fails as it would alone
                for *_, done in batch:
                    if not done.done():
                        done.set_exception(exc)
            else:
                for *_, done in batch:
                    if not done.done():
                        done.set_result(None)
