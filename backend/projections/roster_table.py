"""The roster projection: ``roster_facts`` kept current inside every append's transaction.

:meth:`RosterProjection.apply` is an :class:`~backend.events.EventLog` projector: it
upserts each appended event's facts (:func:`~backend.agents.roster_facts.facts_of`) in the
append's own transaction, commutatively by event id, so every writer of every process, a
replay and a rebuild land on the same rows. Flags are ``ON CONFLICT DO NOTHING`` and
skipped once read as committed. :meth:`RosterProjection.facts` is the live read, never the
log. Why: docs/decisions/0004-roster-as-a-projection.md.
"""

from __future__ import annotations

from backend.agents.roster_facts import GLOBAL, Fact, Row, Table, facts_of, merge
from backend.events import Event, EventLog, utcnow_iso
from backend.projections.codec import Tables
from backend.projections.snapshots import Snapshots
from backend.store.db import Database, Tx, dumps, loads

NAME = "roster"
_PENDING = "roster.pending"
"""The :attr:`Tx.state` key of the facts queued in a transaction."""


class RosterProjection:
    """The roster's tables on one database (see the module docstring)."""

    def __init__(self, db: Database, events: EventLog, *, snapshot_every: int = 1000) -> None:
        self.db = db
        self.events = events
        self.snapshots: Snapshots = Snapshots(db, events, every=snapshot_every)
        self._flags: set[tuple[str, str]] = set()
        """(scope, key) of the flags this process read as committed."""

    def apply(self, tx: Tx, event: Event) -> None:
        """Queue ``event``'s facts for ``tx`` (the append's transaction); they are upserted
        right before its COMMIT, sorted by key (see :meth:`_flush`)."""
        facts = [
            f for f in facts_of(event) if f.mode != "first" or (f.scope, f.key) not in self._flags
        ]  # a flag read as committed: its statement would change nothing
        if not facts:
            return
        pending: list[Fact] | None = tx.state.get(_PENDING)
        if pending is None:
            pending = tx.state[_PENDING] = []
            tx.before_commit(self._flush)
        pending.extend(facts)

    def _flush(self, tx: Tx) -> None:
        """Upsert the facts ``tx`` queued, in (scope, key) order, as its last statements.

        Every upsert locks its row (a flag's ``DO NOTHING`` still waits on a concurrent
        uncommitted insert of the same key) until COMMIT. Taken in append order, two
        PostgreSQL transactions that touch keys A and B in opposite orders deadlock; taken
        in one global order, at the end of every transaction (so a transaction holding a
        fact row waits only for fact rows later in that order), they cannot.
        """
        facts: list[Fact] = tx.state.pop(_PENDING, [])
        facts.sort(key=lambda f: (f.scope, f.key))  # stable: a key's facts keep their order
        for fact in facts:
            tx.execute(
                "roster_fact_first" if fact.mode == "first" else "roster_fact_last",
                {
                    "scope": fact.scope,
                    "key": fact.key,
                    "value": dumps(fact.value),
                    "event_id": fact.event_id,
                },
            )

    def facts(self, project_id: str | None) -> Table:
        """The merged facts of ``project_id`` and of the project-less events (``None``:
        every scope, as a roster with no project filter always saw every event)."""
        with self.db.transaction(write=False) as tx:
            if project_id is None:
                rows = tx.all("roster_facts_all")
            else:
                scopes = {"global": GLOBAL, "scope": project_id}
                rows = tx.all("roster_facts_of_scopes", scopes)
                rows += tx.all("roster_gates_waiting", scopes)
                rows += tx.all("roster_gate_newest_infra", scopes)
        tables = _tables(rows)
        for scope, table in tables.items():
            for key in ("execution", "infra", "gate_opened", "conversation"):
                row = table.get(key)
                if row is not None:
                    self._flags.add((scope, key))
        return merge(tables.values())

    def facts_at(self, at: int, project_id: str | None) -> Table:
        """The merged facts as they stood at event ``at`` (a snapshot + a bounded replay)."""
        tables = self.snapshots.tables_at(at)
        if project_id is not None:
            tables = {s: t for s, t in tables.items() if s in (GLOBAL, project_id)}
        return merge(tables.values())

    def replace(self, tables: Tables, upto: int) -> int:
        """Replace the whole table with ``tables`` (a fold of the log up to ``upto``), then
        apply the events committed since, all in one transaction; returns the new ``upto``.

        On PostgreSQL a concurrent append either committed before the catch-up read (and is
        applied here) or upserts its own facts after this commit; the upserts are
        commutative, so both orders end on the same rows.
        """
        with self.db.transaction() as tx:
            if tx.dialect == "postgres":
                # Writers wait for the swap instead of deadlocking with it: the clear locks
                # every old row, and a put would wait on a writer's uncommitted new one.
                tx.execute_sql("LOCK TABLE roster_facts IN EXCLUSIVE MODE")
            tx.execute("roster_facts_clear")
            for scope, table in tables.items():
                for key, row in table.items():
                    tx.execute(
                        "roster_fact_put",
                        {
                            "scope": scope,
                            "key": key,
                            "value": dumps(row.value),
                            "event_id": row.event_id,
                            "first_id": row.first_id,
                        },
                    )
            while True:
                rows = tx.all("events_after", {"after": upto, "limit": 1000})
                for event in (Event.from_row(r) for r in rows):
                    self.apply(tx, event)
                    upto = max(upto, event.id)
                if len(rows) < 1000:
                    break
            tx.execute(
                "projection_state_put", {"name": NAME, "upto": upto, "rebuilt_at": utcnow_iso()}
            )
        self._flags.clear()
        return upto

    def table(self) -> Tables:
        """Every scope's facts as stored (tests compare it with a fold and a rebuild)."""
        with self.db.transaction(write=False) as tx:
            return _tables(tx.all("roster_facts_all"))


def _tables(rows: list[dict[str, object]]) -> Tables:
    tables: Tables = {}
    for r in rows:
        table = tables.setdefault(str(r["scope"]), {})
        table[str(r["key"])] = Row(loads(r["value"]), _int(r["event_id"]), _int(r["first_id"]))
    return tables


def _int(value: object) -> int:
    return int(value)  # type: ignore[call-overload]
