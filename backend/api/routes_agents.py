"""Agent routes: the operators' off switch (pause / resume) and turn inspection."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request, Response

from backend.agents.team import CUSTOMER_SERVICE
from backend.agents.turns import recent_turns
from backend.api.auth import acting, require_token
from backend.api.models import Ident, PauseBody, ResumeBody
from backend.api.paging import PAGED, Cursor, decode_cursor, next_page
from backend.api.schemas import ERRORS
from backend.api.schemas_agents import AgentPauseOut, AgentTurnRecordOut

router = APIRouter(prefix="/api", dependencies=[Depends(require_token)], responses=ERRORS)

TurnLimit = Annotated[int, Query(ge=1, le=200)]
OptionalIdent = Annotated[str | None, Query(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")]


def _b(request: Request) -> Any:
    return request.app.state.backend


@router.post("/agents/{agent_id}/pause")
async def pause(request: Request, agent_id: Ident, body: PauseBody) -> AgentPauseOut:
    """Pause an agent: it runs no new turn until resumed (a turn already running finishes).

    The pause covers the agent id in **every project** and survives a restart. A turn
    route then answers 409 ``agent_paused``; a customer message to a paused
    ``atendimento`` is recorded and answered ``{"state": "paused", "reply": null}``.
    Unknown agent: 404; already paused, or a deterministic gate (qa, secops): 409.
    """
    got = await asyncio.to_thread(
        _b(request).pauses.pause, agent_id, acting(request, body), body.reason
    )
    return AgentPauseOut.model_validate(got.to_dict())


@router.post("/agents/{agent_id}/resume")
async def resume(request: Request, agent_id: Ident, body: ResumeBody) -> AgentPauseOut:
    """Resume a paused agent (in every project). Unknown agent: 404; not paused: 409.
    Resuming ``atendimento`` answers the customers whose messages it left unanswered."""
    backend = _b(request)
    got = await asyncio.to_thread(backend.pauses.resume, agent_id, acting(request, body))
    if agent_id == CUSTOMER_SERVICE:  # the customers it left unanswered are answered now
        backend.spawn(backend.customer.answer_waiting(), "answer-waiting-customers")
    return AgentPauseOut.model_validate(got.to_dict())


@router.get("/agents/{agent_id}/turns", responses=PAGED)
async def turns(
    request: Request,
    response: Response,
    agent_id: Ident,
    project_id: OptionalIdent = None,
    session_id: OptionalIdent = None,
    limit: TurnLimit = 20,
    cursor: Cursor = None,
) -> list[AgentTurnRecordOut]:
    """An agent's recent turns, newest first: the messages, tool calls with their
    arguments, tool results, tokens and model of each (from its ``agent.turn`` events).

    ``session_id`` is a session, or a customer conversation for ``atendimento``. A turn
    holds a whole conversation step, so pages are small (default 20, at most 200); the
    older turns follow ``X-Next-Cursor``.
    """
    route = f"turns:{agent_id}"
    before = decode_cursor(route, cursor, (int,))
    got = await asyncio.to_thread(
        recent_turns,
        _b(request).events,
        agent_id,
        project_id=project_id,
        session_id=session_id,
        limit=limit + 1,
        before=int(before[0]) if before else None,
    )
    page = next_page(request, response, got, limit, route, lambda t: (t["event_id"],))
    return [AgentTurnRecordOut.model_validate(t) for t in page]
