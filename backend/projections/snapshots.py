"""Time travel for the roster: periodic snapshots of the fact tables plus a bounded replay.

A snapshot holds every scope's facts at event ``upto``, a multiple of ``every``
(``CADENCIA_ROSTER_SNAPSHOT_EVERY``, default 1000); "the roster at N" is the newest
snapshot at or before N with at most ``every`` events folded onto it. Each snapshot folds
the previous one over the next block, only once that block is complete (the log's last id
reached its end); the fold is deterministic, so two processes write the same content.
``cadencia projections rebuild`` writes them all; a backend builds the missing ones in the
background (:meth:`Snapshots.keep_current`).
"""

from __future__ import annotations

import asyncio
import logging

from backend.agents.roster_facts import fold
from backend.events import EventLog, utcnow_iso
from backend.projections.codec import Tables, copy, decode, encode
from backend.store.db import Database

log = logging.getLogger(__name__)


class Snapshots:
    """The roster's snapshots on one database."""

    def __init__(self, db: Database, events: EventLog, *, every: int = 1000) -> None:
        if every < 1:
            raise ValueError("snapshot_every must be at least 1")
        self.db = db
        self.events = events
        self.every = every

    def latest(self, at: int) -> tuple[int, Tables]:
        """The newest snapshot at or before event ``at`` (``(0, {})`` when none)."""
        with self.db.transaction(write=False) as tx:
            row = tx.one("roster_snapshot_at_or_before", {"upto": at})
        if row is None:
            return 0, {}
        return int(row["upto"]), decode(row["facts"])

    def put(self, upto: int, tables: Tables) -> None:
        """Store the snapshot at ``upto``."""
        with self.db.transaction() as tx:
            tx.execute(
                "roster_snapshot_put",
                {"upto": upto, "facts": encode(tables), "created_at": utcnow_iso()},
            )

    def catch_up(self, target: int | None = None) -> tuple[int, Tables]:
        """Build every missing snapshot up to ``target`` (default: the log's last id) over
        complete blocks only; return the newest snapshot at or before ``target``."""
        last = self.events.last_id()
        target = last if target is None else min(target, last)
        upto, tables = self.latest(target)
        while upto + self.every <= target:
            upto, tables = self._build(upto, tables)
        return upto, tables

    def tables_at(self, at: int) -> Tables:
        """Every scope's facts as they stood at event ``at``."""
        upto, tables = self.catch_up(at)
        if at > upto:
            tables = fold(self.events.until(at, upto), copy(tables))
        return tables

    def build_next(self, since: tuple[int, Tables] | None = None) -> tuple[int, Tables] | None:
        """Build the one snapshot after ``since`` (default: the newest stored one) when its
        block is complete; return it, or None when no complete block lacks one."""
        last = self.events.last_id()
        upto, tables = since if since is not None else self.latest(last)
        if upto + self.every > last:
            return None
        return self._build(upto, tables)

    def _build(self, upto: int, tables: Tables) -> tuple[int, Tables]:
        """Fold the block after the snapshot at ``upto`` onto it and store the result."""
        nxt = upto + self.every
        tables = fold(self.events.until(nxt, upto), copy(tables))
        self.put(nxt, tables)
        return nxt, tables

    async def keep_current(self) -> None:
        """Every 30 s: build the missing snapshots, so ``?at=N`` never waits for them.

        A log with many blocks missing (restored, or older than the projection) is caught up
        one block per step, carrying the tables from step to step, with a pause between
        steps, so the fold never holds the GIL long enough to delay the routes
        (docs/decisions/0004-roster-as-a-projection.md).
        """
        carried: tuple[int, Tables] | None = None
        while True:
            try:
                carried = await asyncio.to_thread(self.build_next, carried)
            except Exception as exc:  # the loop must outlive one bad round
                carried = None
                log.warning("roster snapshot round failed: %r", exc)
            await asyncio.sleep(30.0 if carried is None else 0.05)
