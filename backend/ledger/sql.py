"""Ledger storage on SQLite or PostgreSQL: the ceiling bump and the claim share one transaction.

Given a unit of work on the same database (``tx=``), every storage step runs inside it, so
the orchestrator commits the decision, the takeover and the attempt's event as one.
"""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from typing import Any

from backend.ledger.base import Ledger, RecordStatus, StoredReservation
from backend.store.db import Database, Tx, dumps, loads
from backend.store.uow import Work


class SqlLedger(Ledger):
    """Storage for :class:`~backend.ledger.base.Ledger` on a :class:`Database`."""

    def __init__(self, db: Database, *, teto: int = 4, lease_seconds: float = 30.0) -> None:
        super().__init__(teto=teto, lease_seconds=lease_seconds)
        self.db = db

    def _tx(self, work: Work | None, *, write: bool = True) -> AbstractContextManager[Tx]:
        """The unit of work's transaction when it spans this database, else a fresh one."""
        joined = work.tx_for(self.db) if work is not None else None
        return nullcontext(joined) if joined is not None else self.db.transaction(write=write)

    def _reserve(
        self,
        counter: str | None,
        teto: int,
        claim_row: dict[str, Any] | None,
        now: str,
        tx: Work | None,
    ) -> StoredReservation:
        with self._tx(tx) as sql:
            attempts = blocked = 0
            existing = None
            if counter is not None:
                params = {"chave": counter, "teto": teto, "now": now}
                if claim_row is None:
                    bumped = sql.one("ledger_counter_bump", params)
                else:
                    # The hot path (a repeat): one statement bumps and reads the claim.
                    params["claim"] = claim_row["chave"]
                    bumped = sql.one("ledger_counter_bump_get", params)
                assert bumped is not None
                attempts, blocked = int(bumped["attempts"]), int(bumped["blocked"])
                existing = _existing(bumped) if claim_row is not None else None
            if blocked or claim_row is None:
                return StoredReservation(attempts, blocked, False, None)
            if counter is None:
                existing = sql.one("ledger_record_get", {"chave": claim_row["chave"]})
            if existing is not None:
                return StoredReservation(attempts, blocked, False, existing)
            inserted = sql.one("ledger_record_insert", {**claim_row, "now": now})
            if inserted is not None:
                return StoredReservation(attempts, blocked, True, None)
            # Lost a race with a concurrent claimer (PostgreSQL): read what it wrote.
            existing = sql.one("ledger_record_get", {"chave": claim_row["chave"]})
            return StoredReservation(attempts, blocked, False, existing)

    def _get(self, chave: str, tx: Work | None) -> dict[str, Any] | None:
        with self._tx(tx, write=False) as sql:
            return sql.one("ledger_record_get", {"chave": chave})

    def _retake(self, chave: str, claim_row: dict[str, Any], now: str, tx: Work | None) -> bool:
        with self._tx(tx) as sql:
            return sql.one("ledger_record_retake", {**claim_row, "now": now}) is not None

    def _finish(
        self,
        chave: str,
        expected: RecordStatus,
        status: RecordStatus,
        resultado: dict[str, Any] | None,
        now: str,
        tx: Work | None,
    ) -> bool:
        params = {
            "chave": chave,
            "expected": expected,
            "status": status,
            "resultado": dumps(resultado) if resultado is not None else None,
            "now": now,
        }
        with self._tx(tx) as sql:
            return sql.one("ledger_record_finish", params) is not None

    def _expire(self, epoch: float, now: str) -> list[str]:
        with self.db.transaction() as sql:
            return [
                r["chave"] for r in sql.all("ledger_records_expire", {"epoch": epoch, "now": now})
            ]

    def counts(self) -> dict[str, int]:
        """Claims per state, counted by the database (one grouped read)."""
        with self.db.transaction(write=False) as sql:
            return {str(r["status"]): int(r["n"]) for r in sql.all("ledger_records_counts")}

    def _by_status(self, status: RecordStatus) -> list[dict[str, Any]]:
        with self.db.transaction(write=False) as sql:
            return sql.all("ledger_records_by_status", {"status": status})

    def _counter(self, counter: str, tx: Work | None) -> tuple[int, int] | None:
        with self._tx(tx, write=False) as sql:
            row = sql.one("ledger_counter_get", {"chave": counter})
        return (int(row["attempts"]), int(row["blocked"])) if row else None


def _existing(bumped: dict[str, Any]) -> dict[str, Any] | None:
    """The claim ``ledger_counter_bump_get`` read with the bump (None when there is none):
    a JSON object on SQLite, the record's own columns (NULL when absent) on PostgreSQL."""
    if "existing" in bumped:
        return loads(bumped["existing"]) if bumped["existing"] is not None else None
    if bumped.get("status") is None:
        return None
    return {k: v for k, v in bumped.items() if k not in ("attempts", "blocked")}
