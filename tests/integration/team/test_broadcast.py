"""Live broadcast of the event log: order, resume without gap or duplicate, slow clients,
and two processes on one PostgreSQL seeing each other's events."""

from __future__ import annotations

import asyncio
import multiprocessing
import threading

from backend.broadcast import Broadcaster, Resync
from backend.events import EventLog, EventType
from backend.store.db import Database, open_database

TICK = EventType.BENCH_TICK  # a synthetic event: {"i": n, "t": wall clock}


def _tick(i: int) -> dict[str, int | float]:
    return {"i": i, "t": 0.0}


async def _take(it, n: int, timeout: float = 10.0) -> list:
    out = []

    async def run() -> None:
        async for item in it:
            out.append(item)
            if len(out) >= n:
                return

    await asyncio.wait_for(run(), timeout)
    return out


async def test_live_events_arrive_in_order_from_many_threads(any_db: Database) -> None:
    log = EventLog(any_db)
    hub = Broadcaster(log)
    await hub.start()
    try:
        sub = hub.subscribe(after_id=log.last_id())  # "from now", without a start-up race
        first = asyncio.create_task(_take(sub, 200))
        await asyncio.sleep(0.05)

        def writer(k: int) -> None:
            for i in range(50):
                log.append(TICK, _tick(1000 * k + i))

        threads = [threading.Thread(target=writer, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        got = await first
        ids = [e.id for e in got]
        assert ids == sorted(ids)
        assert len(set(ids)) == 200
    finally:
        await hub.stop()


async def test_resume_after_id_has_no_gap_and_no_duplicate(any_db: Database) -> None:
    log = EventLog(any_db)
    for i in range(30):
        log.append(TICK, _tick(i))
    hub = Broadcaster(log)
    await hub.start()
    try:
        resume_from = 10
        sub = hub.subscribe(after_id=resume_from)
        task = asyncio.create_task(_take(sub, 40))
        for i in range(20):  # appended while the subscriber replays the backlog
            await asyncio.to_thread(log.append, TICK, _tick(100 + i))
        got = await task
        assert [e.id for e in got] == list(range(resume_from + 1, resume_from + 41))
    finally:
        await hub.stop()


async def test_slow_subscriber_is_told_to_resync_and_fast_one_is_not(sqlite_db: Database) -> None:
    log = EventLog(sqlite_db)
    hub = Broadcaster(log, queue_size=10)
    await hub.start()
    try:
        now = log.last_id()
        slow = hub.subscribe(after_id=now)
        fast = hub.subscribe(after_id=now)
        slow_first = asyncio.create_task(slow.__anext__())
        fast_all = asyncio.create_task(_take(fast, 50))
        await asyncio.sleep(0.05)
        for i in range(50):
            await asyncio.to_thread(log.append, TICK, _tick(i))
        fast_events = await fast_all
        assert all(not isinstance(e, Resync) for e in fast_events)
        await slow_first  # the slow one took one event, then stopped reading
        await asyncio.sleep(0.2)
        nxt = await asyncio.wait_for(slow.__anext__(), 5)
        assert isinstance(nxt, Resync)
        assert nxt.last_id >= fast_events[-1].id - 1
    finally:
        await hub.stop()


def _append_from_other_process(url: str, n: int) -> None:
    db = open_database(url)
    log = EventLog(db)
    for i in range(n):
        log.append(TICK, _tick(i))
    db.close()


async def test_two_processes_on_one_postgres_see_each_others_events(pg_db: Database) -> None:
    hub = Broadcaster(EventLog(pg_db))
    await hub.start()
    try:
        sub = hub.subscribe()
        task = asyncio.create_task(_take(sub, 25, timeout=20))
        await asyncio.sleep(0.3)  # LISTEN is up
        proc = multiprocessing.get_context("spawn").Process(
            target=_append_from_other_process, args=(pg_db.url, 25)
        )
        proc.start()
        got = await task
        proc.join(10)
        assert [e.payload["i"] for e in got] == list(range(25))
        assert {e.type for e in got} == {"bench.tick"}
    finally:
        await hub.stop()
