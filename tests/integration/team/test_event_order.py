"""PostgreSQL appenders do not serialize, and ``EventLog.after`` readers still never miss a
lower id that commits after a higher one (the settled horizon, see backend/events/log.py)."""

from __future__ import annotations

import random
import threading
import time

import psycopg

from backend.events import EventLog, EventType
from backend.store.db import Database, PostgresDatabase, open_database

TICK = EventType.BENCH_TICK
_COMMITS = threading.Lock()


def _tick(i: int) -> dict[str, int | float]:
    return {"i": i, "t": 0.0}


def test_two_open_appenders_do_not_wait_for_each_other(pg_db: Database) -> None:
    log = EventLog(pg_db)
    with pg_db.transaction() as first:
        a = log.append_in(first, TICK, _tick(1))
        # Another connection appends and commits while ``first`` is still open: with one
        # exclusive lock held to the commit this would wait forever (lock_timeout: fail).
        with pg_db.transaction() as second:
            second.execute_sql("SET LOCAL lock_timeout = '2s'")
            b = log.append_in(second, TICK, _tick(2))
    assert a.id < b.id
    assert [e.id for e in log.after(0)] == [a.id, b.id]


def _barrier_waiting(url: str) -> bool:
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_locks l JOIN pg_database d ON d.oid = l.database"
            " WHERE d.datname = current_database() AND l.locktype = 'relation'"
            " AND l.relation = 'events_order'::regclass AND NOT l.granted"
        ).fetchone()
    return bool(row and row[0])


def test_a_reader_waits_for_the_lower_id_still_in_flight(pg_db: Database) -> None:
    writer = EventLog(pg_db)
    reader_db = open_database(pg_db.url)  # the reader: another process's pool
    try:
        reader = EventLog(reader_db)
        got: list[int] = []
        with pg_db.transaction() as slow:
            low = writer.append_in(slow, TICK, _tick(1))
            high = writer.append(TICK, _tick(2))  # commits while ``low`` is in flight
            with reader_db.transaction(write=False) as naive:
                visible = [r["id"] for r in naive.all("events_after", {"after": 0, "limit": 9})]
            assert visible == [high.id]  # a plain read would skip ``low`` for good
            thread = threading.Thread(target=lambda: got.extend(e.id for e in reader.after(0)))
            thread.start()
            deadline = time.monotonic() + 5
            while not _barrier_waiting(pg_db.url):
                assert time.monotonic() < deadline, "the reader never reached the barrier"
                time.sleep(0.005)
        thread.join(5)
        assert got == [low.id, high.id]
    finally:
        reader_db.close()


def test_the_tail_waits_for_the_lower_id_still_in_flight(pg_db: Database) -> None:
    """``before()`` (the console's tail) then ``after()`` from its newest id: the lower id
    that commits late is in one of the two, not lost between them."""
    writer = EventLog(pg_db)
    reader_db = open_database(pg_db.url)
    try:
        reader = EventLog(reader_db)
        tail: list[int] = []
        with pg_db.transaction() as slow:
            low = writer.append_in(slow, TICK, _tick(1))
            high = writer.append(TICK, _tick(2))  # commits while ``low`` is in flight
            with reader_db.transaction(write=False) as naive:
                rows = naive.all("events_before", {"before": 2**62, "limit": 9})
            assert [r["id"] for r in rows] == [high.id]  # a plain tail: resuming skips low
            thread = threading.Thread(
                target=lambda: tail.extend(e.id for e in reader.before(2**62, 9))
            )
            thread.start()
            deadline = time.monotonic() + 5
            while not _barrier_waiting(pg_db.url):
                assert time.monotonic() < deadline, "the tail never reached the barrier"
                time.sleep(0.005)
        thread.join(5)
        resumed = [e.id for e in reader.after(max(tail, default=0))]
        assert sorted(tail + resumed) == [low.id, high.id]
        assert tail == [high.id, low.id]  # both committed by the time the barrier let it go
    finally:
        reader_db.close()


def _writer(
    url: str, n: int, seed: int, committed: list[tuple[int, int]], clock: list[int]
) -> None:
    db = open_database(url)
    log = EventLog(db)
    rng = random.Random(seed)
    try:
        for i in range(n):
            rollback = rng.random() < 0.15
            try:
                with db.transaction() as tx:
                    event = log.append_in(tx, TICK, _tick(i))
                    # Hold the id a moment so commits land out of id order across writers.
                    tx.execute_sql("SELECT pg_sleep(%(s)s)", {"s": rng.random() * 0.004})
                    if rollback:
                        raise LookupError("rolled back on purpose: a gap that never fills")
            except LookupError:
                continue
            with _COMMITS:
                clock[0] += 1
                committed.append((clock[0], event.id))
    finally:
        db.close()


def test_concurrent_appenders_and_a_resuming_reader_agree(pg_db: Database) -> None:
    assert isinstance(pg_db, PostgresDatabase)
    committed: list[tuple[int, int]] = []
    clock = [0]
    writers = [
        threading.Thread(target=_writer, args=(pg_db.url, 60, seed, committed, clock))
        for seed in range(4)
    ]
    reader = EventLog(open_database(pg_db.url))
    seen: list[int] = []
    for w in writers:
        w.start()
    try:
        while any(w.is_alive() for w in writers):
            batch = reader.after(seen[-1] if seen else 0, 7)  # resumes by after=, like SSE
            seen.extend(e.id for e in batch)
        seen.extend(e.id for e in reader.after(seen[-1] if seen else 0, 10_000))
    finally:
        for w in writers:
            w.join(30)
        reader.db.close()
    ids = sorted(i for _, i in committed)
    assert seen == ids  # every committed id, once, in id order; rolled-back ids never show
    assert set(range(ids[0], ids[-1] + 1)) - set(ids), "no rollback left a gap"
    in_commit_order = [i for _, i in sorted(committed)]
    assert in_commit_order != ids, "no commit landed out of id order: the test proved nothing"
