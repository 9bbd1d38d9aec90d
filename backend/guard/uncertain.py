"""Uncertain outcomes go to a human: list them, ask the gateway by key, or settle by hand.

A claim is uncertain when the ledger cannot know whether the irreversible action happened:
``resultado_incerto`` (a gateway timeout, a completion that failed after the gateway
answered) or ``tentando`` past its lease (the process died between claim and completion).
Each one is an Approvals item until it is settled; ``cadencia serve`` asks the gateway
about all of them every ``CADENCIA_RECONCILE_INTERVAL_S`` (:meth:`reconcile_all`), and an
operator may ask again or settle one by hand. Every settlement is a ``ledger.reconciliado``
event.
"""

from __future__ import annotations

import base64
import binascii
import logging
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from backend.events import EventLog, EventType
from backend.exceptions import CadenciaError, NotFoundError
from backend.guard.toolbox import Toolbox
from backend.ledger.base import Ledger, LedgerRecord, RecordStatus
from backend.tools.registry import find_tool

log = logging.getLogger(__name__)

HandOutcome = Literal["executado", "falhou"]


def item_id(chave: str) -> str:
    """A URL-safe id for a ledger key (keys hold ``#``)."""
    return base64.urlsafe_b64encode(chave.encode()).decode().rstrip("=")


def chave_of(ident: str) -> str:
    """The ledger key behind :func:`item_id`; :class:`NotFoundError` when it is not one."""
    try:
        return base64.urlsafe_b64decode(ident + "=" * (-len(ident) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError) as exc:
        raise NotFoundError(f"no uncertain outcome with id {ident}", id=ident) from exc


@dataclass(frozen=True)
class Settled:
    """What one reconcile or settlement did."""

    record: LedgerRecord
    status: RecordStatus
    settled: bool
    message: str


def _age_s(record: LedgerRecord) -> float:
    try:
        since = datetime.fromisoformat(record.updated_at)
    except ValueError:
        return 0.0
    if since.tzinfo is None:
        since = since.replace(tzinfo=UTC)
    return max(0.0, (datetime.now(UTC) - since).total_seconds())


class UncertainOutcomes:
    """The ledger's uncertain claims, for operators and the reconcile loop."""

    def __init__(self, ledger: Ledger, toolbox: Toolbox, events: EventLog) -> None:
        self.ledger = ledger
        self.toolbox = toolbox
        self.events = events

    def items(self) -> list[tuple[LedgerRecord, float]]:
        """Every uncertain claim (stale ``tentando`` included) with its age, oldest first."""
        now = time.time()
        records = self.ledger.uncertain() + [
            r for r in self.ledger.in_status("tentando") if r.lease_until < now
        ]
        records.sort(key=lambda r: r.updated_at)
        return [(r, _age_s(r)) for r in records]

    def _record(self, chave: str) -> LedgerRecord:
        record = self.ledger.get(chave)
        if record is None:
            raise NotFoundError(f"no ledger record with key {chave}", chave=chave)
        return record

    def reconcile_one(self, chave: str, *, by: str) -> Settled:
        """Ask the gateway what happened under ``chave`` and settle the claim with it.

        Raises:
            GatewayError: the gateway could not be asked (the item stays uncertain).
        """
        record = self._record(chave)
        if record.status in ("executado", "falhou"):
            return Settled(record, record.status, False, f"already {record.status}")
        spec = find_tool(record.ferramenta)
        if spec is None or spec.reconciler is None:
            return Settled(record, record.status, False, "nothing outside can tell: settle it")
        found = spec.reconciler(self.toolbox.credentials(spec), record)
        happened = found is not None
        status = self.ledger.reconcile(chave, happened=happened, detalhe={"gateway": found})
        told = "the gateway debited it" if found is not None else "the gateway never saw it"
        self._event(record, status, by=by, how="gateway")
        return Settled(record, status, True, f"{told}: {status}")

    def settle(self, chave: str, outcome: HandOutcome, *, operator: str, reason: str) -> Settled:
        """An operator's verdict on an uncertain claim (``executado``: the money moved)."""
        record = self._record(chave)
        if record.status in ("executado", "falhou"):
            return Settled(record, record.status, False, f"already {record.status}")
        status = self.ledger.reconcile(
            chave,
            happened=outcome == "executado",
            detalhe={"operador": operator, "motivo": reason},
        )
        self._event(record, status, by=operator, how="by_hand", reason=reason)
        return Settled(record, status, True, f"settled by {operator}: {status}")

    def reconcile_all(self, *, by: str = "reconcile") -> list[tuple[str, str]]:
        """Expire stale claims, then ask the gateway about every uncertain one.

        A claim the gateway cannot be asked about now stays uncertain (logged) and is
        tried again next time; returns ``(chave, new status)`` of those settled.
        """
        self.ledger.expire_stale()
        settled: list[tuple[str, str]] = []
        for record, _ in self.items():
            try:
                got = self.reconcile_one(record.chave, by=by)
            except CadenciaError as exc:
                log.warning("reconcile of %s failed: %s", record.chave, exc.message)
                continue
            if got.settled:
                settled.append((record.chave, got.status))
        return settled

    def _event(
        self,
        record: LedgerRecord,
        status: RecordStatus,
        *,
        by: str,
        how: Literal["gateway", "by_hand"],
        reason: str | None = None,
    ) -> None:
        payload: dict[str, Any] = {
            "chaveIdempotencia": record.chave,
            "conversaId": record.conversa_id,
            "status": status,
            "by": by,
            "how": how,
        }
        if reason is not None:
            payload["reason"] = reason
        self.events.append(
            EventType.LEDGER_RECONCILIADO,
            payload,
            session_id=record.conversa_id,
            agent="operador" if how == "by_hand" else None,
        )
