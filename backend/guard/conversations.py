"""Customer conversations: who holds them (``bot`` or ``human``) and their messages.

A conversation is ``bot`` until an operator claims one of its takeovers, ``human`` until a
resolve hands it back; while ``human`` no model turn runs. It belongs to one customer, bound
by the first message; :func:`owns` is the guard's check that an order or client is that
customer's. Every outbound message gets a delivery row in the same transaction, so delivery
never runs on the request path (:class:`Conversations` gives the rules).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from backend.events import EventType, utcnow_iso
from backend.exceptions import ConflictError
from backend.guard.exceptions import CustomerMismatchError, CustomerMissingError
from backend.store.db import Database, Tx
from backend.store.uow import UnitOfWork, Work

if TYPE_CHECKING:
    from backend.events import EventLog

Role = Literal["cliente", "agente", "operador"]
State = Literal["bot", "human"]
OUTBOUND: frozenset[str] = frozenset({"agente", "operador"})


EntityField = Literal["pedidoId", "clienteId"]
_OWNS: dict[EntityField, str] = {
    "pedidoId": "conversation_owns_pedido",
    "clienteId": "conversation_owns_cliente",
}


@dataclass(frozen=True)
class ConversationState:
    """Who holds a conversation: the agent (``bot``) or ``operator`` (``human``), and
    whose conversation it is (``cliente_id``, None until a message names the customer)."""

    state: State
    operator: str | None
    cliente_id: str | None = None

    def check_customer(self, conversa_id: str, given: str | None) -> None:
        """Refuse a message that names another customer, or none for a conversation that
        has none yet.

        Raises:
            CustomerMismatchError: ``given`` is not the conversation's customer.
            CustomerMissingError: neither the conversation nor the message names one.
        """
        if given is None and self.cliente_id is None:
            raise CustomerMissingError(
                f"conversation {conversa_id} has no customer yet: its first message must "
                "give cliente_id",
                conversa_id=conversa_id,
            )
        if given is not None and self.cliente_id is not None and given != self.cliente_id:
            raise CustomerMismatchError(
                f"conversation {conversa_id} belongs to another customer than {given}; "
                "nothing was recorded",
                conversa_id=conversa_id,
                given=given,
            )


def owns(tx: Tx, conversa_id: str, entity_field: EntityField, entidade: str) -> bool:
    """Whether the order (``pedidoId``) or client (``clienteId``) ``entidade`` exists and
    belongs to the customer of conversation ``conversa_id``: False for an unknown one and
    for another customer's alike, and for every entity of a conversation with no customer."""
    row = tx.one(_OWNS[entity_field], {"conversa_id": conversa_id, "entidade": entidade})
    return row is not None


@dataclass(frozen=True)
class Message:
    """One message with, for outbound ones, its delivery to the customer's channel."""

    id: int
    autor: Role
    texto: str
    ts: str
    delivery: dict[str, Any] | None

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Message:
        """Build from ``conversation_messages_delivery`` (delivery columns may be NULL)."""
        delivery = None
        if row.get("status") is not None:
            delivery = {
                "status": row["status"],
                "attempts": int(row["attempts"]),
                "last_error": row["last_error"],
                "delivered_at": str(row["delivered_at"]) if row["delivered_at"] else None,
            }
        return cls(int(row["id"]), row["role"], row["text"], str(row["ts"]), delivery)

    def to_dict(self) -> dict[str, Any]:
        """JSON form (the API's ``MessageOut``)."""
        return {
            "id": self.id,
            "autor": self.autor,
            "texto": self.texto,
            "ts": self.ts,
            "delivery": self.delivery,
        }


OutboundListener = Callable[[int], None]


def _sql(db: Database, tx: Work | Tx | None) -> Tx | None:
    if isinstance(tx, Tx):
        return tx
    return tx.tx_for(db) if tx is not None else None


