"""Request bodies and path/query constraints of the API (pydantic, strict)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import Path, Query
from pydantic import BaseModel, ConfigDict, StringConstraints, field_validator

Operator = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._@ -]{0,63}$")]
Reason = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=2000)]
Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=4000)]

PrActionId = Annotated[str, Path(pattern=r"^[A-Za-z0-9_-]{1,64}$")]
Ident = Annotated[str, Path(pattern=r"^[A-Za-z0-9_-]{1,64}$")]
ConversationId = Annotated[str, Path(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")]
InterruptionId = Annotated[int, Path(ge=1, le=2**53)]
After = Annotated[int, Query(ge=0, le=2**53)]
Limit = Annotated[int, Query(ge=1, le=1000)]


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")

    @field_validator("*", mode="after")
    @classmethod
    def _no_nul(cls, value: Any) -> Any:
        # PostgreSQL text cannot hold U+0000: refuse it here (422) instead of letting the
        # database refuse it later, which would look like our failure (503).
        if isinstance(value, str) and "\x00" in value:
            raise ValueError("text must not contain NUL (\\x00) characters")
        return value


class OperatorBody(_Body):
    """Who acts (recorded on every action) and, optionally, why."""

    operator: Operator
    reason: Reason | None = None


class RejectBody(_Body):
    """A rejection needs a reason."""

    operator: Operator
    reason: Reason


class ClaimBody(_Body):
    """Who takes the conversation over."""

    operator: Operator


class ResolveBody(_Body):
    """Execute the tool once (through the ledger) or deny, with a reply to the customer."""

    operator: Operator
    action: Literal["execute", "deny"]
    reply: Text


class MessageBody(_Body):
    """A customer message."""

    text: Text


class ReplyBody(_Body):
    """An operator's message to the customer of a takeover they hold."""

    operator: Operator
    text: Text


class ProjectBody(_Body):
    """A new project; its repository is created in the data dir (``template`` seeds it)."""

    name: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=100)]
    template: Literal["empty", "demo"] = "empty"


class SessionBody(_Body):
    """A new session."""

    title: Annotated[
        str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)
    ] = "sessão"


class TurnBody(_Body):
    """A message to a session-scoped agent."""

    text: Text


class HandoffBody(_Body):
    """The Arquiteto's handoff offer note."""

    note: Annotated[str, StringConstraints(max_length=2000)] | None = None


class AcceptBody(_Body):
    """Who accepts a handoff."""

    operator: Operator


class ExecutionBody(_Body):
    """Who activates execution."""

    operator: Operator
