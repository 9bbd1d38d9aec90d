"""Conversation transcripts (customer, agent and operator messages)."""

from __future__ import annotations

from typing import Any, Literal

from backend.events import utcnow_iso
from backend.store.db import Database

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
