"""Operators: named accounts with a role, their tokens, and who may do what.

- :mod:`backend.operators.roles` — the roles (viewer < operator < admin) and :class:`Actor`,
  the operator a request acts as;
- :mod:`backend.operators.tokens` — token format ``cad_<id>.<secret>``, salted scrypt hashes;
- :mod:`backend.operators.accounts` — the ``operators`` table: add, list, revoke, authenticate.

Separation of duties on PRs (who may approve one) lives with the PRs: :mod:`backend.prs.separation`.
"""

from __future__ import annotations

from backend.operators.roles import ROLES, Actor, Role, at_least

__all__ = ["ROLES", "Actor", "Role", "at_least"]
