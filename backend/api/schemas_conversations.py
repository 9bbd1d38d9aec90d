"""Response models of the conversation routes (``/api/conversations``, takeover replies)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from backend.api.schemas import AttemptRecord
from backend.guard.conversations import Role, State

DeliveryStatus = Literal["pending", "delivered", "failed"]


class _Out(BaseModel):
    model_config = ConfigDict(extra="ignore")


class DeliveryOut(_Out):
    """How an outbound message's delivery to the customer's channel stands."""

    status: DeliveryStatus
    attempts: int = Field(description="requests made to the channel so far")
    last_error: str | None = Field(description="the last failed attempt's error")
    delivered_at: str | None


class MessageOut(_Out):
    """One message of a conversation; inbound customer messages have no ``delivery``."""

    id: int
    autor: Role
    texto: str
    ts: str
    delivery: DeliveryOut | None


class ConversationOut(_Out):
    """``GET /api/conversations/{id}``: who holds it, its messages and the tool attempts."""

    id: str
    state: State = Field(description="bot: the agent answers; human: an operator holds it")
    operator: str | None = Field(description="who holds it while human")
    cliente_id: str | None = Field(
        default=None, description="the customer it belongs to (named by its first message)"
    )
    messages: list[MessageOut]
    attempts: list[AttemptRecord]


class CustomerReplyOut(_Out):
    """``POST /api/conversations/{id}/messages``: the agent's reply and this turn's attempts.

    While an operator holds the conversation (``state: human``), or has paused the
    customer-service agent (``state: paused``), no model turn runs: ``reply`` is None and
    ``attempts`` is empty; the message is recorded either way.
    """

    state: State | Literal["paused"]
    operator: str | None = None
    reply: str | None
    attempts: list[AttemptRecord]
