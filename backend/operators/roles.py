"""Roles and the acting operator of a request.

viewer reads; operator also acts (approve, reject, take over, pause...); admin also manages
operators, budgets and policies. The server decides every request with :func:`at_least`;
the console only mirrors it. ``channel`` stands apart from that ladder: a customer channel's
token, which may post customer messages and nothing else (not even read).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Role = Literal["channel", "viewer", "operator", "admin"]
ROLES: tuple[Role, ...] = ("channel", "viewer", "operator", "admin")
LADDER: tuple[Role, ...] = ("viewer", "operator", "admin")
"""The operators' roles, each allowed what the ones before it are."""
CHANNEL: Role = "channel"
BOOTSTRAP_NAME = "admin"
"""The operator of the bootstrap token (``CADENCIA_TOKEN`` or the generated one)."""


def at_least(role: Role, needed: Role) -> bool:
    """Whether ``role`` may do what ``needed`` may (never for ``channel``, on no ladder)."""
    if role not in LADDER or needed not in LADDER:
        return False
    return LADDER.index(role) >= LADDER.index(needed)


@dataclass(frozen=True)
class Actor:
    """The operator a request acts as (``request.state.operator``).

    Attributes:
        name: recorded on every action the request takes.
        role: what the server lets the request do.
        bootstrap: the request holds the bootstrap token (the break-glass admin).
    """

    name: str
    role: Role
    bootstrap: bool = False
