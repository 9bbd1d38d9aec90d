"""Bearer-token auth: one token per backend, compared in constant time."""

from __future__ import annotations

import hmac

from fastapi import HTTPException, Request


def require_token(request: Request) -> None:
    """FastAPI dependency: 401 unless ``Authorization: Bearer <token>`` matches."""
    expected: str = request.app.state.backend.token
    header = request.headers.get("authorization", "")
    scheme, _, given = header.partition(" ")
    if scheme.lower() != "bearer" or not hmac.compare_digest(
        given.strip().encode(), expected.encode()
    ):
        raise HTTPException(
            401, "missing or wrong bearer token", headers={"WWW-Authenticate": "Bearer"}
        )
