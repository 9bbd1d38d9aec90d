"""The hub fans out batches: what waits for a subscriber comes as one batch, in id order."""

from __future__ import annotations

import asyncio

from backend.broadcast import Broadcaster
from backend.events import EventLog, EventType
from backend.store.db import Database

TICK = EventType.BENCH_TICK


async def test_everything_waiting_comes_as_one_batch_in_order(sqlite_db: Database) -> None:
    log = EventLog(sqlite_db)
    hub = Broadcaster(log)
    await hub.start()
    try:
        batches = hub.subscribe_batches(after_id=log.last_id())
        first = asyncio.create_task(batches.__anext__())
        await asyncio.sleep(0.05)
        one = await asyncio.to_thread(log.append, TICK, {"i": 0, "t": 0.0})
        assert [e.id for e in await asyncio.wait_for(first, 5)] == [one.id]
        # Five more while the subscriber is not reading: the hub delivers them, then the
        # subscriber takes all five at once.
        later = [await asyncio.to_thread(log.append, TICK, {"i": i, "t": 0.0}) for i in range(5)]
        for _ in range(100):
            if hub.cursor == later[-1].id:
                break
            await asyncio.sleep(0.02)
        got = await asyncio.wait_for(batches.__anext__(), 5)
        assert [e.id for e in got] == [e.id for e in later]
        assert [e.payload["i"] for e in got] == list(range(5))
        await batches.aclose()
        assert hub.subscriber_count == 0
    finally:
        await hub.stop()