class Conversations:
    """Conversation state, transcripts and the outbound delivery journal.

    A conversation is ``bot`` until an operator claims one of its takeovers (``take``, in the
    same unit of work as the claim); it is ``human`` until a resolve hands it back. While
    ``human`` the customer's messages are recorded and streamed but no model turn runs.

    A conversation belongs to one customer: the channel names it (``cliente_id``) with the
    first message, which binds it in the same transaction; a message naming another customer
    is refused.

    Every outbound message (``agente`` or ``operador``) said through :meth:`say` gets a
    delivery row (``pending``) in the same transaction as the message and its
    ``conversa.mensagem`` event; after the commit the outbound listeners (the channel's
    delivery worker) are told its id, so delivery never runs on the request path and a crash
    leaves a ``pending`` row that the next start retries.
    """

    def __init__(self, db: Database, events: EventLog | None = None) -> None:
        self.db = db
        self.events = events
        self._outbound: list[OutboundListener] = []
        self._outbound_in: list[Callable[[Tx], None]] = []

    # -- state ---------------------------------------------------------------------------

    def take(self, conversa_id: str, operator: str, *, tx: Work | Tx | None = None) -> None:
        """The conversation goes to ``human``, held by ``operator``.

        With ``tx`` (a unit of work, or the caller's open transaction on this database) it
        commits with the caller's change, e.g. the claim of the takeover.
        """
        self._set(conversa_id, "human", operator, tx)

    def bind(self, conversa_id: str, cliente_id: str) -> None:
        """Make the conversation customer ``cliente_id``'s (what its first message does).

        Raises:
            CustomerMismatchError: it already belongs to another customer.
        """
        with self.db.transaction() as tx:
            self._bind_in(tx, conversa_id, cliente_id)

    def hand_back(self, conversa_id: str, *, tx: Work | Tx | None = None) -> None:
        """The conversation returns to the agent (``bot``)."""
        self._set(conversa_id, "bot", None, tx)

    def state(self, conversa_id: str) -> ConversationState:
        """Who holds the conversation now (``bot`` when it was never taken)."""
        with self.db.transaction(write=False) as tx:
            return self._state_in(tx, conversa_id)

    def known(self, conversa_id: str) -> bool:
        """Whether the conversation has any message or state."""
        with self.db.transaction(write=False) as tx:
            return tx.one("conversation_known", {"conversa_id": conversa_id}) is not None

    def _set(self, conversa_id: str, state: State, operator: str | None, tx: Any) -> None:
        params = {
            "conversa_id": conversa_id,
            "state": state,
            "operator": operator,
            "now": utcnow_iso(),
        }
        sql = _sql(self.db, tx)
        if sql is not None:
            sql.execute("conversation_set_state", params)
            return
        with self.db.transaction() as own:
            own.execute("conversation_set_state", params)

    @staticmethod
    def _state_in(tx: Tx, conversa_id: str) -> ConversationState:
        row = tx.one("conversation_state", {"conversa_id": conversa_id})
        if row is None:
            return ConversationState("bot", None)
        return ConversationState(row["state"], row["operator"], row["cliente_id"])

    def _bind_in(self, tx: Tx, conversa_id: str, cliente_id: str) -> None:
        """Make ``cliente_id`` the conversation's customer unless it has one; refuse
        another (the caller's transaction then rolls back: nothing is recorded)."""
        row = tx.one(
            "conversation_bind_customer",
            {"conversa_id": conversa_id, "cliente_id": cliente_id, "now": utcnow_iso()},
        )
        assert row is not None
        ConversationState("bot", None, row["cliente_id"]).check_customer(conversa_id, cliente_id)

    # -- messages ------------------------------------------------------------------------

    def add_outbound_listener(self, listener: OutboundListener) -> None:
        """Call ``listener(message_id)`` after each outbound message commits."""
        self._outbound.append(listener)

    def add_outbound_hook(self, hook: Callable[[Tx], None]) -> None:
        """Call ``hook(tx)`` inside each transaction that records an outbound message, so
        what it writes (the delivery job) commits with the message or not at all."""
        self._outbound_in.append(hook)

    def remove_outbound_listener(self, listener: OutboundListener) -> None:
        """Stop calling ``listener``."""
        if listener in self._outbound:
            self._outbound.remove(listener)

    def append(
        self, conversa_id: str, role: Role, text: str, *, cliente_id: str | None = None
    ) -> int:
        """Record one message only (no event, no delivery: ``prove``'s simulated talks);
        a customer's message with ``cliente_id`` binds the conversation to that customer."""
        with self.db.transaction() as tx:
            if cliente_id is not None and role == "cliente":
                self._bind_in(tx, conversa_id, cliente_id)
            return self._append_in(tx, conversa_id, role, text)

    def say(
        self,
        conversa_id: str,
        autor: Role,
        text: str,
        *,
        agent: str | None = None,
        held_by: str | None = None,
        cliente_id: str | None = None,
        tx: Work | None = None,
    ) -> Message:
        """Record a message, emit ``conversa.mensagem`` and, when outbound, queue its delivery.

        All in one unit of work: ``tx`` (the caller's, e.g. the turn that produced the reply)
        or a new one. ``held_by`` (an operator's reply) refuses with :class:`ConflictError`
        unless the conversation is ``human`` and held by them, checked in the same
        transaction so a concurrent hand back cannot slip in between. ``cliente_id`` (a
        customer's message) binds the conversation to that customer in the same
        transaction, or refuses with :class:`CustomerMismatchError` if it has another.
        """
        if tx is not None and tx.tx_for(self.db) is not None:
            return self._say_in(tx, conversa_id, autor, text, agent, held_by, cliente_id)
        with UnitOfWork(self.db).begin() as work:
            return self._say_in(work, conversa_id, autor, text, agent, held_by, cliente_id)

    def _say_in(
        self,
        work: Work,
        conversa_id: str,
        autor: Role,
        text: str,
        agent: str | None,
        held_by: str | None,
        cliente_id: str | None = None,
    ) -> Message:
        assert self.events is not None, "Conversations needs the event log to say()"
        tx = work.tx_for(self.db)
        assert tx is not None
        if cliente_id is not None and autor == "cliente":
            self._bind_in(tx, conversa_id, cliente_id)
        if held_by is not None:
            current = self._state_in(tx, conversa_id)
            if current.state != "human" or current.operator != held_by:
                raise ConflictError(
                    f"conversation {conversa_id} is {current.state}"
                    + (f" (held by {current.operator})" if current.operator else "")
                    + f", not held by {held_by}"
                )
        ts = utcnow_iso()
        ident = self._append_in(tx, conversa_id, autor, text, ts)
        delivery = None
        if autor in OUTBOUND:
            if tx.execute("unanswered_clear", {"conversa_id": conversa_id}):  # answered now
                self.events.append(
                    EventType.CONVERSA_RESPONDIDA,
                    {"conversaId": conversa_id},
                    session_id=conversa_id,
                    tx=work,
                )
            delivery = dict(status="pending", attempts=0, last_error=None, delivered_at=None)
            tx.execute(
                "delivery_enqueue",
                {
                    "message_id": ident,
                    "conversa_id": conversa_id,
                    "key": f"msg-{ident}-{uuid.uuid4().hex[:12]}",
                    "now": utcnow_iso(),
                },
            )
            for hook in list(self._outbound_in):
                hook(tx)
            work.after_commit(lambda: self._tell(ident))
        self.events.append(
            EventType.CONVERSA_MENSAGEM,
            {"conversaId": conversa_id, "autor": autor, "texto": text},
            session_id=conversa_id,
            agent=agent,
            tx=work,
        )
        return Message(ident, autor, text, ts, delivery)

    def _append_in(
        self, tx: Tx, conversa_id: str, role: Role, text: str, ts: str | None = None
    ) -> int:
        row = tx.one(
            "message_append",
            {"conversa_id": conversa_id, "role": role, "text": text, "ts": ts or utcnow_iso()},
        )
        assert row is not None
        return int(row["id"])

    def _tell(self, message_id: int) -> None:
        for listener in list(self._outbound):
            listener(message_id)

    def mark_unanswered(self, conversa_id: str, reason: str) -> None:
        """A customer's message no agent will answer (paused, over budget): the inbox's
        ``unanswered`` until someone replies in the conversation."""
        assert self.events is not None, "Conversations needs the event log to mark_unanswered()"
        with UnitOfWork(self.db).begin() as work:
            tx = work.tx_for(self.db)
            assert tx is not None
            tx.execute(
                "unanswered_mark",
                {"conversa_id": conversa_id, "reason": reason, "now": utcnow_iso()},
            )
            self.events.append(
                EventType.CONVERSA_SEM_RESPOSTA,
                {"conversaId": conversa_id, "reason": reason},
                session_id=conversa_id,
                tx=work,
            )

    def unanswered(self) -> list[dict[str, Any]]:
        """Conversations waiting for an answer no agent will give, oldest first."""
        with self.db.transaction(write=False) as tx:
            return tx.all("unanswered_all")

    def transcript(self, conversa_id: str, *, newest: int | None = None) -> list[dict[str, Any]]:
        """Every message of a conversation (with ``newest``: only that many of the latest),
        oldest first (``role``/``text`` rows)."""
        if newest is not None:
            return [
                {"role": m.autor, "text": m.texto, "ts": m.ts}
                for m in self.newest_messages(conversa_id, newest)
            ]
        with self.db.transaction(write=False) as tx:
            return tx.all("messages_for", {"conversa_id": conversa_id})

    def messages(self, conversa_id: str) -> list[Message]:
        """Every message with its delivery state, oldest first."""
        with self.db.transaction(write=False) as tx:
            rows = tx.all("conversation_messages_delivery", {"conversa_id": conversa_id})
        return [Message.from_row(r) for r in rows]

    def newest_messages(
        self, conversa_id: str, limit: int, before: int | None = None
    ) -> list[Message]:
        """At most ``limit`` messages below id ``before`` (default: the newest), oldest
        first, with their delivery state: a page of a long conversation (on an index)."""
        params = {"conversa_id": conversa_id, "before": before or 2**62, "limit": limit}
        with self.db.transaction(write=False) as tx:
            rows = tx.all("conversation_messages_newest", params)
        return [Message.from_row(r) for r in reversed(rows)]

    # -- delivery journal (the channel's worker) ------------------------------------------

    def pending_deliveries(self) -> list[int]:
        """Message ids whose delivery is still ``pending`` (e.g. left by a crash)."""
        with self.db.transaction(write=False) as tx:
            return [int(r["message_id"]) for r in tx.all("deliveries_pending")]

    def delivery(self, message_id: int) -> dict[str, Any] | None:
        """One delivery row joined with its message, or None."""
        with self.db.transaction(write=False) as tx:
            return tx.one("delivery_get", {"message_id": message_id})

    def pending_delivery_rows(self) -> list[dict[str, Any]]:
        """Every pending delivery with its message, oldest first."""
        with self.db.transaction(write=False) as tx:
            return tx.all("deliveries_pending_rows")

    def record_attempt(self, message_id: int, error: str | None, next_at: float = 0.0) -> None:
        """Count one failed delivery attempt; it is not tried again before ``next_at``."""
        with self.db.transaction() as tx:
            tx.execute(
                "delivery_record_attempt",
                {"message_id": message_id, "error": error, "next_at": next_at, "now": utcnow_iso()},
            )

    def finish_deliveries(
        self, finished: Iterable[tuple[int, Literal["delivered", "failed"], str | None]]
    ) -> None:
        """Close pending deliveries (``(message_id, status, error)``, ``status`` being
        ``delivered`` or ``failed``) in one commit."""
        now = utcnow_iso()
        with self.db.transaction() as tx:
            for message_id, status, error in finished:
                tx.execute(
                    "delivery_finish",
                    {
                        "message_id": message_id,
                        "status": status,
                        "error": error,
                        "now": now,
                        "delivered_at": now if status == "delivered" else None,
                    },
                )
