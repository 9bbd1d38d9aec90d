"""Conversation routes: customer messages, reading a conversation, operator replies."""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter, Depends, Request, Response

from backend.api.auth import acting, customer_channel, require_token
from backend.api.models import ConversationId, InterruptionId, MessageBody, ReplyBody
from backend.api.paging import (
    DEFAULT_LIMIT,
    PAGED,
    Cursor,
    PageLimit,
    decode_cursor,
    encode_cursor,
    set_next,
)
from backend.api.schemas import ERRORS, AttemptRecord
from backend.api.schemas_conversations import ConversationOut, CustomerReplyOut, MessageOut
from backend.events import TENTATIVA
from backend.exceptions import ConflictError, NotFoundError

router = APIRouter(prefix="/api", dependencies=[Depends(require_token)], responses=ERRORS)


def _b(request: Request) -> Any:
    return request.app.state.backend


@router.post("/conversations/{conversa_id}/messages")
@customer_channel
async def message(
    request: Request, conversa_id: ConversationId, body: MessageBody
) -> CustomerReplyOut:
    """A customer message: runs the customer-service agent's turn through the guard.

    The customer's channel posts it with a ``channel`` token; an operator's token may too,
    and the audit trail then records that operator as its author.

    The conversation belongs to the customer its first message names (``cliente_id``): the
    tools refuse every order or client of another one. A first message without
    ``cliente_id`` is 422, a message naming another customer 409; neither records anything.

    While an operator holds the conversation (``state: human``) the message is recorded
    and streamed, no model turn runs and ``reply`` is null. When a dependency fails during
    the turn (model provider, gateway, database) the answer is 502/503 and the customer is
    told only a fixed apology, never the error.
    """
    result = await _b(request).customer.handle_message(conversa_id, body.text, body.cliente_id)
    return CustomerReplyOut.model_validate(result)


ATTEMPTS_SHOWN = 1000
"""A conversation shows at most its newest attempts (each combination stops at the teto)."""


def _conversation(
    backend: Any, conversa_id: str, limit: int, before: int | None
) -> tuple[ConversationOut, bool]:
    conversations = backend.guard.conversations
    messages = conversations.newest_messages(conversa_id, limit + 1, before)
    if not messages and not conversations.known(conversa_id):
        raise NotFoundError(f"no conversation with id {conversa_id}", id=conversa_id)
    older, messages = len(messages) > limit, messages[-limit:]
    held = conversations.state(conversa_id)
    found = backend.events.of_session(conversa_id, TENTATIVA, newest=ATTEMPTS_SHOWN)
    out = ConversationOut(
        id=conversa_id,
        state=held.state,
        operator=held.operator,
        cliente_id=held.cliente_id,
        messages=[MessageOut.model_validate(m.to_dict()) for m in messages],
        attempts=[AttemptRecord.model_validate(e.payload) for e in found],
    )
    return out, older


@router.get("/conversations/{conversa_id}", responses=PAGED)
async def conversation(
    request: Request,
    response: Response,
    conversa_id: ConversationId,
    limit: PageLimit = DEFAULT_LIMIT,
    cursor: Cursor = None,
) -> ConversationOut:
    """Who holds the conversation, its newest ``limit`` messages (oldest first) with their
    delivery, and its newest tool attempts. When older messages exist, ``X-Next-Cursor``
    reads the page before them (the same object, older messages)."""
    route = f"conversation:{conversa_id}"
    before = decode_cursor(route, cursor, (int,))
    out, older = await asyncio.to_thread(
        _conversation, _b(request), conversa_id, limit, int(before[0]) if before else None
    )
    if older and out.messages:
        set_next(request, response, encode_cursor(route, (out.messages[0].id,)))
    return out


def _reply(backend: Any, ident: int, operator: str, text: str) -> MessageOut:
    item = backend.guard.interruptions.get(ident)
    if item.status != "claimed" or item.claimed_by != operator:
        raise ConflictError(
            f"interruption {ident} is {item.status}"
            + (f" by {item.claimed_by}" if item.claimed_by else "")
            + f"; only the operator who claimed it may reply (operator {operator})",
            id=ident,
        )
    said = backend.guard.conversations.say(
        item.conversa_id, "operador", text, agent=operator, held_by=operator
    )
    return MessageOut.model_validate(said.to_dict())


@router.post("/interruptions/{ident}/reply")
async def reply(request: Request, ident: InterruptionId, body: ReplyBody) -> MessageOut:
    """The claiming operator writes to the customer (any number of times while claimed).

    The message is recorded as ``operador``, emitted as ``conversa.mensagem`` and handed to
    the customer's channel in the background (its ``delivery`` starts ``pending``).
    """
    return await asyncio.to_thread(_reply, _b(request), ident, acting(request, body), body.text)
