"""An explicit unit of work: several components' writes in one database transaction.

The guard's "ledger decision + human takeover + the attempt's event" must commit together
or not at all. Rather than each component discovering a transaction someone else opened,
the caller opens one unit of work and passes it (``tx=``) to every component taking part;
:class:`UnitOfWork` shows how, and when the transaction really starts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager

from backend.store.db import Database, Tx


class Work:
    """One unit of work in progress on one database (what ``tx=`` parameters receive)."""

    def __init__(self, database: Database, stack: ExitStack) -> None:
        self.database = database
        self._stack = stack
        self._tx: Tx | None = None
        self._after_commit: list[Callable[[], None]] = []

    def tx_for(self, database: Database) -> Tx | None:
        """This unit's transaction if ``database`` is the one it spans, else None.

        A component passes its own database: one that stores somewhere else (another SQL
        database) gets None and commits on its own, because one transaction cannot span two
        connections.
        """
        if database is not self.database:
            return None
        if self._tx is None:
            self._tx = self._stack.enter_context(database.transaction())
        return self._tx

    def after_commit(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` once the unit has committed (never after a rollback)."""
        self._after_commit.append(callback)


class UnitOfWork:
    """Opens units of work on ``database``.

    Usage::

        with uow.begin() as tx:
            reservation = ledger.reserve(counter, claim, tx=tx)
            interruptions.open(..., tx=tx)
            events.append(TENTATIVA, record, tx=tx)

    The transaction starts lazily, on the first component that writes to the unit's database,
    so a participant that stores elsewhere (the DynamoDB ledger) never holds a SQL write lock
    across its own network round trips. Events appended inside reach listeners only after the
    commit (:meth:`Work.after_commit`); a rollback publishes nothing. A unit belongs to the
    thread that began it (SQLite's connections are per thread); :class:`UnitOfWork` itself is
    shared freely.
    """

    def __init__(self, database: Database) -> None:
        self.database = database

    @contextmanager
    def begin(self) -> Iterator[Work]:
        """One unit of work: commits when the block ends, rolls back if it raises."""
        with ExitStack() as stack:
            work = Work(self.database, stack)
            yield work
        for callback in work._after_commit:
            callback()
