"""Rebuild the roster projection from the event log (``cadencia projections rebuild``).

The log is folded in memory in batches, writing snapshots on the way; then one transaction
replaces ``roster_facts`` with the fold and applies the events committed meanwhile. It is
safe while ``serve`` processes keep appending (upserts are commutative by event id), and a
log whose oldest events were archived starts from the newest covering snapshot:
:func:`rebuild` gives the details.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from backend.agents.roster_facts import apply, facts_of
from backend.projections.codec import Tables, copy
from backend.projections.roster_table import NAME, RosterProjection

log = logging.getLogger(__name__)
Progress = Callable[[int, int], None]
"""``(events done, events in all)``."""


@dataclass(frozen=True)
class RebuildResult:
    """What a rebuild did."""

    events: int
    upto: int
    facts: int
    snapshots: int
    seconds: float
    started_from: int
    """The snapshot the fold started from (0: the beginning of the log)."""


def rebuild(
    projection: RosterProjection, *, batch: int = 5000, progress: Progress | None = None
) -> RebuildResult:
    """Rebuild ``projection``'s table and snapshots from its log.

    The log is read in batches and folded in memory (memory grows with the number of facts,
    not of events), writing a snapshot at every multiple of ``snapshot_every`` on the way; then
    one transaction replaces ``roster_facts`` with the fold and applies the events committed
    meanwhile. It is safe while ``serve`` processes keep appending: their upserts and the
    rebuild's are commutative by event id (see :meth:`RosterProjection.replace`).

    A log whose oldest events were archived (``cadencia events archive``) starts after id 1:
    the fold then starts from the newest snapshot that covers the gap, so archiving does not
    make a rebuild forget what the archived events said.
    """
    started = time.monotonic()
    events, snapshots = projection.events, projection.snapshots
    with projection.db.transaction(write=False) as tx:
        row = tx.one("events_first_id")
    first = int(row["first_id"]) if row else 0
    start = 0
    tables: Tables = {}
    if first > 1:
        start, tables = snapshots.latest(first - 1)
        tables = copy(tables)
    last = events.last_id()
    total = max(last - start, 0)
    boundary = (start // snapshots.every + 1) * snapshots.every
    done = written = 0
    lo = start
    while lo < last:
        hi = min(lo + batch, last)
        for event in events.until(hi, lo):
            while boundary < event.id:
                snapshots.put(boundary, tables)
                boundary += snapshots.every
                written += 1
            for fact in facts_of(event):
                apply(tables.setdefault(fact.scope, {}), fact)
            done += 1
        lo = hi
        if progress is not None:
            progress(lo - start, total)
    while boundary <= last:
        snapshots.put(boundary, tables)
        boundary += snapshots.every
        written += 1
    upto = projection.replace(tables, last)
    return RebuildResult(
        events=done,
        upto=upto,
        facts=sum(len(t) for t in tables.values()),
        snapshots=written,
        seconds=time.monotonic() - started,
        started_from=start,
    )


def ensure_current(
    projection: RosterProjection, progress: Progress | None = None, *, tail: int = 200
) -> bool:
    """Rebuild if the table does not reflect the log: no state row yet (a data dir from
    before the projection existed), or one of the newest ``tail`` events' facts is missing
    (a writer appended through an ``EventLog`` without the projector). Returns True when
    it rebuilt. Costs one bounded read of the log's tail when nothing is wrong."""
    with projection.db.transaction(write=False) as tx:
        state = tx.one("projection_state_get", {"name": NAME})
    if state is None:
        why = "the roster projection is missing"
    elif not _tail_projected(projection, tail):
        why = "the roster projection lags the event log (a writer without the projector?)"
    else:
        return False
    log.warning("%s: rebuilding it from the event log", why)
    rebuild(projection, progress=progress)
    return True


def _tail_projected(projection: RosterProjection, tail: int) -> bool:
    last = projection.events.last_id()
    stored = projection.table()
    for event in projection.events.until(last, max(last - tail, 0)):
        for fact in facts_of(event):
            row = stored.get(fact.scope, {}).get(fact.key)
            if row is None or (fact.mode == "last" and row.event_id < fact.event_id):
                return False
    return True
