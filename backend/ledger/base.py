"""The idempotency ledger's policy: loop ceiling, claims, completion, expiry, reconcile.

All rules live here; a backend (:mod:`backend.ledger.sql`, :mod:`backend.ledger.dynamodb`)
implements only the small private storage methods at the bottom, each of which must be
atomic on its own. A claim whose outcome is unknown is never retried blindly: it waits for
:meth:`Ledger.reconcile` or an operator. :class:`Ledger` gives the record states and how a
decision commits with the caller's unit of work.
"""

from __future__ import annotations

import hashlib
import json
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from backend.clock import utcnow_iso
from backend.exceptions import LedgerError

if TYPE_CHECKING:
    from backend.store.uow import Work

RecordStatus = Literal["tentando", "executado", "falhou", "resultado_incerto"]
ClaimOutcome = Literal["claimed", "duplicate", "conflict", "in_progress", "uncertain", "none"]


def payload_hash(payload: dict[str, Any]) -> str:
    """Stable hash of a tool payload (canonical JSON, sorted keys)."""
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


def counter_key(conversa_id: str, entidade_id: str, ferramenta: str) -> str:
    """The loop-ceiling counter of one (conversa, pedido|cliente, ferramenta)."""
    return f"teto#{conversa_id}#{entidade_id}#{ferramenta}"


@dataclass(frozen=True)
class ClaimRequest:
    """What an irreversible or deduplicated call wants to claim before it runs."""

    chave: str
    ferramenta: str
    conversa_id: str
    entidade_id: str
    payload_hash: str
    valor: str | None = None
    gateway: str | None = None
    """The payment gateway the call will ask (its identity), for a tool that debits one:
    reconcile asks that gateway and no other."""


@dataclass(frozen=True)
class LedgerRecord:
    """One claim as stored."""

    chave: str
    ferramenta: str
    conversa_id: str
    entidade_id: str
    status: RecordStatus
    payload_hash: str
    valor: str | None
    resultado: dict[str, Any] | None
    lease_until: float
    created_at: str
    updated_at: str
    gateway: str | None = None
    """The gateway the claim went to (None: a claim that asks none, or one older than
    this column)."""

    @classmethod
    def from_mapping(cls, row: dict[str, Any]) -> LedgerRecord:
        """Build from a storage row (``resultado`` may be a JSON string)."""
        resultado = row.get("resultado")
        if isinstance(resultado, str):
            resultado = json.loads(resultado)
        return cls(
            chave=row["chave"],
            ferramenta=row["ferramenta"],
            conversa_id=row["conversa_id"],
            entidade_id=row["entidade_id"],
            status=row["status"],
            payload_hash=row["payload_hash"],
            valor=row.get("valor"),
            resultado=resultado,
            lease_until=float(row["lease_until"]),
            created_at=str(row["created_at"]),
            updated_at=str(row["updated_at"]),
            gateway=row.get("gateway"),
        )


@dataclass(frozen=True)
class Reservation:
    """The ledger's answer to one attempt."""

    tentativa: int
    """The attempt's number within its (conversa, entidade, ferramenta), 1-based."""
    bloqueado_por_teto: bool
    claim: ClaimOutcome
    record: LedgerRecord | None = None
    """The existing record when the claim was not taken."""


@dataclass(frozen=True)
class StoredReservation:
    """What a backend's :meth:`Ledger._reserve` returns."""

    attempts: int
    blocked: int
    inserted: bool
    existing: dict[str, Any] | None


_now_iso = utcnow_iso
"""The stamp of every ledger write (the product's one format), named so a test's fixed
clock can set the ledger's alone. Records written in an older format (``+00:00``,
microseconds) still sort in order as text: the two agree up to the millisecond."""


