"""Ledger storage on SQLite or PostgreSQL: the ceiling bump and the claim share one transaction."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from typing import Any

from backend.ledger.base import Ledger, RecordStatus, StoredReservation
from backend.store.db import Database, Tx, dumps


class SqlLedger(Ledger):
    """Storage for :class:`~backend.ledger.base.Ledger` on a :class:`Database`."""

    def __init__(self, db: Database, *, teto: int = 4, lease_seconds: float = 30.0) -> None:
        super().__init__(teto=teto, lease_seconds=lease_seconds)
        self.db = db
        self._bound = threading.local()

    @contextmanager
    def using(self, tx: Tx) -> Iterator[None]:
        """Run this thread's ledger operations inside the caller's transaction ``tx``.

        The orchestrator uses it so the ceiling bump, the claim and the attempt's event
        commit together: one commit per blocked attempt, and never one without the other.
        """
        previous = getattr(self._bound, "tx", None)
        self._bound.tx = tx
        try:
            yield
        finally:
            self._bound.tx = previous

    def _tx(self, *, write: bool = True) -> Any:
        bound = getattr(self._bound, "tx", None)
        return nullcontext(bound) if bound is not None else self.db.transaction(write=write)

    def _reserve(
        self, counter: str | None, teto: int, claim_row: dict[str, Any] | None, now: str
    ) -> StoredReservation:
        with self._tx() as tx:
            attempts = blocked = 0
            if counter is not None:
                bumped = tx.one("ledger_counter_bump", {"chave": counter, "teto": teto, "now": now})
                assert bumped is not None
                attempts, blocked = int(bumped["attempts"]), int(bumped["blocked"])
            if blocked or claim_row is None:
                return StoredReservation(attempts, blocked, False, None)
            # Read first: on the hot path (a repeat) the claim exists and one statement decides.
            existing = tx.one("ledger_record_get", {"chave": claim_row["chave"]})
            if existing is not None:
                return StoredReservation(attempts, blocked, False, existing)
            inserted = tx.one("ledger_record_insert", {**claim_row, "now": now})
            if inserted is not None:
                return StoredReservation(attempts, blocked, True, None)
            # Lost a race with a concurrent claimer (PostgreSQL): read what it wrote.
            existing = tx.one("ledger_record_get", {"chave": claim_row["chave"]})
            return StoredReservation(attempts, blocked, False, existing)

    def _get(self, chave: str) -> dict[str, Any] | None:
        with self._tx(write=False) as tx:
            return tx.one("ledger_record_get", {"chave": chave})

    def _retake(self, chave: str, claim_row: dict[str, Any], now: str) -> bool:
        with self._tx() as tx:
            return tx.one("ledger_record_retake", {**claim_row, "now": now}) is not None

    def _finish(
        self,
        chave: str,
        expected: RecordStatus,
        status: RecordStatus,
        resultado: dict[str, Any] | None,
        now: str,
    ) -> bool:
        params = {
            "chave": chave,
            "expected": expected,
            "status": status,
            "resultado": dumps(resultado) if resultado is not None else None,
            "now": now,
        }
        with self._tx() as tx:
            return tx.one("ledger_record_finish", params) is not None

    def _expire(self, epoch: float, now: str) -> list[str]:
        with self._tx() as tx:
            return [
                r["chave"] for r in tx.all("ledger_records_expire", {"epoch": epoch, "now": now})
            ]

    def _by_status(self, status: RecordStatus) -> list[dict[str, Any]]:
        with self._tx(write=False) as tx:
            return tx.all("ledger_records_by_status", {"status": status})

    def _counter(self, counter: str) -> tuple[int, int] | None:
        with self._tx(write=False) as tx:
            row = tx.one("ledger_counter_get", {"chave": counter})
        return (int(row["attempts"]), int(row["blocked"])) if row else None
