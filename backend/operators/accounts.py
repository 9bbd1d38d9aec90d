"""The ``operators`` table (migration 0016): add, list, revoke, and authenticate a token."""

from __future__ import annotations

import hashlib
import re
import threading
from dataclasses import dataclass
from typing import Any, cast

from backend.clock import utcnow_iso
from backend.exceptions import ConflictError, NotFoundError, ValidationError
from backend.operators import tokens
from backend.operators.roles import BOOTSTRAP_NAME, ROLES, Actor, Role
from backend.store.db import Database, Row

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$")
"""An operator's name: what every action records (no spaces, so ``--operator`` args stay simple)."""


@dataclass(frozen=True)
class OperatorAccount:
    """One account as listed (never its token)."""

    id: str
    name: str
    role: Role
    created_at: str
    revoked_at: str | None

    @classmethod
    def from_row(cls, row: Row) -> OperatorAccount:
        revoked = row["revoked_at"]
        return cls(
            id=str(row["id"]),
            name=str(row["name"]),
            role=cast(Role, row["role"]),
            created_at=str(row["created_at"]),
            revoked_at=str(revoked) if revoked is not None else None,
        )

    def to_dict(self) -> dict[str, Any]:
        """The account as ``operators list --json`` prints it."""
        return {
            "id": self.id,
            "name": self.name,
            "role": self.role,
            "created_at": self.created_at,
            "revoked_at": self.revoked_at,
        }


class Operators:
    """Named operator accounts; each token is ``cad_<id>.<secret>`` (see :mod:`tokens`)."""

    def __init__(self, db: Database) -> None:
        self.db = db
        # sha256(token) -> the stored hash it was verified against: scrypt once per process.
        self._verified: dict[str, str] = {}
        self._lock = threading.Lock()

    def add(self, name: str, role: str) -> tuple[OperatorAccount, str]:
        """A new account and its token (returned once; only its hash is stored).

        Raises:
            ValidationError: a bad name or role, or the bootstrap admin's name.
            ConflictError: a live account already has the name.
        """
        if not NAME.match(name):
            raise ValidationError(
                f"operator name {name!r} must be 1-64 letters, digits or ._@- "
                "(starting with a letter or digit)"
            )
        if name == BOOTSTRAP_NAME:
            raise ValidationError(f"{BOOTSTRAP_NAME!r} is the bootstrap token's operator")
        if role not in ROLES:
            raise ValidationError(f"role must be one of {', '.join(ROLES)}, not {role!r}")
        new = tokens.mint()
        now = utcnow_iso()
        with self.db.transaction() as tx:
            if tx.one("operator_live_by_name", {"name": name}) is not None:
                raise ConflictError(f"operator {name} already exists (revoke it first)", name=name)
            tx.execute(
                "operator_insert",
                {
                    "id": new.id,
                    "name": name,
                    "role": role,
                    "salt": new.salt,
                    "secret_hash": new.secret_hash,
                    "now": now,
                },
            )
            row = tx.one("operator_by_id", {"id": new.id})
        assert row is not None
        return OperatorAccount.from_row(row), new.token

    def list(self) -> list[OperatorAccount]:
        """Every account, revoked ones included, by name."""
        with self.db.transaction(write=False) as tx:
            return [OperatorAccount.from_row(r) for r in tx.all("operators_all")]

    def named(self, name: str) -> bool:
        """Whether an account (live or revoked) has ever been named ``name``."""
        with self.db.transaction(write=False) as tx:
            return tx.one("operator_named", {"name": name}) is not None

    def revoke(self, name: str) -> None:
        """Revoke the live account ``name``: its token is refused from the next request on.

        Raises:
            NotFoundError: no live account has that name.
        """
        with self.db.transaction() as tx:
            changed = tx.execute("operator_revoke", {"name": name, "now": utcnow_iso()})
        if changed != 1:
            raise NotFoundError(f"no live operator named {name}", name=name)

    def authenticate(self, token: str) -> Actor | None:
        """The operator ``token`` belongs to, or None (unknown, wrong secret, revoked).

        An unknown or revoked id costs one scrypt, as a wrong secret does: how long a
        refusal takes says nothing about which ids exist.
        """
        parts = tokens.split(token)
        if parts is None:
            return None
        ident, secret = parts
        with self.db.transaction(write=False) as tx:
            row = tx.one("operator_by_id", {"id": ident})
        if row is None or row["revoked_at"] is not None:
            tokens.matches_nothing(secret)
            return None
        stored = str(row["secret_hash"])
        key = hashlib.sha256(token.encode()).hexdigest()
        with self._lock:
            known = self._verified.get(key) == stored
        if not known:
            if not tokens.matches(secret, str(row["salt"]), stored):
                return None
            with self._lock:
                self._verified[key] = stored
        return Actor(name=str(row["name"]), role=cast(Role, row["role"]))