class Ledger(ABC):
    """Policy over a storage backend. Thread- and process-safe as long as storage is.

    Record states: ``tentando`` → ``executado`` | ``falhou`` | ``resultado_incerto``. A
    ``tentando`` record whose lease ran out (the process died between claim and completion)
    is never retried blindly: it turns into ``resultado_incerto`` and waits for
    :meth:`reconcile` (which asks the gateway by key) or an operator. A ``falhou`` record is
    released: the next claim under its key takes it over, whatever its payload (so a
    corrected amount can go through).

    The per-call methods (:meth:`reserve`, :meth:`complete`, :meth:`fail`,
    :meth:`mark_uncertain`) take an optional unit of work ``tx``
    (:class:`backend.store.uow.Work`): a backend storing in that unit's database writes inside
    it, so the decision commits together with the takeover and the event that record it.
    """

    def __init__(self, *, teto: int = 4, lease_seconds: float = 30.0) -> None:
        if teto < 1:
            raise LedgerError("the loop ceiling must be at least 1", teto=teto)
        self.teto = teto
        self.lease_seconds = lease_seconds

    # -- policy ---------------------------------------------------------------------------

    def reserve(
        self,
        counter: str,
        claim: ClaimRequest | None,
        *,
        count: bool = True,
        tx: Work | None = None,
    ) -> Reservation:
        """Count one attempt against the ceiling and, if under it, try to claim.

        The ceiling is one atomic bounded increment; on SQL backends the claim happens in
        the same transaction. An attempt past the ceiling never claims anything.
        ``count=False`` is for an operator acting after a takeover: the ceiling stopped
        the *agent*, not the human, but idempotency still applies.
        """
        now = time.time()
        row = None
        if claim is not None:
            row = {
                "chave": claim.chave,
                "ferramenta": claim.ferramenta,
                "conversa_id": claim.conversa_id,
                "entidade_id": claim.entidade_id,
                "payload_hash": claim.payload_hash,
                "valor": claim.valor,
                "gateway": claim.gateway,
                "lease_until": now + self.lease_seconds,
            }
        stored = self._reserve(counter if count else None, self.teto, row, _now_iso(), tx)
        tentativa = stored.attempts + stored.blocked
        if not count:
            got = self._counter(counter, tx)
            tentativa = 0 if got is None else got[0] + got[1]
        if stored.blocked > 0:
            return Reservation(tentativa, True, "none")
        if claim is None:
            return Reservation(tentativa, False, "none")
        if stored.inserted:
            return Reservation(tentativa, False, "claimed")
        assert row is not None
        return self._interpret_existing(tentativa, claim, row, stored.existing, now, tx)

    def _interpret_existing(
        self,
        tentativa: int,
        claim: ClaimRequest,
        row: dict[str, Any],
        existing: dict[str, Any] | None,
        now: float,
        tx: Work | None,
    ) -> Reservation:
        if existing is None:  # deleted between insert and read: take it again next attempt
            existing = self._get(claim.chave, tx)
            if existing is None:
                raise LedgerError("claim vanished while being read", chave=claim.chave)
        record = LedgerRecord.from_mapping(existing)
        if record.status == "falhou":
            # Released: nothing happened under this key, so any payload (a corrected amount
            # included) may take it; a conflict only exists with something that did or may
            # have happened.
            if self._retake(claim.chave, row, _now_iso(), tx):
                return Reservation(tentativa, False, "claimed")
            fresh = self._get(claim.chave, tx)
            record = LedgerRecord.from_mapping(fresh) if fresh else record
        if record.payload_hash != claim.payload_hash:
            return Reservation(tentativa, False, "conflict", record)
        if record.status == "executado":
            return Reservation(tentativa, False, "duplicate", record)
        if record.status == "tentando" and record.lease_until < now:
            self._finish(
                record.chave, "tentando", "resultado_incerto", record.resultado, _now_iso(), tx
            )
            return Reservation(tentativa, False, "uncertain", record)
        if record.status == "resultado_incerto":
            return Reservation(tentativa, False, "uncertain", record)
        return Reservation(tentativa, False, "in_progress", record)

    def complete(self, chave: str, resultado: dict[str, Any], *, tx: Work | None = None) -> None:
        """Mark a claim ``executado`` (the irreversible action happened)."""
        if not self._finish(chave, "tentando", "executado", resultado, _now_iso(), tx):
            raise LedgerError("cannot complete a claim that is not in 'tentando'", chave=chave)

    def fail(self, chave: str, erro: dict[str, Any], *, tx: Work | None = None) -> None:
        """Mark a claim ``falhou``: the action certainly did not happen; a retry may retake it."""
        if not self._finish(chave, "tentando", "falhou", erro, _now_iso(), tx):
            raise LedgerError("cannot fail a claim that is not in 'tentando'", chave=chave)

    def mark_uncertain(
        self, chave: str, detalhe: dict[str, Any], *, tx: Work | None = None
    ) -> None:
        """Mark a claim ``resultado_incerto``: the gateway may or may not have acted."""
        self._finish(chave, "tentando", "resultado_incerto", detalhe, _now_iso(), tx)

    def expire_stale(self) -> list[str]:
        """Turn every ``tentando`` claim past its lease into ``resultado_incerto``."""
        return self._expire(time.time(), _now_iso())

    def reconcile(self, chave: str, *, happened: bool, detalhe: dict[str, Any]) -> RecordStatus:
        """Settle an uncertain claim with what the gateway says happened under its key.

        ``happened=True`` completes it as ``executado``; ``False`` releases it as ``falhou``
        so a later attempt may retake it. Returns the claim's status after the call.
        """
        return self.settle(chave, happened=happened, detalhe=detalhe)[0]

    def settle(
        self, chave: str, *, happened: bool, detalhe: dict[str, Any]
    ) -> tuple[RecordStatus, bool]:
        """:meth:`reconcile`, and whether this call settled it (False: it was already
        settled, e.g. by a concurrent reconcile, and this call changed nothing)."""
        record = self.get(chave)
        if record is None:
            raise LedgerError("no ledger record with this key", chave=chave)
        if record.status == "tentando" and record.lease_until >= time.time():
            raise LedgerError("claim still in progress; reconcile after its lease", chave=chave)
        if record.status not in ("tentando", "resultado_incerto"):
            return record.status, False
        status: RecordStatus = "executado" if happened else "falhou"
        if not self._finish(chave, record.status, status, detalhe, _now_iso(), None):
            raise LedgerError("claim changed while reconciling; try again", chave=chave)
        return status, True

    def get(self, chave: str) -> LedgerRecord | None:
        """The record under ``chave``, if any."""
        row = self._get(chave, None)
        return LedgerRecord.from_mapping(row) if row else None

    def uncertain(self) -> list[LedgerRecord]:
        """Every record waiting for reconciliation."""
        return [LedgerRecord.from_mapping(r) for r in self._by_status("resultado_incerto")]

    def in_status(self, status: RecordStatus) -> list[LedgerRecord]:
        """Every record in ``status``."""
        return [LedgerRecord.from_mapping(r) for r in self._by_status(status)]

    def counts(self) -> dict[str, int]:
        """How many claims are in each state (the ``cadencia_ledger_claims`` gauge)."""
        states: tuple[RecordStatus, ...] = ("tentando", "executado", "falhou", "resultado_incerto")
        return {s: len(self._by_status(s)) for s in states}

    def attempts(self, counter: str) -> int:
        """How many attempts were counted for ``counter`` (blocked ones included)."""
        got = self._counter(counter, None)
        return 0 if got is None else got[0] + got[1]

    # -- storage, implemented by each backend --------------------------------------------
    # ``tx`` is the caller's unit of work (or None): a backend whose store is that unit's
    # database writes inside it; one that stores elsewhere commits each write on its own.

    @abstractmethod
    def _reserve(
        self,
        counter: str | None,
        teto: int,
        claim_row: dict[str, Any] | None,
        now: str,
        tx: Work | None,
    ) -> StoredReservation:
        """Atomically: bump ``counter`` if below ``teto`` (else bump its blocked count);
        if it was bumped and ``claim_row`` is given, insert it unless its key exists, and
        return the existing row when it does. ``counter=None``: claim without counting
        (return attempts=0, blocked=0)."""

    @abstractmethod
    def _get(self, chave: str, tx: Work | None) -> dict[str, Any] | None:
        """Read one record."""

    @abstractmethod
    def _retake(self, chave: str, claim_row: dict[str, Any], now: str, tx: Work | None) -> bool:
        """Conditionally turn a ``falhou`` record back into ``tentando`` with the new claim
        (its conversation, payload, amount, gateway and lease)."""

    @abstractmethod
    def _finish(
        self,
        chave: str,
        expected: RecordStatus,
        status: RecordStatus,
        resultado: dict[str, Any] | None,
        now: str,
        tx: Work | None,
    ) -> bool:
        """Conditionally move a record from ``expected`` to ``status``; False if it was not."""

    @abstractmethod
    def _expire(self, epoch: float, now: str) -> list[str]:
        """Move every ``tentando`` record with ``lease_until < epoch`` to ``resultado_incerto``."""

    @abstractmethod
    def _by_status(self, status: RecordStatus) -> list[dict[str, Any]]:
        """Every record in ``status``."""

    @abstractmethod
    def _counter(self, counter: str, tx: Work | None) -> tuple[int, int] | None:
        """``(attempts, blocked)`` of a counter."""
