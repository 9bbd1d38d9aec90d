"""Pending approvals: what ``decide()`` → ask left for an operator, and how it was decided.

An approval is ``pending`` until an operator decides it: ``approved`` (its action ran),
``rejected`` (with a reason, which the requesting agent's next turn sees) or ``failed``
(approved, but the action could not run; ``result.error`` says why). Executing an approved
action takes a *claim* on the still-pending row first (a conditional UPDATE), so of two
operators racing, one executes and the other gets :class:`ConflictError`; a claim older
than :data:`CLAIM_LEASE_S` (the process died while executing) can be taken again.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal, cast

from backend.clock import parse_moment, utc_iso
from backend.events import Event, EventLog, EventType, utcnow_iso
from backend.exceptions import ConflictError, NotFoundError
from backend.store.db import Row, dumps, loads

ApprovalStatus = Literal["pending", "approved", "rejected", "failed"]
CLAIM_LEASE_S = 300.0


def iso_utc(value: Any) -> str:
    """A stored timestamp (SQLite text, PostgreSQL datetime) as ISO 8601 UTC with ``Z``."""
    moment = parse_moment(value)
    return str(value) if moment is None else utc_iso(moment)


def _stale_before() -> str:
    return utc_iso(datetime.now(UTC) - timedelta(seconds=CLAIM_LEASE_S))


class RowMoved(Exception):
    """A conditional UPDATE changed nothing: raised inside the transaction (rolling it
    back), turned into the caller's error outside it, where the row can be read again."""


@contextmanager
def told_outside(error: Callable[[], Exception]) -> Iterator[None]:
    """Turn a :class:`RowMoved` raised inside into ``error()``, built after the rollback."""
    try:
        yield
    except RowMoved:
        raise error() from None


@dataclass(frozen=True)
class Approval:
    """One approval and, once decided, who decided it, why, and what executing it did."""

    id: str
    project_id: str | None
    session_id: str | None
    agent: str
    action: str
    payload: dict[str, Any]
    status: ApprovalStatus
    stage: str | None
    rule: str | None
    created_at: str
    decided_by: str | None
    decided_at: str | None
    reason: str | None
    result: dict[str, Any] | None
    claimed_by: str | None

    @classmethod
    def from_row(cls, row: Row) -> Approval:
        """Build from an ``approvals`` row."""
        return cls(
            id=row["id"],
            project_id=row["project_id"],
            session_id=row["session_id"],
            agent=row["agent"],
            action=row["action"],
            payload=loads(row["payload"]) or {},
            status=cast(ApprovalStatus, row["status"]),
            stage=row["stage"],
            rule=row["rule"],
            created_at=iso_utc(row["created_at"]),
            decided_by=row["decided_by"],
            decided_at=iso_utc(row["decided_at"]) if row["decided_at"] is not None else None,
            reason=row["reason"],
            result=loads(row["result"]),
            claimed_by=row["claimed_by"],
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON form (``GET /api/approvals/{id}``)."""
        return dict(self.__dict__)


class ApprovalStore:
    """The ``approvals`` table; every decision appends ``approval.decided`` in the same
    transaction, named by the requesting agent and its session (its next turn reads it)."""

    def __init__(self, events: EventLog) -> None:
        self.events = events
        self.db = events.db

    def request(
        self,
        *,
        project_id: str | None,
        session_id: str | None,
        agent: str,
        action: str,
        payload: dict[str, Any],
        stage: str,
        rule: str,
    ) -> str:
        """Create a pending approval and its ``approval.requested`` event; returns its id."""
        ident = f"apr_{uuid.uuid4().hex[:12]}"
        with self.db.transaction() as tx:
            tx.execute(
                "approval_insert",
                {
                    "id": ident,
                    "project_id": project_id,
                    "session_id": session_id,
                    "agent": agent,
                    "action": action,
                    "payload": dumps(payload),
                    "now": utcnow_iso(),
                    "stage": stage,
                    "rule": rule,
                },
            )
            event = self.events.append_in(
                tx,
                EventType.APPROVAL_REQUESTED,
                {"approval_id": ident, "action": action, "stage": stage, "rule": rule},
                project_id=project_id,
                session_id=session_id,
                agent=agent,
            )
        self.events.publish([event])
        return ident

    def get(self, approval_id: str) -> Approval:
        """One approval; :class:`NotFoundError` when unknown."""
        with self.db.transaction(write=False) as tx:
            row = tx.one("approval_get", {"id": approval_id})
        if row is None:
            raise NotFoundError(f"no approval with id {approval_id!r}", approval_id=approval_id)
        return Approval.from_row(row)

    def pending(self) -> list[Approval]:
        """Approvals waiting for an operator, oldest first."""
        with self.db.transaction(write=False) as tx:
            return [Approval.from_row(r) for r in tx.all("approvals_pending")]

    def claim(self, approval_id: str, operator: str) -> Approval:
        """Take the right to execute a pending approval (one operator wins).

        Raises:
            NotFoundError: unknown approval.
            ConflictError: already decided, or another operator is executing it.
        """
        current = self.get(approval_id)
        with self.db.transaction() as tx:
            won = tx.execute(
                "approval_claim",
                {
                    "id": approval_id,
                    "operator": operator,
                    "now": utcnow_iso(),
                    "stale_before": _stale_before(),
                },
            )
        if not won:
            raise self._not_pending(current, approval_id)
        return self.get(approval_id)

    def release(self, approval_id: str, operator: str) -> None:
        """Give a claim back: the action did not run, the approval stays pending."""
        with self.db.transaction() as tx:
            tx.execute("approval_release", {"id": approval_id, "operator": operator})

    def decide(
        self,
        approval_id: str,
        operator: str,
        status: ApprovalStatus,
        *,
        reason: str | None,
        result: dict[str, Any] | None,
    ) -> Approval:
        """Record the decision and ``approval.decided`` (conditional on still pending).

        Raises:
            NotFoundError: unknown approval.
            ConflictError: decided already, or claimed by another operator.
        """
        current = self.get(approval_id)
        outcome = {k: v for k, v in (result or {}).items() if k in ("executed", "pr_id", "error")}
        with (
            told_outside(lambda: self._not_pending(current, approval_id)),
            self.db.transaction() as tx,
        ):
            changed = tx.execute(
                "approval_decide",
                {
                    "id": approval_id,
                    "status": status,
                    "operator": operator,
                    "now": utcnow_iso(),
                    "reason": reason,
                    "result": dumps(result) if result is not None else None,
                    "stale_before": _stale_before(),
                },
            )
            if not changed:
                raise RowMoved
            event: Event = self.events.append_in(
                tx,
                EventType.APPROVAL_DECIDED,
                {
                    "approval_id": approval_id,
                    "action": current.action,
                    "outcome": status,
                    "operator": operator,
                    "reason": reason,
                    **outcome,
                },
                project_id=current.project_id,
                session_id=current.session_id,
                agent=current.agent,
            )
        self.events.publish([event])
        return self.get(approval_id)

    def _not_pending(self, before: Approval, approval_id: str) -> ConflictError:
        now = self.get(approval_id)
        if now.status != "pending":
            return ConflictError(
                f"approval {approval_id} is already {now.status}"
                + (f" by {now.decided_by}" if now.decided_by else ""),
                approval_id=approval_id,
                status=now.status,
            )
        return ConflictError(
            f"approval {approval_id} is being executed by {now.claimed_by or before.claimed_by}",
            approval_id=approval_id,
            status=now.status,
        )
