"""The append-only event log every part of the backend writes to.

Ids strictly increase and a reader resuming after id N never misses one:
:meth:`EventLog.after` and :meth:`EventLog.last_id` stop at a *settled horizon*, an id
below which nothing can still commit (on PostgreSQL, ordered by a lock on the empty
``events_order`` table: docs/decisions/0003-settled-horizon-events-order-lock.md). Never
read :meth:`after` inside an open unit of work that appended: the barrier would wait for
it. ``append`` checks type and payload against the catalog before writing, commits, then
tells in-process listeners; on PostgreSQL the same transaction sends a ``NOTIFY`` so other
processes see the event.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from backend.clock import utcnow_iso
from backend.events.catalog import EventType, check_payload, event_type
from backend.exceptions import StorageError
from backend.store.db import Database, Row, Tx, dumps, loads

if TYPE_CHECKING:
    from backend.store.uow import Work


@dataclass(frozen=True)
class Event:
    """One entry of the log."""

    id: int
    type: str  # an EventType value; the log may hold names older code wrote
    ts: str
    project_id: str | None = None
    session_id: str | None = None
    agent: str | None = None
    payload: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict (the HTTP API's event shape)."""
        return asdict(self)

    @classmethod
    def from_row(cls, row: Row) -> Event:
        """Build from a database row."""
        payload = loads(row["payload"]) or {}
        return cls(
            id=int(row["id"]),
            type=row["type"],
            ts=str(row["ts"]),
            project_id=row.get("project_id"),
            session_id=row.get("session_id"),
            agent=row.get("agent"),
            payload=payload if isinstance(payload, dict) else {"value": payload},
        )


Listener = Callable[[Event], None]
Projector = Callable[[Tx, Event], None]
"""Updates a read model inside the append's own transaction (``EventLog(projectors=)``)."""


