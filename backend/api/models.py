"""Request bodies and path/query constraints of the API (pydantic, strict)."""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated, Any, Literal

from fastapi import Path, Query
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    field_validator,
    model_validator,
)

Operator = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._@ -]{0,63}$")]
Reason = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=2000)]
Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=4000)]

PrActionId = Annotated[str, Path(pattern=r"^[A-Za-z0-9_-]{1,64}$")]
Ident = Annotated[str, Path(pattern=r"^[A-Za-z0-9_-]{1,64}$")]
ConversationId = Annotated[str, Path(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")]
InterruptionId = Annotated[int, Path(ge=1, le=2**53)]
UncertainId = Annotated[str, Path(pattern=r"^[A-Za-z0-9_-]{1,400}$")]
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

    operator: Operator | None = None
    reason: Reason | None = None


class RejectBody(_Body):
    """A rejection needs a reason."""

    operator: Operator | None = None
    reason: Reason


class ClaimBody(_Body):
    """Who takes the conversation over."""

    operator: Operator | None = None


class ResolveBody(_Body):
    """Execute the tool once (through the ledger), deny, or hand back to the bot.

    ``reply`` (to the customer) is required for execute and deny; ``valor`` corrects the
    amount before executing (≤ the order's value) and needs a ``reason``.
    """

    operator: Operator | None = None
    action: Literal["execute", "deny", "hand_back"]
    reply: Text | None = None
    valor: Annotated[Decimal, Field(gt=0, max_digits=12, decimal_places=2)] | None = None
    reason: Reason | None = None

    @model_validator(mode="after")
    def _consistent(self) -> ResolveBody:
        if self.action != "hand_back" and self.reply is None:
            raise ValueError(f"reply is required for {self.action}")
        if self.valor is not None and (self.action != "execute" or self.reason is None):
            raise ValueError("valor is only for execute, and needs a reason")
        return self


class GrantBody(_Body):
    """Give the agent more attempts on the takeover's combination (audited)."""

    operator: Operator | None = None
    attempts: Annotated[int, Field(ge=1, le=10)]
    reason: Reason


class UncertainActionBody(_Body):
    """Who asks the gateway about an uncertain outcome."""

    operator: Operator | None = None


class SettleBody(_Body):
    """Settle an uncertain outcome by hand: what really happened, and why you know."""

    operator: Operator | None = None
    outcome: Literal["executado", "falhou"]
    reason: Reason


ClienteId = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")]


class MessageBody(_Body):
    """A customer message from the customer's channel."""

    text: Text
    cliente_id: ClienteId | None = Field(
        default=None,
        description="the customer writing (the ERP's clientes.id): required on a "
        "conversation's first message, which makes the conversation that customer's; a "
        "later message may omit it, and naming another customer is 409",
    )


class ReplyBody(_Body):
    """An operator's message to the customer of a takeover they hold."""

    operator: Operator | None = None
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

    operator: Operator | None = None


class PauseBody(_Body):
    """Who pauses an agent, and optionally why (shown on the roster)."""

    operator: Operator | None = None
    reason: Reason | None = None


class ResumeBody(_Body):
    """Who resumes a paused agent."""

    operator: Operator | None = None


class ExecutionBody(_Body):
    """Who activates execution."""

    operator: Operator | None = None
