"""Roles and the acting operator of a request.

viewer reads; operator also acts (approve, reject, take over, pause...); admin also manages
operators, budgets and policies. The server decides every request with :func:`at_least`;
the console only mirrors it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Role = Literal["viewer", "operator", "admin"]
ROLES: tuple[Role, ...] = ("viewer", "operator", "admin")
BOOTSTRAP_NAME = "admin"
"""The operator of the bootstrap token (``CADENCIA_TOKEN`` or the generated one)."""


def at_least(role: Role, needed: Role) -> bool:
    """Whether ``role`` may do what ``needed`` may."""
    return ROLES.index(role) >= ROLES.index(needed)


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
