"""Human takeovers ("interrupções"): opened by the guard, worked by operators.

One takeover per (conversa, entidade, ferramenta, motivo), however many attempts hit the
ceiling. Claiming is first-come: a second operator gets :class:`ConflictError`. Opening
joins the caller's unit of work (``tx=``) so the guard's decision and the takeover it
causes commit together.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from backend.events import EventLog, EventType, utcnow_iso
from backend.exceptions import ConflictError, NotFoundError
from backend.guard.conversations import Conversations
from backend.store.db import Row, dumps, loads
from backend.store.uow import UnitOfWork, Work
from backend.tools.registry import EntityField, tool_spec

Motivo = Literal["teto_de_voltas", "conflito_de_valor", "resultado_incerto"]


@dataclass(frozen=True)
class Interruption:
    """A conversation waiting for a human."""

    id: int
    conversa_id: str
    entidade_id: str
    ferramenta: str
    motivo: str
    argumentos: dict[str, Any]
    attempts: int
    status: str
    claimed_by: str | None
    resolution: str | None
    reply: str | None
    opened_at: str
    updated_at: str
    claimed_at: str | None = None
    outcome: str | None = None
    """The ledger's ``resultado`` of the operator's action (None: nothing ran)."""
    grant_total: int = 0
    grant_used: int = 0

    @property
    def grant_left(self) -> int:
        """Attempts an operator granted the agent that it has not used yet."""
        return max(0, self.grant_total - self.grant_used)

    @classmethod
    def from_row(cls, row: Row) -> Interruption:
        """Build from a database row."""
        return cls(**{**row, "id": int(row["id"]), "argumentos": loads(row["argumentos"]) or {}})

    @property
    def entidade(self) -> EntityField:
        """Which argument ``entidade_id`` is: ``pedidoId``, or ``clienteId`` for a cadastro."""
        return tool_spec(self.ferramenta).entity_field

    def to_dict(self) -> dict[str, Any]:
        """JSON form (the API's interruption item)."""
        return {
            "id": self.id,
            "conversation": self.conversa_id,
            "entidade": self.entidade,
            "entidade_id": self.entidade_id,
            "ferramenta": self.ferramenta,
            "motivo": self.motivo,
            "argumentos": self.argumentos,
            "attempt_count": self.attempts,
            "status": self.status,
            "since": self.opened_at,
            "claimed_by": self.claimed_by,
            "claimed_at": self.claimed_at,
            "resolution": self.resolution,
            "reply": self.reply,
            "outcome": self.outcome,
            "grant_left": self.grant_left,
        }


class Interruptions:
    """Open, list, claim and close takeovers; every change is an event."""

    def __init__(self, events: EventLog) -> None:
        self.events = events
        self.db = events.db

    def open(
        self,
        *,
        conversa_id: str,
        entidade_id: str,
        ferramenta: str,
        motivo: Motivo,
        argumentos: dict[str, Any],
        attempts: int,
        tx: Work | None = None,
    ) -> tuple[int, bool]:
        """Open the takeover for this combination unless one is already open.

        With ``tx`` it commits with the caller's unit of work (and its event is broadcast
        after that commit); without, in a transaction of its own. Returns ``(id, created)``.
        """
        sql = tx.tx_for(self.db) if tx is not None else None
        if tx is None or sql is None:
            with UnitOfWork(self.db).begin() as own:
                return self.open(
                    conversa_id=conversa_id,
                    entidade_id=entidade_id,
                    ferramenta=ferramenta,
                    motivo=motivo,
                    argumentos=argumentos,
                    attempts=attempts,
                    tx=own,
                )
        params = {
            "conversa_id": conversa_id,
            "entidade_id": entidade_id,
            "ferramenta": ferramenta,
            "motivo": motivo,
            "argumentos": dumps(argumentos),
            "attempts": attempts,
            "now": utcnow_iso(),
        }
        row = sql.one("interruption_open", params)
        if row is None:
            sql.execute("interruption_touch", params)
            found = sql.one("interruption_find", params)
            return (int(found["id"]) if found else 0), False
        ident = int(row["id"])
        self.events.append(
            EventType.INTERRUPCAO_ABERTA,
            {
                "interrupcao_id": ident,
                "conversaId": conversa_id,
                "ferramenta": ferramenta,
                tool_spec(ferramenta).entity_field: entidade_id,
                "motivo": motivo,
                "attempts": attempts,
            },
            session_id=conversa_id,
            agent="atendimento",
            tx=tx,
        )
        return ident, True

    def get(self, ident: int) -> Interruption:
        """One takeover; :class:`NotFoundError` when unknown."""
        with self.db.transaction(write=False) as tx:
            row = tx.one("interruption_get", {"id": ident})
        if row is None:
            raise NotFoundError(f"no interruption with id {ident}", id=ident)
        return Interruption.from_row(row)

    def unresolved(self) -> list[Interruption]:
        """Open and claimed takeovers, oldest first."""
        with self.db.transaction(write=False) as tx:
            return [Interruption.from_row(r) for r in tx.all("interruptions_unresolved")]

    def claim(self, ident: int, operator: str) -> Interruption:
        """Take over a conversation; only one operator at a time."""
        with self.db.transaction() as tx:
            changed = tx.execute(
                "interruption_claim", {"id": ident, "operator": operator, "now": utcnow_iso()}
            )
            row = tx.one("interruption_get", {"id": ident})
            if row is None:
                raise NotFoundError(f"no interruption with id {ident}", id=ident)
            if not changed:
                current = Interruption.from_row(row)
                raise ConflictError(
                    f"interruption {ident} is {current.status}"
                    + (f" by {current.claimed_by}" if current.claimed_by else ""),
                    id=ident,
                )
            # The conversation changes hands in the same transaction as the claim.
            Conversations(self.db).take(row["conversa_id"], operator, tx=tx)
            event = self.events.append_in(
                tx,
                EventType.INTERRUPCAO_ASSUMIDA,
                {"interrupcao_id": ident, "operator": operator},
                session_id=row["conversa_id"],
                agent="operador",
            )
        self.events.publish([event])
        return Interruption.from_row(row)

    def release(self, ident: int, operator: str, reason: str | None = None) -> Interruption:
        """Give a claimed takeover back to the queue (only its holder may): open again, and
        the conversation returns to the bot until someone claims it."""
        with self.db.transaction() as tx:
            changed = tx.execute(
                "interruption_release", {"id": ident, "operator": operator, "now": utcnow_iso()}
            )
            row = tx.one("interruption_get", {"id": ident})
            if row is None:
                raise NotFoundError(f"no interruption with id {ident}", id=ident)
            if not changed:
                current = Interruption.from_row(row)
                held = f" by {current.claimed_by}" if current.claimed_by else ""
                raise ConflictError(
                    f"interruption {ident} is {current.status}{held}: only its holder releases it",
                    id=ident,
                )
            Conversations(self.db).hand_back(row["conversa_id"], tx=tx)
            event = self.events.append_in(
                tx,
                EventType.INTERRUPCAO_LIBERADA,
                {"interrupcao_id": ident, "operator": operator, "reason": reason},
                session_id=row["conversa_id"],
                agent="operador",
            )
        self.events.publish([event])
        return Interruption.from_row(row)

    def close(
        self,
        ident: int,
        operator: str,
        resolution: str,
        reply: str | None,
        *,
        outcome: str | None = None,
    ) -> Interruption:
        """Mark resolved with the ledger's real ``outcome``; only the claiming operator may."""
        with self.db.transaction() as tx:
            changed = tx.execute(
                "interruption_resolve",
                {
                    "id": ident,
                    "operator": operator,
                    "resolution": resolution,
                    "reply": reply,
                    "outcome": outcome,
                    "now": utcnow_iso(),
                },
            )
            row = tx.one("interruption_get", {"id": ident})
            if row is None:
                raise NotFoundError(f"no interruption with id {ident}", id=ident)
            if not changed:
                raise ConflictError(
                    f"interruption {ident} must be claimed by {operator} before resolving", id=ident
                )
            payload: dict[str, Any] = {
                "interrupcao_id": ident,
                "operator": operator,
                "action": resolution,
                "reply": reply or "",
            }
            if outcome is not None:
                payload["outcome"] = outcome
            event = self.events.append_in(
                tx,
                EventType.INTERRUPCAO_RESOLVIDA,
                payload,
                session_id=row["conversa_id"],
                agent="operador",
            )
        self.events.publish([event])
        return Interruption.from_row(row)

    # -- what the human settled ------------------------------------------------------------

    def latest_for(
        self, conversa_id: str, entidade_id: str, ferramenta: str, *, tx: Work | None = None
    ) -> Interruption | None:
        """The newest takeover of this combination (any motivo, any status), if any."""
        params = {"conversa_id": conversa_id, "entidade_id": entidade_id, "ferramenta": ferramenta}
        sql = tx.tx_for(self.db) if tx is not None else None
        if sql is not None:
            row = sql.one("interruption_latest_for", params)
        else:
            with self.db.transaction(write=False) as own:
                row = own.one("interruption_latest_for", params)
        return Interruption.from_row(row) if row else None

    def use_grant(self, ident: int, *, tx: Work) -> bool:
        """Spend one granted attempt, atomically; False when none is left."""
        sql = tx.tx_for(self.db)
        assert sql is not None, "a grant is spent in the events database's unit of work"
        return sql.one("interruption_grant_use", {"id": ident, "now": utcnow_iso()}) is not None

    def grant(self, ident: int, operator: str, attempts: int, reason: str) -> Interruption:
        """Give the agent ``attempts`` more tries on a settled combination (audited)."""
        with self.db.transaction() as tx:
            changed = tx.execute(
                "interruption_grant", {"id": ident, "attempts": attempts, "now": utcnow_iso()}
            )
            row = tx.one("interruption_get", {"id": ident})
            if row is None:
                raise NotFoundError(f"no interruption with id {ident}", id=ident)
            if not changed:
                raise ConflictError(
                    f"interruption {ident} is {row['status']}; resolve it before granting",
                    id=ident,
                )
            event = self.events.append_in(
                tx,
                EventType.INTERRUPCAO_CONCEDIDA,
                {
                    "interrupcao_id": ident,
                    "operator": operator,
                    "attempts": attempts,
                    "reason": reason,
                    "conversaId": row["conversa_id"],
                },
                session_id=row["conversa_id"],
                agent="operador",
            )
        self.events.publish([event])
        return Interruption.from_row(row)