class EventLog:
    """Append and read events; run projectors in each append's transaction; notify
    listeners after each commit."""

    def __init__(self, db: Database, projectors: Iterable[Projector] = ()) -> None:
        self.db = db
        self._listeners: list[Listener] = []
        self._projectors: list[Projector] = list(projectors)
        # Every id <= this is committed or will never be (PostgreSQL readers, see above).
        self._settled = 0
        self._settle_lock = threading.Lock()

    def add_projector(self, projector: Projector) -> None:
        """Call ``projector(tx, event)`` in the transaction of every append made through this
        log, so a read model commits (or rolls back) with the event it reflects."""
        self._projectors.append(projector)

    def add_listener(self, listener: Listener) -> None:
        """Call ``listener(event)`` after every append made through this log."""
        self._listeners.append(listener)

    def remove_listener(self, listener: Listener) -> None:
        """Stop calling ``listener``."""
        if listener in self._listeners:
            self._listeners.remove(listener)

    def append(
        self,
        type: EventType,
        payload: dict[str, Any] | None = None,
        *,
        project_id: str | None = None,
        session_id: str | None = None,
        agent: str | None = None,
        tx: Work | None = None,
    ) -> Event:
        """Append one event in its own transaction, then broadcast it.

        With ``tx`` (a unit of work on this log's database) the event commits with the rest
        of that unit and is broadcast after its commit.
        """
        if tx is not None and (joined := tx.tx_for(self.db)) is not None:
            event = self.append_in(
                joined, type, payload, project_id=project_id, session_id=session_id, agent=agent
            )
            tx.after_commit(lambda: self.publish([event]))
            return event
        with self.db.transaction() as own:
            event = self.append_in(
                own, type, payload, project_id=project_id, session_id=session_id, agent=agent
            )
        self.publish([event])
        return event

    def append_in(
        self,
        tx: Tx,
        type: EventType,
        payload: dict[str, Any] | None = None,
        *,
        project_id: str | None = None,
        session_id: str | None = None,
        agent: str | None = None,
    ) -> Event:
        """Append inside the caller's transaction; the caller must :meth:`publish` after commit.

        Raises:
            ValidationError: ``type`` is not an :class:`EventType`, or the payload does not
                fit its model.
        """
        kind = event_type(type)
        body = payload or {}
        check_payload(kind, body)
        ts = utcnow_iso()
        row = tx.one(
            "event_append",
            {
                "type": kind.value,
                "ts": ts,
                "project_id": project_id,
                "session_id": session_id,
                "agent": agent,
                "payload": dumps(body),
            },
        )
        assert row is not None
        event = Event(int(row["id"]), kind.value, ts, project_id, session_id, agent, dict(body))
        for projector in self._projectors:
            projector(tx, event)
        return event

    def publish(self, events: Iterable[Event]) -> None:
        """Tell listeners about committed events (a failing listener never breaks the caller)."""
        for event in events:
            for listener in list(self._listeners):
                try:
                    listener(event)
                except Exception:
                    import logging

                    logging.getLogger(__name__).exception("event listener failed")

    def after(self, after_id: int = 0, limit: int = 500) -> list[Event]:
        """Events with id greater than ``after_id``, oldest first, in id order with no gap:
        no event with a lower id than the last one returned can appear later."""
        if self.db.dialect == "sqlite":
            with self.db.transaction(write=False) as tx:
                rows = tx.all("events_after", {"after": after_id, "limit": limit})
        else:
            upto = self._horizon()
            if upto <= after_id:
                return []
            with self.db.transaction(write=False) as tx:
                rows = tx.all(
                    "events_after_upto", {"after": after_id, "upto": upto, "limit": limit}
                )
        return [Event.from_row(r) for r in rows]

    def before(self, before_id: int, limit: int) -> list[Event]:
        """Events with id below ``before_id``, newest first (the tail of the log: the PK).

        On PostgreSQL only settled ids (at most the horizon): a caller that shows this tail
        and then follows the log with :meth:`after` from its newest id must not skip a
        lower id that was still in flight.
        """
        if self.db.dialect != "sqlite":
            before_id = min(before_id, self._horizon() + 1)
        with self.db.transaction(write=False) as tx:
            rows = tx.all("events_before", {"before": before_id, "limit": limit})
        return [Event.from_row(r) for r in rows]

    def until(self, until_id: int, after_id: int = 0) -> list[Event]:
        """Events in ``(after_id, until_id]``: the log as it stood at ``until_id``."""
        with self.db.transaction(write=False) as tx:
            rows = tx.all("events_between", {"after": after_id, "until": until_id})
        return [Event.from_row(r) for r in rows]

    def of_agent(self, session_id: str, agent: str, type: EventType) -> list[Event]:
        """One agent's events of one type in one session, oldest first (uses an index)."""
        with self.db.transaction(write=False) as tx:
            rows = tx.all(
                "events_of_agent", {"session_id": session_id, "agent": agent, "type": type}
            )
        return [Event.from_row(r) for r in rows]

    def of_agent_by_type(
        self, session_id: str, agent: str, types: Sequence[EventType]
    ) -> dict[EventType, list[Event]]:
        """:meth:`of_agent` for each of ``types``, all read in one transaction."""
        with self.db.transaction(write=False) as tx:
            found = {
                t: tx.all("events_of_agent", {"session_id": session_id, "agent": agent, "type": t})
                for t in types
            }
        return {t: [Event.from_row(r) for r in rows] for t, rows in found.items()}

    def latest_of_agent(
        self,
        agent: str,
        type: EventType,
        *,
        project_id: str | None = None,
        session_id: str | None = None,
        limit: int = 20,
        before: int | None = None,
    ) -> list[Event]:
        """One agent's newest events of one type (below id ``before``), newest first, at
        most ``limit`` (an index on (agent, type, id) keeps it bounded however long the log
        grows)."""
        params: dict[str, Any] = {"agent": agent, "type": type, "project_id": project_id}
        params |= {"session_id": session_id, "limit": limit}
        with self.db.transaction(write=False) as tx:
            if before is None:
                rows = tx.all("events_agent_latest", params)
            else:
                rows = tx.all("events_agent_before", {**params, "before": before})
        return [Event.from_row(r) for r in rows]

    def of_session(
        self, session_id: str, type: EventType, *, newest: int | None = None
    ) -> list[Event]:
        """Events of one type in one session (or conversation), oldest first; with
        ``newest``, only that many of the latest (a bounded read of a long conversation)."""
        params = {"session_id": session_id, "type": type}
        with self.db.transaction(write=False) as tx:
            if newest is None:
                rows = tx.all("events_of_session_type", params)
            else:
                more = {"before": 2**62, "limit": newest}
                rows = tx.all("events_of_session_type_newest", {**params, **more})[::-1]
        return [Event.from_row(r) for r in rows]

    def last_id(self) -> int:
        """The highest settled id in the log (0 when empty): a safe place to resume from."""
        if self.db.dialect != "sqlite":
            return self._horizon()
        with self.db.transaction(write=False) as tx:
            row = tx.one("events_last_id")
        return int(row["last_id"]) if row else 0

    def _horizon(self) -> int:
        """The settled horizon (PostgreSQL): cached, renewed through the barrier only when a
        higher id has committed since."""
        with self.db.transaction(write=False) as tx:
            row = tx.one("events_last_id")
        latest = int(row["last_id"]) if row else 0
        if latest <= self._settled:
            return self._settled
        try:
            with self.db.transaction() as tx:
                tx.one("events_barrier")
                row = tx.one("events_last_id")
        except StorageError as exc:
            if getattr(exc.__cause__, "sqlstate", None) != "55P03":  # lock_not_available
                raise
            logging.getLogger(__name__).warning(
                "event log: appenders still in flight after lock_timeout; serving id %d",
                self._settled,
            )
            return self._settled
        settled = int(row["last_id"]) if row else 0
        with self._settle_lock:
            self._settled = max(self._settled, settled)
            return self._settled
