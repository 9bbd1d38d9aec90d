"""The hub fans out batches: what waits for a subscriber comes as one batch, in id order."""

from __future__ import annotations

import asyncio
from itertools import pairwise
from typing import Any

from backend.broadcast import Broadcaster
from backend.events import Event, EventLog, EventType
from backend.store.db import Database

TICK = EventType.BENCH_TICK


async def _subscribed_and_one_delivered(hub: Broadcaster, log: EventLog) -> tuple[Any, Event]:
    """A batch subscription from now on, after one event appended and delivered at once."""
    batches = hub.subscribe_batches(after_id=log.last_id())
    first = asyncio.create_task(batches.__anext__())
    await asyncio.sleep(0.05)
    one = await asyncio.to_thread(log.append, TICK, {"i": 0, "t": 0.0})
    assert [e.id for e in await asyncio.wait_for(first, 5)] == [one.id]
    return batches, one


async def test_everything_waiting_comes_as_one_batch_in_order(sqlite_db: Database) -> None:
    log = EventLog(sqlite_db)
    hub = Broadcaster(log)
    await hub.start()
    try:
        batches, _ = await _subscribed_and_one_delivered(hub, log)
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


async def _take(sub: Any, n: int) -> list[int]:
    got: list[int] = []
    async for event in sub:
        got.append(event.id)
        if len(got) == n:
            break
    return got


class _TimedHub(Broadcaster):
    """A hub that notes when (loop time) each fan-out happened and what it carried."""

    def __init__(self, log: EventLog, **kwargs: float) -> None:
        super().__init__(log, **kwargs)
        self.fan_outs: list[tuple[float, list[int]]] = []

    def _fan_out(self, batch: list[Event]) -> None:
        self.fan_outs.append((asyncio.get_running_loop().time(), [e.id for e in batch]))
        super()._fan_out(batch)


async def test_an_event_after_a_quiet_spell_goes_out_at_once_and_a_burst_waits(
    sqlite_db: Database,
) -> None:
    log = EventLog(sqlite_db)
    hub = _TimedHub(log, min_interval=30.0)  # a pause would outlast every timeout below
    await hub.start()
    try:
        batches, one = await _subscribed_and_one_delivered(hub, log)
        # Right after a fan-out, the next events wait out the interval, together.
        two = await asyncio.to_thread(log.append, TICK, {"i": 1, "t": 0.0})
        three = await asyncio.to_thread(log.append, TICK, {"i": 2, "t": 0.0})
        await asyncio.sleep(0.5)
        assert hub.cursor == one.id
    finally:
        await hub.stop()  # stop delivers what is committed, interval or not
    got = await asyncio.wait_for(batches.__anext__(), 5)
    assert [e.id for e in got] == [two.id, three.id]
    await batches.aclose()


async def test_a_flood_is_fanned_out_in_order_never_faster_than_the_interval(
    sqlite_db: Database,
) -> None:
    log = EventLog(sqlite_db)
    interval = 0.02
    hub = _TimedHub(log, min_interval=interval)
    await hub.start()
    try:
        sub = hub.subscribe(after_id=log.last_id())
        n = 200
        reader = asyncio.create_task(_take(sub, n))
        await asyncio.sleep(0.05)  # subscribed before the flood: everything comes live

        def flood() -> list[int]:
            return [log.append(TICK, {"i": i, "t": 0.0}).id for i in range(n)]

        ids = await asyncio.to_thread(flood)
        assert await asyncio.wait_for(reader, 10) == ids  # each once, in id order
        assert [i for _, batch in hub.fan_outs for i in batch] == ids
        times = [t for t, _ in hub.fan_outs]
        gaps = [later - earlier for earlier, later in pairwise(times)]
        assert all(gap >= interval * 0.99 for gap in gaps), gaps
    finally:
        await hub.stop()


def test_one_batch_larger_than_the_queue_never_overflows_a_reader_that_keeps_up() -> None:
    from backend.broadcast import _Subscriber

    def events(first: int, n: int) -> list[Event]:
        return [Event(i, TICK.value, "", None, None, None, {}) for i in range(first, first + n)]

    sub = _Subscriber(maxsize=10)
    sub.offer(events(1, 25))  # a paced fan-out under a flood: bigger than the queue
    assert not sub.overflowed
    assert [e.id for e in sub.pending] == list(range(1, 26))
    sub.offer(events(26, 1))  # but a reader that stopped taking them is bounded
    assert sub.overflowed
    assert not sub.pending
