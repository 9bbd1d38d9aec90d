"""Action routes: takeovers, conversations, projects, sessions, handoffs (PRs: routes_prs)."""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter, Depends, Request

from backend.api.auth import require_token
from backend.api.models import (
    AcceptBody,
    ClaimBody,
    ConversationId,
    ExecutionBody,
    HandoffBody,
    Ident,
    InterruptionId,
    MessageBody,
    ProjectBody,
    ResolveBody,
    SessionBody,
    TurnBody,
)
from backend.exceptions import ConflictError

router = APIRouter(prefix="/api", dependencies=[Depends(require_token)])


def _b(request: Request) -> Any:
    return request.app.state.backend


# -- takeovers ---------------------------------------------------------------------------


@router.get("/interruptions/{ident}")
async def interruption(request: Request, ident: InterruptionId) -> dict[str, Any]:
    """A takeover: transcript and the ledger's attempt history."""
    detail: dict[str, Any] = await asyncio.to_thread(_b(request).interruption_detail, ident)
    return detail


@router.post("/interruptions/{ident}/claim")
async def claim(request: Request, ident: InterruptionId, body: ClaimBody) -> dict[str, Any]:
    """Take the conversation over (one operator at a time)."""
    got = await asyncio.to_thread(_b(request).guard.interruptions.claim, ident, body.operator)
    return got.to_dict()


@router.post("/interruptions/{ident}/resolve")
async def resolve(request: Request, ident: InterruptionId, body: ResolveBody) -> dict[str, Any]:
    """Execute the tool once under the operator's authority (through the ledger) or deny."""
    result: dict[str, Any] = await _b(request).resolve_interruption(
        ident, body.operator, body.action, body.reply
    )
    return result


# -- conversations -----------------------------------------------------------------------


@router.post("/conversations/{conversa_id}/messages")
async def message(
    request: Request, conversa_id: ConversationId, body: MessageBody
) -> dict[str, Any]:
    """A customer message: runs the customer-service agent's turn through the guard."""
    result: dict[str, Any] = await _b(request).customer.handle_message(conversa_id, body.text)
    return result


# -- projects, sessions, handoffs --------------------------------------------------------


@router.post("/projects", status_code=201)
async def create_project(request: Request, body: ProjectBody) -> dict[str, Any]:
    """A new project with its own repository in the data dir."""
    from backend.demo.runner import create_project_repo

    project = await asyncio.to_thread(create_project_repo, _b(request), body.name, body.template)
    return dict(project.__dict__)


@router.get("/projects")
async def projects(request: Request) -> list[dict[str, Any]]:
    """Every project."""
    return [dict(p.__dict__) for p in await asyncio.to_thread(_b(request).store.projects)]


@router.post("/projects/{project_id}/sessions", status_code=201)
async def create_session(request: Request, project_id: Ident, body: SessionBody) -> dict[str, Any]:
    """A new session in a project."""
    session: dict[str, Any] = await asyncio.to_thread(
        _b(request).store.create_session, project_id, body.title
    )
    return session


@router.post(
    "/projects/{project_id}/sessions/{session_id}/agents/arquiteto/handoff-infra", status_code=201
)
async def offer_infra_handoff(
    request: Request, project_id: Ident, session_id: Ident, body: HandoffBody | None = None
) -> dict[str, Any]:
    """The Arquiteto's closing turn and the handoff offer to the Infra agent."""
    handoff = await _b(request).team.offer_infra_handoff(
        project_id, session_id, body.note if body else None
    )
    return handoff.to_dict()


@router.post("/projects/{project_id}/sessions/{session_id}/agents/{agent_id}/turns")
async def agent_turn(
    request: Request, project_id: Ident, session_id: Ident, agent_id: Ident, body: TurnBody
) -> dict[str, Any]:
    """One turn of a session-scoped agent."""
    result = await _b(request).team.agent_turn(project_id, session_id, agent_id, body.text)
    return {"text": result.text, "tool_results": result.tool_results, "steps": result.steps}


@router.post("/handoffs/{handoff_id}/accept")
async def accept_handoff(request: Request, handoff_id: Ident, body: AcceptBody) -> dict[str, Any]:
    """Accept a handoff (to infra: seeds its autonomy)."""
    handoff = await _b(request).team.accept_handoff(handoff_id, body.operator)
    return handoff.to_dict()


@router.post("/projects/{project_id}/execution")
async def activate_execution(
    request: Request, project_id: Ident, body: ExecutionBody
) -> dict[str, Any]:
    """Start execution: one dev-<module> per module; each gets its demo task."""
    from backend.infra.dev_tasks import seed_demo_tasks

    backend = _b(request)
    project = await asyncio.to_thread(backend.store.activate_execution, project_id)
    tasks = await asyncio.to_thread(seed_demo_tasks, backend.dev_tasks, project)
    if not tasks:
        raise ConflictError("no tasks were created")
    return {
        "project_id": project.id,
        "tasks": [t.to_dict() for t in tasks],
        "operator": body.operator,
    }
