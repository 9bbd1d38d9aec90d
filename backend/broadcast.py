"""Live fan-out of the event log to subscribers (SSE clients, the in-process console).

The log is the source of truth: on every signal (an append here, or a PostgreSQL
``NOTIFY`` from another process) the hub reads the log after the last id it sent and hands
the new events to every subscriber in id order, so every process sees the same stream.
Each subscriber has a bounded backlog; one too far behind gets a :class:`Resync` and must
refetch. Resuming after an id replays from the log, then goes live: no gap, no duplicate.
Fan-outs are whole batches, paced ``min_interval`` apart, leading edge first; on SQLite
the hub fans out what this process announced without reading it back. Why and the
figures: docs/decisions/0002-broadcast-batched-paced-fan-out.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace

from backend.events import Event, EventLog
from backend.exceptions import StorageError
from backend.store.db import PostgresDatabase, dumps, loads

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Resync:
    """The subscriber missed events; ``last_id`` is where live delivery continues."""

    last_id: int


class _Subscriber:
    """Events waiting for one subscriber (at most ``maxsize``) and its wake-up."""

    def __init__(self, maxsize: int) -> None:
        self.maxsize = maxsize
        self.pending: deque[Event] = deque()
        self.ready = asyncio.Event()
        self.overflowed = False

    def offer(self, batch: list[Event]) -> None:
        """Queue ``batch``, or mark the subscriber overflowed when it would not fit.

        A subscriber that took everything it was given is never overflowed by one batch,
        however large: a paced fan-out under a flood can carry more than ``maxsize``
        events, and it is the backlog of a reader that stopped taking them that is bounded.
        """
        if self.overflowed:
            return
        if self.pending and len(self.pending) + len(batch) > self.maxsize:
            self.overflowed = True  # the subscriber will be told to resync
            self.pending.clear()
        else:
            self.pending.extend(batch)
        self.ready.set()

    async def take(self) -> list[Event]:
        """Everything waiting (at least one event, unless overflowed)."""
        while not self.pending and not self.overflowed:
            self.ready.clear()
            await self.ready.wait()
        batch = list(self.pending)
        self.pending.clear()
        return batch


class Broadcaster:
    """Start with :meth:`start` inside a running event loop; :meth:`stop` on shutdown."""

    def __init__(
        self,
        events: EventLog,
        *,
        queue_size: int = 2000,
        max_backfill: int = 20_000,
        min_interval: float = 0.005,
    ) -> None:
        """``min_interval``: the least time between two fan-outs (seconds; 0 for none)."""
        self.events = events
        self.queue_size = queue_size
        self.max_backfill = max_backfill
        self.min_interval = min_interval
        self._last_fan_out = float("-inf")
        self._subs: set[_Subscriber] = set()
        self._cursor = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wake: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None
        self._listen_thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self._signalled = False
        # SQLite: events this process committed and announced, not yet fanned out (by id).
        self._local: dict[int, Event] | None = (
            None if isinstance(events.db, PostgresDatabase) else {}
        )
        self._local_lock = threading.Lock()

    @property
    def cursor(self) -> int:
        """The last event id fanned out."""
        return self._cursor

    async def start(self) -> None:
        """Begin fanning out new events (and LISTEN on PostgreSQL)."""
        self._loop = asyncio.get_running_loop()
        self._wake = asyncio.Event()
        self._cursor = await asyncio.to_thread(self.events.last_id)
        self.events.add_listener(self._on_local_append)
        self._task = asyncio.create_task(self._pump(), name="cadencia-broadcast")
        if isinstance(self.events.db, PostgresDatabase):
            self._listen_thread = threading.Thread(
                target=self._listen, daemon=True, name="cadencia-listen"
            )
            self._listen_thread.start()

    async def stop(self) -> None:
        """Deliver what is already in the log, then stop."""
        self.events.remove_listener(self._on_local_append)
        self._stopping.set()
        await self._drain(read_log=True)
        if self._task:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    def notify(self) -> None:
        """Thread-safe: there may be new events in the log.

        Coalesced: while a wake-up is already scheduled, or the hub is waiting out
        ``min_interval`` before its drain, further appends add nothing (the drain that
        follows reads everything after the cursor anyway).
        """
        loop, wake = self._loop, self._wake
        if loop is None or wake is None or loop.is_closed() or self._signalled:
            return
        self._signalled = True
        loop.call_soon_threadsafe(self._wake_up)

    def _wake_up(self) -> None:
        assert self._wake is not None
        self._wake.set()

    def _on_local_append(self, event: Event) -> None:
        if self._local is not None:
            # As a read of the log would return it: the payload through its stored JSON (a
            # Decimal becomes its string), and not shared with the appender's dict.
            stored = replace(event, payload=loads(dumps(event.payload)))
            with self._local_lock:
                self._local[event.id] = stored
        self.notify()

    def _take_local(self) -> tuple[list[Event], bool]:
        """The announced run right after the cursor, and whether the log must be read too
        (nothing announced starts there, or more was announced beyond a gap)."""
        if self._local is None:
            return [], True
        with self._local_lock:
            for stale in [i for i in self._local if i <= self._cursor]:
                del self._local[stale]  # already fanned out from a read of the log
            run: list[Event] = []
            nxt = self._cursor + 1
            while (event := self._local.pop(nxt, None)) is not None:
                run.append(event)
                nxt += 1
            return run, bool(self._local) or not run

    async def _pump(self) -> None:
        assert self._wake is not None
        loop = asyncio.get_running_loop()
        while True:
            await self._wake.wait()
            pause = self._last_fan_out + self.min_interval - loop.time()
            if pause > 0:  # the previous fan-out was moments ago: let this batch grow
                await asyncio.sleep(pause)
            self._wake.clear()
            self._signalled = False  # cleared before the drain, so later appends signal again
            try:
                self._last_fan_out = loop.time()
                await self._drain()
            except Exception:
                log.exception("broadcast: reading the event log failed; retrying")
                await asyncio.sleep(0.5)
                self._wake.set()

    async def _drain(self, *, read_log: bool = False) -> None:
        run, read = self._take_local()
        if run:
            self._fan_out(run)
        read = read or read_log
        while read:
            batch = await asyncio.to_thread(self.events.after, self._cursor, 1000)
            if batch:
                self._fan_out(batch)
            read = len(batch) == 1000

    def _fan_out(self, batch: list[Event]) -> None:
        self._cursor = batch[-1].id
        for sub in list(self._subs):
            sub.offer(batch)

    def _listen(self) -> None:
        """LISTEN for other processes' appends (PostgreSQL only), on the deployment's secret
        channel (migration 0018: no tool role can name it, so none can LISTEN or NOTIFY it)."""
        import psycopg
        from psycopg import sql

        db = self.events.db
        assert isinstance(db, PostgresDatabase)
        while not self._stopping.is_set():
            try:
                with db.transaction(write=False) as tx:
                    row = tx.one("events_channel")  # migration 0018's only row
                if row is None:
                    raise StorageError("events_channel has no row: run `cadencia db migrate`")
                channel = str(row["name"])
                with psycopg.connect(db.url, autocommit=True) as conn:
                    conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(channel)))
                    self.notify()  # catch up on anything missed while (re)connecting
                    while not self._stopping.is_set():
                        if any(True for _ in conn.notifies(timeout=1.0, stop_after=100)):
                            self.notify()
            except (psycopg.Error, StorageError):
                log.warning("broadcast: LISTEN connection lost; reconnecting")
                self._stopping.wait(1.0)

    async def subscribe(self, after_id: int | None = None) -> AsyncIterator[Event | Resync]:
        """Yield events after ``after_id`` (None: from now on), then live ones, forever."""
        async for batch in self.subscribe_batches(after_id):
            if isinstance(batch, Resync):
                yield batch
                continue
            for event in batch:
                yield event

    async def subscribe_batches(
        self, after_id: int | None = None
    ) -> AsyncIterator[list[Event] | Resync]:
        """Like :meth:`subscribe`, but yield every event waiting at once (never empty)."""
        sub = _Subscriber(self.queue_size)
        self._subs.add(sub)
        try:
            last = self._cursor if after_id is None else after_id
            if after_id is not None:
                backlog_end = await asyncio.to_thread(self.events.last_id)
                if backlog_end - after_id > self.max_backfill:
                    last = backlog_end
                    yield Resync(backlog_end)
                while last < backlog_end:
                    batch = await asyncio.to_thread(self.events.after, last, 1000)
                    if not batch:
                        break
                    last = batch[-1].id
                    yield batch
            while True:
                if sub.overflowed:
                    sub.overflowed = False
                    sub.pending.clear()
                    last = self._cursor
                    yield Resync(last)
                    continue
                batch = await sub.take()
                if batch and batch[0].id <= last:  # already sent from the backlog
                    batch = [event for event in batch if event.id > last]
                if not batch:
                    continue
                last = batch[-1].id
                yield batch
        finally:
            self._subs.discard(sub)

    @property
    def subscriber_count(self) -> int:
        """How many subscribers are attached."""
        return len(self._subs)
