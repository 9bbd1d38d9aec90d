"""Operator tokens: ``cad_<id>.<secret>``; only a salted scrypt hash of the secret is stored.

The id selects the account's row (one primary-key read per request, never a scan over every
hash); the secret is compared in constant time against the stored hash. scrypt is slow on
purpose (a stolen table does not give the secrets away); a verified token is remembered in
memory by its SHA-256 so only the first request of a process pays for it — the row (and its
revocation) is still read on every request. A token whose id has no row costs the same
scrypt (:func:`matches_nothing`), so the time of a refusal does not tell which ids exist.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass

PREFIX = "cad_"
_SHAPE = re.compile(r"^cad_([a-z0-9]{12})\.([A-Za-z0-9_-]{32,128})$")
# scrypt: 16 MiB, ~50 ms on these machines; RFC 7914's interactive parameters.
_N, _R, _P = 2**14, 8, 1
_NO_SALT = secrets.token_hex(16)
"""The salt an unknown id's secret is hashed with (random per process: it matches nothing)."""


@dataclass(frozen=True)
class NewToken:
    """A freshly minted token: shown once, then only ``salt`` and ``secret_hash`` remain."""

    id: str
    token: str
    salt: str
    secret_hash: str


def mint() -> NewToken:
    """A new random token with its salt and hash."""
    ident = secrets.token_hex(6)
    secret = secrets.token_urlsafe(32)
    salt = secrets.token_hex(16)
    return NewToken(ident, f"{PREFIX}{ident}.{secret}", salt, hash_secret(secret, salt))


def split(token: str) -> tuple[str, str] | None:
    """``(id, secret)`` of an operator token, or None for anything else (the bootstrap token)."""
    found = _SHAPE.match(token)
    return (found.group(1), found.group(2)) if found else None


def hash_secret(secret: str, salt: str) -> str:
    """The stored form of ``secret`` (hex scrypt)."""
    digest = hashlib.scrypt(
        secret.encode(), salt=bytes.fromhex(salt), n=_N, r=_R, p=_P, maxmem=64 * 2**20, dklen=32
    )
    return digest.hex()


def matches(secret: str, salt: str, secret_hash: str) -> bool:
    """Whether ``secret`` is the one ``secret_hash`` was made from (constant time)."""
    return hmac.compare_digest(hash_secret(secret, salt), secret_hash)


def matches_nothing(secret: str) -> bool:
    """False, after the same work as :func:`matches` — for a token whose id has no live row."""
    hmac.compare_digest(hash_secret(secret, _NO_SALT), "0" * 64)
    return False
