"""Deliveries as one ``deliver`` job on the job engine: the journal's pending messages out.

Recording an outbound message enqueues the job in the message's own transaction. A run
sends every due delivery: a conversation's in order, conversations side by side. A
transient failure gets a ``next_at`` from :class:`~backend.channel.base.RetryPolicy`
(honouring ``Retry-After``) and the job snoozes until the earliest; past the deadline the
delivery is ``failed``. Every attempt reuses the delivery's idempotency key. Closings are
group committed; a crash before one commits leaves its delivery pending, sent again.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections import defaultdict
from typing import Any

from backend.channel.base import Channel, OutboundMessage, RetryPolicy
from backend.channel.exceptions import ChannelError, RetryableChannelError
from backend.clock import parse_moment
from backend.guard.conversations import Conversations
from backend.jobs import Backoff, Job, Jobs, SnoozeError
from backend.store.db import Tx

log = logging.getLogger(__name__)

DELIVER = "deliver"
"""The job kind (and unique key) of the deliveries: one run at a time across processes."""


class DeliveryWorker:
    """Delivers the journal's pending messages through ``channel`` as ``deliver`` jobs."""

    def __init__(
        self,
        conversations: Conversations,
        channel: Channel,
        policy: RetryPolicy,
        jobs: Jobs,
        *,
        rng: random.Random | None = None,
    ) -> None:
        self.conversations = conversations
        self.channel = channel
        self.policy = policy
        self.jobs = jobs
        self._rng = rng or random.Random()
        self._closing: list[tuple[int, Any, str | None, asyncio.Future[None]]] = []
        """Finished deliveries waiting for the next closing commit."""
        self._closer: asyncio.Task[None] | None = None
        jobs.register(
            DELIVER,
            self._run,
            max_attempts=1000,  # a run fails only when the database does: keep trying
            backoff=Backoff(base_s=0.5, max_s=30.0),
            lease_s=30.0,
            stop_grace_s=0.0,
        )
        conversations.add_outbound_hook(self._enqueue_in)
        conversations.add_outbound_listener(lambda _message_id: jobs.wake(DELIVER))

    def _enqueue_in(self, tx: Tx) -> None:
        self.jobs.enqueue(DELIVER, unique_key=DELIVER, again=True, tx=tx)

    def resume(self) -> None:
        """Have a run look at the journal (at start: what a stop or a crash left pending)."""
        self.jobs.enqueue(DELIVER, unique_key=DELIVER, again=True)

    async def _run(self, job: Job) -> None:
        rows = await asyncio.to_thread(self.conversations.pending_delivery_rows)
        by_conversation: defaultdict[str, list[dict[str, Any]]] = defaultdict(list)
        for row in rows:
            by_conversation[row["conversa_id"]].append(row)
        later = await asyncio.gather(
            *(self._conversation(q) for q in by_conversation.values()), return_exceptions=True
        )
        for outcome in later:  # every conversation has finished its part first
            if isinstance(outcome, BaseException):
                raise outcome
        waits = [t for t in later if isinstance(t, float)]
        if waits:  # a retry is due later: the job waits for the earliest one
            raise SnoozeError(max(0.0, min(waits) - time.time()), "a delivery waits to retry")

    async def _conversation(self, queue: list[dict[str, Any]]) -> float | None:
        """Send one conversation's due messages in order; when the next one is due, if later."""
        for row in queue:
            if float(row["next_at"]) > time.time():
                return float(row["next_at"])
            message = OutboundMessage(
                message_id=int(row["message_id"]),
                conversa_id=row["conversa_id"],
                autor=row["role"],
                texto=row["text"],
                ts=str(row["ts"]),
                idempotency_key=row["idempotency_key"],
            )
            retry_at = await self._attempt(message, int(row["attempts"]), _epoch(row["created_at"]))
            if retry_at is not None:
                return retry_at
        return None

    async def _attempt(self, message: OutboundMessage, retry: int, since: float) -> float | None:
        """One try; when to try again (after a transient failure), else ``None`` (closed)."""
        try:
            await asyncio.to_thread(self.channel.send, message)
        except RetryableChannelError as exc:
            delay = self.policy.next_delay(
                retry, max(0.0, time.time() - since), self._rng, exc.retry_after
            )
            if delay is None:
                await self._finish(message, "failed", f"deadline passed: {exc}")
                return None
            at = time.time() + delay
            await asyncio.to_thread(
                self.conversations.record_attempt, message.message_id, str(exc), at
            )
            return at
        except ChannelError as exc:
            await self._finish(message, "failed", str(exc))
            return None
        await self._finish(message, "delivered", None)
        return None

    async def _finish(self, message: OutboundMessage, status: Any, error: str | None) -> None:
        """Close the delivery; return once its closing has committed."""
        if status == "failed":
            log.warning("message %d could not be delivered: %s", message.message_id, error)
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._closing.append((message.message_id, status, error, done))
        if self._closer is None or self._closer.done():
            self._closer = asyncio.create_task(self._close_waiting(), name="delivery-closer")
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


def _epoch(stamp: Any) -> float:
    """A stored timestamp as epoch seconds (an unreadable one counts as now)."""
    moment = parse_moment(stamp)
    return time.time() if moment is None else moment.timestamp()
