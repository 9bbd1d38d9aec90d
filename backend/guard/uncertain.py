"""Uncertain outcomes go to a human: list them, ask the gateway by key, or settle by hand.

A claim is uncertain when the ledger cannot know whether the irreversible action happened:
``resultado_incerto`` (a gateway timeout, a completion that failed after the gateway
answered) or ``tentando`` past its lease. Each is an Approvals item until settled;
``cadencia serve`` asks the gateway about all of them periodically (:meth:`reconcile_all`),
and an operator may ask again or settle one by hand. Only the claim's own gateway is asked,
and a key it does not know is ``falhou`` only after ``CADENCIA_GATEWAY_SETTLE_S``; never
re-sent (docs/decisions/0009-uncertain-refunds-are-looked-up-not-resent.md). Every
settlement is a ``ledger.reconciliado`` event, and the customer is told in the same commit.
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
from backend.exceptions import CadenciaError, ConflictError, NotFoundError
from backend.gateway.exceptions import GatewayMismatchError
from backend.guard.conversations import Conversations
from backend.guard.outcomes import mensagem_de_acerto
from backend.guard.toolbox import Toolbox
from backend.ledger.base import Ledger, LedgerRecord, RecordStatus
from backend.store.uow import UnitOfWork
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


@dataclass(frozen=True)
class Origin:
    """Who asks when it is not an API request (whose audit entry the API writes itself):
    the ``cadencia ledger reconcile`` command, or the backend's own reconcile loop."""

    role: str
    method: str
    path: str
    every_ask: bool
    """Audit each ask (a person ran it) or only what it settled (a loop asking every
    minute would fill the audit with "still unknown")."""


CLI = Origin("cli", "CLI", "cadencia ledger reconcile", every_ask=True)
LOOP = Origin("backend", "BACKEND", "reconcile loop", every_ask=False)


def _epoch(iso: str) -> float | None:
    try:
        since = datetime.fromisoformat(iso)
    except ValueError:
        return None
    if since.tzinfo is None:
        since = since.replace(tzinfo=UTC)
    return since.timestamp()


def _age_s(record: LedgerRecord) -> float:
    since = _epoch(record.updated_at)
    return 0.0 if since is None else max(0.0, time.time() - since)


def _since_request_s(record: LedgerRecord) -> float:
    """Seconds since the claim's request can last have left for the gateway, counted
    late: from the later of its last change (marked uncertain, after the client gave up)
    and its lease's end (a claim still ``tentando`` sent it within its lease)."""
    changed = _epoch(record.updated_at) or time.time()
    return max(0.0, time.time() - max(changed, record.lease_until))


