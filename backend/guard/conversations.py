"""Conversation transcripts (customer, agent and operator messages)."""

from __future__ import annotations

from typing import Any, Literal

from backend.events import utcnow_iso
from backend.store.db import Database
from backend.store.uow import Work

Role = Literal["cliente", "agente", "operador"]


class Conversations:
    """Append and read messages of customer conversations."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def append(self, conversa_id: str, role: Role, text: str) -> int:
        """Append one message; returns its id."""
        with self.db.transaction() as tx:
            row = tx.one(
                "message_append",
                {"conversa_id": conversa_id, "role": role, "text": text, "ts": utcnow_iso()},
            )
        assert row is not None
        return int(row["id"])

    def transcript(self, conversa_id: str) -> list[dict[str, Any]]:
        """Every message of a conversation, oldest first."""
        with self.db.transaction(write=False) as tx:
            return tx.all("messages_for", {"conversa_id": conversa_id})

    def hand_back(self, conversa_id: str, *, tx: Work | None = None) -> None:
        """Return the conversation to the bot after a human resolved its takeover.

        Minimal placeholder added by helper "resolve" (issue 11) for the agreed signature:
        the conversation's ``bot``/``human`` state is helper "conv"'s, whose version of this
        method replaces this one at merge. Until then every conversation is ``bot``.
        """
        del conversa_id, tx
