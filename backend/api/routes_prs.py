"""PR routes for every kind (infra, dev, adr): list the open ones; read a PR, its files and
findings; approve, reject, close, unblock, rerun (its gates, when their job is stuck).

``/api/prs/{id}`` is the route; ``/api/infra-artifacts/{pr_action_id}`` is kept as an alias
of the same handlers (same response shape as before, plus ``kind``) for the console and
users' scripts written against it. Every action goes to the backend's one PR pipeline, so
a dev task PR is approved exactly like an infra PR.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from functools import partial
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query, Request, Response

from backend.api.auth import acting, principal, require_token
from backend.api.models import OperatorBody, PrActionId, RejectBody
from backend.api.paging import (
    DEFAULT_LIMIT,
    PAGED,
    Cursor,
    PageLimit,
    Stamp,
    decode_cursor,
    next_page,
)
from backend.api.schemas import ERRORS
from backend.api.schemas_prs import (
    FindingOut,
    PrFilesOut,
    PrFindingsOut,
    PullRequestDetail,
    PullRequestOut,
    TimelineItem,
    WaiverBody,
    WaiverOut,
)
from backend.prs.actions import PrPipeline
from backend.prs.waivers import waive

router = APIRouter(prefix="/api", dependencies=[Depends(require_token)], responses=ERRORS)
ProjectFilter = Annotated[str | None, Query(pattern=r"^[A-Za-z0-9_-]{1,64}$")]
PrKindFilter = Annotated[Literal["infra", "dev", "adr"] | None, Query()]
_PREFIXES = ("/prs/{pr_action_id}", "/infra-artifacts/{pr_action_id}")


def _pipeline(request: Request) -> PrPipeline:
    pipeline: PrPipeline = request.app.state.backend.pipeline
    return pipeline


async def pr_detail(request: Request, pr_action_id: PrActionId) -> PullRequestDetail:
    """A PR of any kind with its gate timeline."""
    pipeline = _pipeline(request)
    pr = await asyncio.to_thread(pipeline.get, pr_action_id)
    timeline = await asyncio.to_thread(pipeline.timeline, pr_action_id)
    return PullRequestDetail(
        **PullRequestOut.of(pr).model_dump(), timeline=[TimelineItem.of(h) for h in timeline]
    )


async def pr_files(request: Request, pr_action_id: PrActionId) -> PrFilesOut:
    """The PR's files at its head and the diff against main."""
    payload = await asyncio.to_thread(_pipeline(request).files, pr_action_id)
    return PrFilesOut.model_validate(payload)


async def pr_findings(request: Request, pr_action_id: PrActionId) -> PrFindingsOut:
    """The latest gate findings of the PR."""
    found = await asyncio.to_thread(_pipeline(request).findings, pr_action_id)
    return PrFindingsOut(findings=[FindingOut.model_validate(f) for f in found])


async def approve(request: Request, pr_action_id: PrActionId, body: OperatorBody) -> PullRequestOut:
    """Approve the PR: its last required approval, each from another person (the token's
    operator, whatever name the bootstrap token acts in), merges it into main (only from
    ``awaiting_human``; one operator wins)."""
    pr = await asyncio.to_thread(
        partial(_pipeline(request).approve, principal=principal(request)),
        pr_action_id,
        acting(request, body),
        body.reason,
    )
    return PullRequestOut.of(pr)


async def reject(request: Request, pr_action_id: PrActionId, body: RejectBody) -> PullRequestOut:
    """Request changes with a reason; the author corrects on the same PR."""
    pr = await asyncio.to_thread(
        _pipeline(request).reject, pr_action_id, acting(request, body), body.reason
    )
    return PullRequestOut.of(pr)


async def close(request: Request, pr_action_id: PrActionId, body: OperatorBody) -> PullRequestOut:
    """Close the PR without merging."""
    pr = await asyncio.to_thread(
        _pipeline(request).close, pr_action_id, acting(request, body), body.reason
    )
    return PullRequestOut.of(pr)


async def unblock(request: Request, pr_action_id: PrActionId, body: OperatorBody) -> PullRequestOut:
    """Give a blocked PR another round of corrections."""
    pr = await asyncio.to_thread(
        _pipeline(request).unblock, pr_action_id, acting(request, body), body.reason
    )
    return PullRequestOut.of(pr)


async def rerun(request: Request, pr_action_id: PrActionId, body: OperatorBody) -> PullRequestOut:
    """Queue the gates of a PR waiting in a gate again (a stuck gate job); 409 otherwise."""
    pr = await asyncio.to_thread(
        _pipeline(request).rerun, pr_action_id, acting(request, body), body.reason
    )
    return PullRequestOut.of(pr)


async def add_waiver(request: Request, pr_action_id: PrActionId, body: WaiverBody) -> WaiverOut:
    """An operator waives one finding of this PR with a reason (never the PR itself).

    404: no such PR or finding; 409: the PR is merged/closed or the finding already waived.
    """
    operator = acting(request, body)
    done = await asyncio.to_thread(
        waive, _pipeline(request), pr_action_id, body.finding, operator, body.reason
    )
    w = done.waiver
    return WaiverOut(
        **dataclasses.asdict(w),
        note=w.note,
        reevaluated=done.reevaluated,
        pr=PullRequestOut.of(done.pr),
    )


async def open_prs(
    request: Request,
    response: Response,
    project_id: ProjectFilter = None,
    kind: PrKindFilter = None,
    limit: PageLimit = DEFAULT_LIMIT,
    cursor: Cursor = None,
) -> list[PullRequestOut]:
    """Every PR not merged or closed (infra, dev and ADR alike), oldest first."""
    after = decode_cursor("prs", cursor, (Stamp, str))
    prs = await asyncio.to_thread(
        _pipeline(request).prs.in_review_page, project_id, kind, after, limit + 1
    )
    page = next_page(request, response, prs, limit, "prs", lambda p: (p.created_at, p.id))
    return [PullRequestOut.of(pr) for pr in page]


router.add_api_route(
    "/prs", open_prs, methods=["GET"], response_model=list[PullRequestOut], responses=PAGED
)
router.add_api_route(
    "/prs/{pr_action_id}/waivers",
    add_waiver,
    methods=["POST"],
    response_model=WaiverOut,
    status_code=201,
)


_ROUTES: tuple[tuple[str, str, Callable[..., Any], type[Any]], ...] = (
    ("GET", "", pr_detail, PullRequestDetail),
    ("GET", "/files", pr_files, PrFilesOut),
    ("GET", "/findings", pr_findings, PrFindingsOut),
    ("POST", "/approve", approve, PullRequestOut),
    ("POST", "/reject", reject, PullRequestOut),
    ("POST", "/close", close, PullRequestOut),
    ("POST", "/unblock", unblock, PullRequestOut),
    ("POST", "/rerun", rerun, PullRequestOut),
)


def _register() -> None:
    for prefix in _PREFIXES:
        alias = "_infra_alias" if prefix.startswith("/infra-artifacts") else ""
        for method, suffix, handler, model in _ROUTES:
            router.add_api_route(
                prefix + suffix,
                handler,
                methods=[method],
                response_model=model,
                name=f"{handler.__name__}{alias}",
            )


_register()