class UncertainOutcomes:
    """The ledger's uncertain claims, for operators and the reconcile loop."""

    def __init__(
        self,
        ledger: Ledger,
        toolbox: Toolbox,
        events: EventLog,
        conversations: Conversations | None = None,
    ) -> None:
        self.ledger = ledger
        self.toolbox = toolbox
        self.events = events
        self.conversations = conversations
        """The customer's channel: told how each settled claim ended (None: not told)."""

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

    def reconcile_one(self, chave: str, *, by: str, origin: Origin | None = None) -> Settled:
        """Ask the gateway the claim went to what happened under ``chave``, and settle the
        claim with it; ``origin`` when the caller is not an API request (it is audited here).

        Raises:
            GatewayMismatchError: the claim went to another gateway (nothing recorded).
            GatewayError: the gateway could not be asked (the item stays uncertain).
        """
        record = self._record(chave)
        if record.status in ("executado", "falhou"):
            return Settled(record, record.status, False, f"already {record.status}")
        try:
            got = self._ask(record, by)
        except CadenciaError as exc:
            if origin is not None and origin.every_ask:
                refused = isinstance(exc, ConflictError)
                self._audit(origin, by, record, "refused" if refused else "failed", exc.code)
            raise
        if origin is not None and (got.settled or origin.every_ask):
            self._audit(origin, by, record, "done", None)
        return got

    def _ask(self, record: LedgerRecord, by: str) -> Settled:
        spec = find_tool(record.ferramenta)
        if spec is None or spec.reconciler is None:
            return Settled(record, record.status, False, "nothing outside can tell: settle it")
        here = self.toolbox.gateway_identity
        if record.gateway is not None and record.gateway != here:
            raise GatewayMismatchError(
                f"{record.chave} went to gateway {record.gateway}, and this backend talks to "
                f"{here}: reconcile it where CADENCIA_GATEWAY_URL names that gateway, or "
                "settle it by hand; nothing was recorded",
                chave=record.chave,
                claim_gateway=record.gateway,
                gateway=here,
            )
        found = spec.reconciler(self.toolbox.credentials(spec), record)
        if found is None:
            left = self.toolbox.gateway_settle_s - _since_request_s(record)
            if left > 0:
                return Settled(
                    record,
                    record.status,
                    False,
                    "the gateway does not know this key yet and may still be working on it: "
                    f"still uncertain, final in {left:.0f} s",
                )
        status, changed = self.ledger.settle(
            record.chave, happened=found is not None, detalhe={"gateway": found}
        )
        if not changed:  # a concurrent reconcile settled it (and told the customer)
            return Settled(record, status, False, f"already {status}")
        told = "the gateway debited it" if found is not None else "the gateway never saw it"
        self._settled(record, status, by=by, how="gateway")
        return Settled(record, status, True, f"{told}: {status}")

    def settle(self, chave: str, outcome: HandOutcome, *, operator: str, reason: str) -> Settled:
        """An operator's verdict on an uncertain claim (``executado``: the money moved)."""
        record = self._record(chave)
        if record.status in ("executado", "falhou"):
            return Settled(record, record.status, False, f"already {record.status}")
        status, changed = self.ledger.settle(
            chave,
            happened=outcome == "executado",
            detalhe={"operador": operator, "motivo": reason},
        )
        if not changed:
            return Settled(record, status, False, f"already {status}")
        self._settled(record, status, by=operator, how="by_hand", reason=reason)
        return Settled(record, status, True, f"settled by {operator}: {status}")

    def reconcile_all(
        self, *, by: str = "reconcile", origin: Origin = LOOP
    ) -> list[tuple[str, str]]:
        """Expire stale claims, then ask the gateway about every uncertain one.

        A claim the gateway cannot be asked about now stays uncertain (logged) and is
        tried again next time; returns ``(chave, new status)`` of those settled.
        """
        return [
            (chave, got.status)
            for chave, got in self.reconcile_each(by=by, origin=origin)
            if isinstance(got, Settled) and got.settled
        ]

    def reconcile_each(
        self, *, by: str, origin: Origin
    ) -> list[tuple[str, Settled | CadenciaError]]:
        """Expire stale claims, then ask about every uncertain one: what each came to, or
        why it could not be asked (it stays uncertain, logged)."""
        self.ledger.expire_stale()
        results: list[tuple[str, Settled | CadenciaError]] = []
        for record, _ in self.items():
            try:
                results.append(
                    (record.chave, self.reconcile_one(record.chave, by=by, origin=origin))
                )
            except CadenciaError as exc:
                log.warning("reconcile of %s failed: %s", record.chave, exc.message)
                results.append((record.chave, exc))
        return results

    def _audit(
        self, origin: Origin, by: str, record: LedgerRecord, outcome: str, error: str | None
    ) -> None:
        """One audit entry (``operator.action``) for an ask no API request audited."""
        ident = item_id(record.chave)
        payload: dict[str, Any] = {
            "operator": by,
            "role": origin.role,
            "action": "reconcile_uncertain",
            "method": origin.method,
            "path": origin.path,
            "target": {"ident": ident},
            "subject": ident,
            "outcome": outcome,
            "status": {"done": 200, "refused": 409}.get(outcome, 502),
        }
        if error is not None:
            payload["error"] = error
        self.events.append(EventType.OPERATOR_ACTION, payload)

    def _settled(
        self,
        record: LedgerRecord,
        status: RecordStatus,
        *,
        by: str,
        how: Literal["gateway", "by_hand"],
        reason: str | None = None,
    ) -> None:
        """Record the settlement (``ledger.reconciliado``) and tell the customer how it
        ended, in one commit."""
        payload: dict[str, Any] = {
            "chaveIdempotencia": record.chave,
            "conversaId": record.conversa_id,
            "status": status,
            "by": by,
            "how": how,
        }
        if reason is not None:
            payload["reason"] = reason
        with UnitOfWork(self.events.db).begin() as work:
            self.events.append(
                EventType.LEDGER_RECONCILIADO,
                payload,
                session_id=record.conversa_id,
                agent="operador" if how == "by_hand" else None,
                tx=work,
            )
            told = mensagem_de_acerto(record, status)
            if self.conversations is not None and told is not None:
                self.conversations.say(
                    record.conversa_id, "agente", told, agent="atendimento", tx=work
                )
