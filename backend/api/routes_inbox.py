"""Inbox routes: everything waiting for a human, ``decide()`` → ask approvals, handoffs.

``GET /api/inbox`` is the one list (see :mod:`backend.inbox`); each item's ``actions``
name the routes below or the PR / takeover / uncertain routes. ``GET /api/approvals``
(the older grouped list) stays in routes_read.
"""

from __future__ import annotations

import asyncio
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query, Request, Response

from backend.api.auth import acting, require_token
from backend.api.models import Ident, OperatorBody, RejectBody
from backend.api.paging import (
    DEFAULT_LIMIT,
    PAGED,
    Cursor,
    PageLimit,
    Stamp,
    decode_cursor,
    next_page,
)
from backend.api.schemas import ERRORS, HandoffOut
from backend.api.schemas_inbox import (
    ApprovalDecisionOut,
    ApprovalOut,
    InboxItem,
    InboxKindOut,
)
from backend.inbox import urgency

router = APIRouter(prefix="/api", dependencies=[Depends(require_token)], responses=ERRORS)
ProjectFilter = Annotated[str | None, Query(pattern=r"^[A-Za-z0-9_-]{1,64}$")]
KindFilter = Annotated[InboxKindOut | None, Query()]
HandoffStatusFilter = Annotated[Literal["offered", "accepted", "declined"] | None, Query()]


def _b(request: Request) -> Any:
    return request.app.state.backend


def _inbox_key(item: Any) -> tuple[int, int, str, str]:
    breached_last, weight, since, ident = urgency(item)
    return (int(breached_last), weight, since, ident)


@router.get("/inbox", responses=PAGED)
async def inbox(
    request: Request,
    response: Response,
    project_id: ProjectFilter = None,
    kind: KindFilter = None,
    limit: PageLimit = DEFAULT_LIMIT,
    cursor: Cursor = None,
) -> list[InboxItem]:
    """Every item waiting for a human, most urgent first: past its SLA (``sla_state``
    ``breached``) before the rest, then by kind, then the oldest.

    The Inbox holds only what is still open (its size is the work waiting, not the
    history), so a page is cut from the ordered open items after the cursor's position.
    """
    after = decode_cursor("inbox", cursor, (int, int, str, str))
    items = await asyncio.to_thread(_b(request).inbox.items, project_id, kind)
    if after is not None:
        items = [i for i in items if _inbox_key(i) > after]
    page = next_page(request, response, items[: limit + 1], limit, "inbox", _inbox_key)
    return [InboxItem.model_validate(i.to_dict()) for i in page]


@router.get("/approvals/{approval_id}")
async def approval(request: Request, approval_id: Ident) -> ApprovalOut:
    """One approval: the proposed action, why ``decide()`` asked, and its decision."""
    got = await asyncio.to_thread(_b(request).store.approvals.get, approval_id)
    return ApprovalOut.model_validate(got.to_dict())


def _decision(done: Any) -> ApprovalDecisionOut:
    return ApprovalDecisionOut(
        approval=ApprovalOut.model_validate(done.approval.to_dict()),
        executed=done.executed,
        message=done.message,
        pr_id=done.pr_id,
    )


@router.post("/approvals/{approval_id}/approve")
async def approve_approval(
    request: Request, approval_id: Ident, body: OperatorBody
) -> ApprovalDecisionOut:
    """Approve and EXECUTE the pending action (e.g. open the ADR PR).

    ``executed`` is false and the approval ``failed`` when the action could not run (its
    error in ``result.error``); a dependency failing answers 502/503 and the approval stays
    pending. Deciding a non-pending approval is 409.
    """
    done = await asyncio.to_thread(
        _b(request).decisions.approve, approval_id, acting(request, body), body.reason
    )
    return _decision(done)


@router.post("/approvals/{approval_id}/reject")
async def reject_approval(
    request: Request, approval_id: Ident, body: RejectBody
) -> ApprovalDecisionOut:
    """Reject the pending action with a reason; the agent's next turn sees it."""
    done = await asyncio.to_thread(
        _b(request).decisions.reject, approval_id, acting(request, body), body.reason
    )
    return _decision(done)


@router.get("/handoffs", responses=PAGED)
async def handoffs(
    request: Request,
    response: Response,
    project_id: ProjectFilter = None,
    status: HandoffStatusFilter = None,
    limit: PageLimit = DEFAULT_LIMIT,
    cursor: Cursor = None,
) -> list[HandoffOut]:
    """Handoffs (of one project, in one status), oldest first."""
    after = decode_cursor("handoffs", cursor, (Stamp, str))
    got = await asyncio.to_thread(
        _b(request).store.handoffs_page, project_id, status, after, limit + 1
    )
    page = next_page(request, response, got, limit, "handoffs", lambda h: (h.offered_at, h.id))
    return [HandoffOut.model_validate(h.to_dict()) for h in page]


@router.post("/handoffs/{handoff_id}/decline")
async def decline_handoff(request: Request, handoff_id: Ident, body: OperatorBody) -> HandoffOut:
    """Decline an offered handoff (409 when it is not offered)."""
    got = await asyncio.to_thread(
        _b(request).store.decline_handoff, handoff_id, acting(request, body), body.reason
    )
    return HandoffOut.model_validate(got.to_dict())
