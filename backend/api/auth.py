"""Bearer auth: the token names the operator a request acts as, and the server checks its role.

Two kinds of token: the bootstrap token (``CADENCIA_TOKEN`` or the generated one; operator
``admin``, role admin) and operator accounts' tokens ``cad_<id>.<secret>`` (``cadencia
operators add``), looked up by id and checked against a salted hash, both compared in
constant time. :func:`require_token` guards every ``/api`` router, fail-closed;
:func:`require_role` asks for more. Whose name an action records is :func:`acting`'s rule;
what counts people (a PR's approvals) counts :func:`principal`.
"""

from __future__ import annotations

import asyncio
import hmac
from collections.abc import Callable
from typing import Any, TypeVar

from fastapi import HTTPException, Request

from backend.exceptions import ForbiddenError
from backend.operators.roles import BOOTSTRAP_NAME, CHANNEL, Actor, Role, at_least

READS = frozenset({"GET", "HEAD", "OPTIONS"})
_F = TypeVar("_F", bound=Callable[..., Any])

CHANNEL_ROUTES: set[Callable[..., Any]] = set()
"""Route endpoints a customer channel calls (posting a customer message)."""


def customer_channel(endpoint: _F) -> _F:
    """Mark a route's endpoint as one a ``channel`` token may call (apply below
    ``@router.post``); a channel's request there is the customer's, not an operator's
    action, while an operator's request there is audited as that operator's."""
    CHANNEL_ROUTES.add(endpoint)
    return endpoint


def channel_call(request: Request) -> bool:
    """Whether the request runs a route marked :func:`customer_channel`."""
    return getattr(request.scope.get("route"), "endpoint", None) in CHANNEL_ROUTES


def _unauthorized(why: str) -> HTTPException:
    return HTTPException(401, why, headers={"WWW-Authenticate": "Bearer"})


async def authenticate(request: Request) -> Actor:
    """The operator the request's bearer token names (cached on the request).

    Raises:
        HTTPException: 401, no token, an unknown or revoked one.
    """
    known = getattr(request.state, "operator", None)
    if isinstance(known, Actor):
        return known
    header = request.headers.get("authorization", "")
    scheme, _, given = header.partition(" ")
    given = given.strip()
    if scheme.lower() != "bearer" or not given:
        raise _unauthorized("missing or wrong bearer token")
    backend = request.app.state.backend
    expected: str = backend.token
    if hmac.compare_digest(given.encode(), expected.encode()):
        actor = Actor(BOOTSTRAP_NAME, "admin", bootstrap=True)
    else:
        found = await asyncio.to_thread(backend.operators.authenticate, given)
        if found is None:
            raise _unauthorized("missing, wrong or revoked bearer token")
        actor = found
    request.state.operator = actor
    return actor


async def still_authenticated(request: Request) -> bool:
    """Whether the request's token is accepted now, read afresh: a long-lived response
    (the event stream) asks again while it runs, so a revoked token stops there too."""
    request.state.operator = None
    try:
        await authenticate(request)
    except HTTPException:
        return False
    return True


def _refuse(actor: Actor, needed: Role, what: str) -> ForbiddenError:
    return ForbiddenError(
        f"operator {actor.name} is a {actor.role}; {what} needs the {needed} role",
        operator=actor.name,
        role=actor.role,
    )


async def require_token(request: Request) -> Actor:
    """FastAPI dependency of every ``/api`` router: authenticate, then a viewer only reads
    and a channel only posts customer messages.

    It puts the :class:`Actor` in ``request.state.operator`` and refuses, fail-closed, any
    non-read method to a viewer and every route but the ones marked :func:`customer_channel`
    to a ``channel`` token; a route needing more uses :func:`require_role`.

    Raises:
        HTTPException: 401 (see :func:`authenticate`).
        ForbiddenError: 403, a viewer sending anything but a read, a channel calling
            anything but a :func:`customer_channel` route.
    """
    actor = await authenticate(request)
    if actor.role == CHANNEL:
        if not channel_call(request):
            raise ForbiddenError(
                f"{actor.name} is a customer channel: it may only post customer messages, "
                f"not {request.method} {request.url.path}",
                operator=actor.name,
                role=actor.role,
            )
        return actor
    if request.method not in READS and not at_least(actor.role, "operator"):
        raise _refuse(actor, "operator", f"{request.method} {request.url.path}")
    return actor


def require_role(role: Role) -> Callable[[Request], Any]:
    """A dependency refusing (403) an operator below ``role``; e.g.
    ``dependencies=[Depends(require_role("admin"))]`` on a route that manages operators."""

    async def dependency(request: Request) -> Actor:
        actor = await require_token(request)
        if not at_least(actor.role, role):
            raise _refuse(actor, role, f"{request.method} {request.url.path}")
        return actor

    dependency.__name__ = f"require_{role}"
    return dependency


def principal(request: Request) -> str:
    """Who the request's token authenticates (``admin`` for the bootstrap token, whatever
    name it acts in): the one person an approval counts."""
    actor: Actor = request.state.operator
    return actor.name


def acting(request: Request, body: Any) -> str:
    """The operator name an action records, noted for the audit.

    An account's own name, whatever the body says (a body naming someone else is ignored, and
    the audit trail notes it); the bootstrap admin may act in the name the body gives (the
    break-glass account that existing scripts and the console use), and the audit trail
    records it as ``admin`` acting ``as`` that name, but never in an operator account's name
    (403): that person acts with their own token. What counts people (a PR's approvals)
    counts :func:`principal`, the token's own operator, whatever name it acts in.

    Args:
        body: the request body; its ``operator`` (optional) and ``reason`` (if any) are read.

    Raises:
        ForbiddenError: the bootstrap token names an operator account.
    """
    actor: Actor = request.state.operator
    named: str | None = getattr(body, "operator", None)
    request.state.audit_reason = getattr(body, "reason", None)
    if actor.bootstrap:
        if named and named != actor.name:
            request.state.audit_as = named
            # A rare path (break-glass), so one indexed read on the loop is fine here.
            if request.app.state.backend.operators.named(named):
                raise ForbiddenError(
                    f"the bootstrap token cannot act as {named}: {named} is an operator "
                    "account and acts with its own token",
                    operator=named,
                )
            return named
        return actor.name
    if named and named != actor.name:
        request.state.audit_body_operator = named
    return actor.name
