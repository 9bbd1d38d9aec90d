"""The roster projection: incremental == rebuild == the in-memory fold, on both dialects.

A seeded random history of a few thousand events of every roster-relevant type is appended
through the product's path (``EventLog.append_in`` with the projector, in bulk
transactions); the table the appends kept, the table a rebuild writes and the fold of the
log must be the same table, and the roster rendered from each the same roster, for every
project and as of random events N.
"""

from __future__ import annotations

import random
import threading

import pytest

from backend.agents.roster import derive_roster, render_roster
from backend.agents.roster_facts import GLOBAL, fold
from backend.events import Event, EventLog, EventType
from backend.projections.rebuild import ensure_current, rebuild
from backend.projections.roster_table import RosterProjection
from backend.store.db import Database, open_database
from tests.integration.projections.history import PROJECTS, Append, history

EVERY = 150
N = 1200


def _projected(db: Database) -> tuple[EventLog, RosterProjection]:
    events = EventLog(db)
    projection = RosterProjection(db, events, snapshot_every=EVERY)
    events.add_projector(projection.apply)
    return events, projection


def _append(events: EventLog, appends: list[Append], batch: int = 400) -> None:
    for start in range(0, len(appends), batch):
        with events.db.transaction() as tx:
            for a in appends[start : start + batch]:
                events.append_in(tx, a.type, a.payload, project_id=a.project_id, agent=a.agent)


def _pause_then_fail(events: EventLog) -> None:
    with events.db.transaction() as tx:
        events.append_in(tx, EventType.AGENT_PAUSED, {"operator": "eve"}, agent="criativo")
        raise RuntimeError("the caller's transaction fails after the append")


def _rosters(entries: list) -> list[dict]:  # type: ignore[type-arg]
    return [e.to_dict() for e in entries]


def _of(events: list[Event], project: str) -> list[Event]:
    return [e for e in events if e.project_id in (None, project)]


