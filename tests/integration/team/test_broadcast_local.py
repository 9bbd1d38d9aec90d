"""On SQLite the hub fans out what this process announced without reading it back, and
falls back to the log whenever what it was told does not continue right after its cursor."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from backend.broadcast import Broadcaster
from backend.events import Event, EventLog, EventType
from backend.store.db import Database

TICK = EventType.BENCH_TICK


def _tick(i: int) -> dict[str, Any]:
    return {"i": i, "t": 0.0}


class CountedLog(EventLog):
    """An event log that counts the hub's reads of it."""

    reads = 0

    def after(self, after_id: int = 0, limit: int = 500) -> list[Event]:
        self.reads += 1
        return super().after(after_id, limit)


def _commit_unannounced(log: EventLog, i: int) -> Event:
    """Append and commit one event without telling the listeners (as another process would)."""
    with log.db.transaction() as tx:
        return log.append_in(tx, TICK, _tick(i))


async def _take(it: Any, n: int) -> list[Event]:
    out: list[Event] = []

    async def run() -> None:
        async for item in it:
            out.append(item)
            if len(out) >= n:
                return

    await asyncio.wait_for(run(), 10)
    return out


@asynccontextmanager
async def _watching(log: EventLog, n: int) -> AsyncIterator[tuple[Any, asyncio.Task[list[Event]]]]:
    """A started hub's subscription from now on, and a task taking its next ``n`` events."""
    hub = Broadcaster(log)
    await hub.start()
    try:
        sub = hub.subscribe(after_id=log.last_id())
        first = asyncio.create_task(_take(sub, n))
        await asyncio.sleep(0.05)
        yield sub, first
    finally:
        await hub.stop()


async def test_announced_events_are_fanned_out_without_reading_the_log(
    sqlite_db: Database,
) -> None:
    log = CountedLog(sqlite_db)
    async with _watching(log, 20) as (_, first):
        log.reads = 0
        appended = [await asyncio.to_thread(log.append, TICK, _tick(i)) for i in range(20)]
        got = await first
        assert [(e.id, e.payload) for e in got] == [(e.id, e.payload) for e in appended]
        assert log.reads == 0
        # What it fanned out is what a read of the log returns, field for field.
        assert got == log.after(appended[0].id - 1, 100)


async def test_an_unannounced_event_before_an_announced_one_is_read_from_the_log(
    sqlite_db: Database,
) -> None:
    log = CountedLog(sqlite_db)
    async with _watching(log, 3) as (_, first):
        silent = await asyncio.to_thread(_commit_unannounced, log, 0)
        told = [await asyncio.to_thread(log.append, TICK, _tick(i)) for i in (1, 2)]
        got = await first
        assert [e.id for e in got] == [silent.id, *(e.id for e in told)]
        assert [e.payload["i"] for e in got] == [0, 1, 2]
        assert log.reads >= 1


async def test_announcements_out_of_commit_order_are_delivered_in_id_order_once(
    sqlite_db: Database,
) -> None:
    log = EventLog(sqlite_db)
    async with _watching(log, 4) as (sub, first):
        # Four commits whose after-commit announcements run in the opposite order, as two
        # threads' callbacks can.
        events = [await asyncio.to_thread(_commit_unannounced, log, i) for i in range(4)]
        for event in reversed(events):
            log.publish([event])
            await asyncio.sleep(0.01)  # let the hub drain between announcements
        got = await first
        assert [e.id for e in got] == [e.id for e in events]
        # Nothing more comes: the run the hub read from the log is not sent again.
        more = await asyncio.to_thread(log.append, TICK, _tick(9))
        assert [e.id for e in await _take(sub, 1)] == [more.id]


async def test_stop_delivers_what_the_log_holds_even_unannounced(sqlite_db: Database) -> None:
    log = EventLog(sqlite_db)
    hub = Broadcaster(log)
    await hub.start()
    batches = hub.subscribe_batches(after_id=log.last_id())
    first = asyncio.create_task(batches.__anext__())
    await asyncio.sleep(0.05)
    told = await asyncio.to_thread(log.append, TICK, _tick(0))
    assert [e.id for e in await asyncio.wait_for(first, 5)] == [told.id]
    silent = await asyncio.to_thread(_commit_unannounced, log, 1)
    await hub.stop()
    assert hub.cursor == silent.id
    await batches.aclose()