def test_rebuild_equals_incremental_equals_the_fold(any_db: Database) -> None:
    events, projection = _projected(any_db)
    _append(events, history(seed=14, n=N))
    with pytest.raises(RuntimeError):
        _pause_then_fail(events)
    log = events.until(events.last_id())
    assert len(log) == N

    folded = fold(log)
    incremental = projection.table()
    assert incremental == folded
    for project in PROJECTS:
        want = _rosters(derive_roster(_of(log, project)))
        assert _rosters(render_roster(projection.facts(project))) == want
    assert _rosters(render_roster(projection.facts(None))) == _rosters(derive_roster(log))
    paused = incremental.get(GLOBAL, {}).get("pause:criativo")
    assert paused is None or paused.value != ["eve", ""]  # the rolled-back pause left nothing

    result = rebuild(projection, batch=700)
    assert (result.events, result.upto, result.snapshots) == (N, log[-1].id, N // EVERY)
    assert projection.table() == folded

    # The upserts commute: the log applied backwards onto an empty table lands the same.
    with any_db.transaction() as tx:
        tx.execute("roster_facts_clear")
        for event in reversed(log):
            projection.apply(tx, event)
    assert projection.table() == folded


def test_time_travel_is_the_fold_of_the_events_up_to_n(any_db: Database) -> None:
    events, projection = _projected(any_db)
    _append(events, history(seed=7, n=700))
    log = events.until(events.last_id())
    rng = random.Random(3)
    for at in [*sorted(rng.sample(range(len(log) + 5), 6)), 0, EVERY, len(log)]:
        upto = [e for e in log if e.id <= at]
        assert projection.snapshots.tables_at(at) == fold(upto), at
        project = rng.choice(PROJECTS)
        want = _rosters(derive_roster(_of(upto, project)))
        assert _rosters(render_roster(projection.facts_at(at, project))) == want
    # Snapshots were built lazily, each from the one before: never a replay from event 1.
    upto, _ = projection.snapshots.latest(len(log))
    assert upto == (len(log) // EVERY) * EVERY


def test_the_background_builds_one_snapshot_per_step_each_the_fold_up_to_it(
    sqlite_db: Database,
) -> None:
    """keep_current's step: one block at a time, the tables carried from the step before,
    each snapshot the fold of the log up to it; nothing left to build ends the catch-up."""
    events, projection = _projected(sqlite_db)
    _append(events, history(seed=5, n=4 * EVERY + 40))
    log = events.until(events.last_id())
    snapshots = projection.snapshots
    carried, built = None, []
    while (carried := snapshots.build_next(carried)) is not None:
        built.append(carried[0])
        assert carried[1] == fold([e for e in log if e.id <= carried[0]])
        assert snapshots.latest(len(log))[0] == carried[0]  # stored as it goes
    assert built == [EVERY, 2 * EVERY, 3 * EVERY, 4 * EVERY]
    assert snapshots.build_next() is None  # from the stored ones: nothing missing either


def test_a_database_whose_log_predates_the_projection_is_rebuilt_once(sqlite_db: Database) -> None:
    bare = EventLog(sqlite_db)  # a writer without the projector: facts are missing
    _append(bare, history(seed=1, n=300))
    with sqlite_db.transaction() as tx:
        tx.execute_sql("DELETE FROM projection_state")  # as a data dir migrated before 0013
    _, projection = _projected(sqlite_db)
    assert ensure_current(projection) is True
    assert projection.table() == fold(bare.until(bare.last_id()))
    assert ensure_current(projection) is False
    _append(bare, history(seed=2, n=50))  # a writer without the projector, again
    assert ensure_current(projection) is True
    assert projection.table() == fold(bare.until(bare.last_id()))


def test_concurrent_writers_on_postgresql_converge(pg_db: Database) -> None:
    dbs = [pg_db, open_database(pg_db.url)]  # two pools: as two serve processes
    try:
        logs = [_projected(db) for db in dbs]
        errors: list[BaseException] = []

        def write(i: int) -> None:
            try:
                _append(logs[i][0], history(seed=100 + i, n=250), batch=1 + 20 * i)
            except BaseException as exc:  # surfaced below
                errors.append(exc)

        threads = [threading.Thread(target=write, args=(i,)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        events, projection = logs[0]
        log = events.until(events.last_id())
        assert len(log) == 500
        assert projection.table() == fold(log) == logs[1][1].table()
    finally:
        dbs[1].close()


def test_writers_touching_keys_in_opposite_orders_do_not_deadlock(pg_db: Database) -> None:
    """Two transactions each pause two agents, in opposite orders, interleaved. Upserted at
    append time, each would hold its first fact row and wait for the other's: PostgreSQL
    aborts one with "deadlock detected". Queued and flushed in key order at commit, the
    second waits for the first and both land."""
    dbs = [pg_db, open_database(pg_db.url)]
    try:
        logs = [_projected(db) for db in dbs]
        both_appended_once = threading.Barrier(2, timeout=10)
        errors: list[BaseException] = []

        def write(i: int, agents: tuple[str, str]) -> None:
            events = logs[i][0]
            try:
                with events.db.transaction() as tx:
                    for n, agent in enumerate(agents):
                        payload = {"operator": f"op{i}"}
                        events.append_in(tx, EventType.AGENT_PAUSED, payload, agent=agent)
                        if n == 0:
                            both_appended_once.wait()
            except BaseException as exc:  # surfaced below
                errors.append(exc)

        threads = [
            threading.Thread(target=write, args=(0, ("criativo", "analista"))),
            threading.Thread(target=write, args=(1, ("analista", "criativo"))),
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=30)
        assert errors == []
        events, projection = logs[0]
        log = events.until(events.last_id())
        assert len(log) == 4
        assert projection.table() == fold(log)
    finally:
        dbs[1].close()
