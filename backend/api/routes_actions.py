"""Action routes: takeovers, projects, sessions, handoffs (PRs: routes_prs; conversations and
operator replies: routes_conversations)."""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter, Depends, Request

from backend.api.auth import require_token
from backend.api.models import (
    AcceptBody,
    ClaimBody,
    ExecutionBody,
    HandoffBody,
    Ident,
    InterruptionId,
    ProjectBody,
    ResolveBody,
    SessionBody,
    TurnBody,
)
from backend.api.schemas import (
    ERRORS,
    AgentTurnOut,
    AttemptRecord,
    ExecutionOut,
    HandoffOut,
    InterruptionDetailOut,
    InterruptionItem,
    ProjectOut,
    ResolveOut,
    SessionOut,
)
from backend.exceptions import ConflictError

router = APIRouter(prefix="/api", dependencies=[Depends(require_token)], responses=ERRORS)


def _b(request: Request) -> Any:
    return request.app.state.backend


# -- takeovers ---------------------------------------------------------------------------


@router.get("/interruptions/{ident}")
async def interruption(request: Request, ident: InterruptionId) -> InterruptionDetailOut:
    """A takeover: transcript and the ledger's attempt history."""
    story = await asyncio.to_thread(_b(request).interruption_detail, ident)
    item = story.interruption
    return InterruptionDetailOut.model_validate(
        {
            **InterruptionItem.of(item).model_dump(),
            "transcript": story.transcript,
            "attempts": story.attempts,
        }
    )


@router.post("/interruptions/{ident}/claim")
async def claim(request: Request, ident: InterruptionId, body: ClaimBody) -> InterruptionItem:
    """Take the conversation over (one operator at a time)."""
    got = await asyncio.to_thread(_b(request).guard.interruptions.claim, ident, body.operator)
    return InterruptionItem.of(got)


@router.post("/interruptions/{ident}/resolve")
async def resolve(request: Request, ident: InterruptionId, body: ResolveBody) -> ResolveOut:
    """Execute the tool once under the operator's authority (through the ledger) or deny.

    A dependency failing while the tool runs (e.g. the gateway is down) answers 502/503;
    the takeover stays claimed and the customer gets no reply, so the operator can retry.
    """
    closed, attempt = await _b(request).resolve_interruption(
        ident, body.operator, body.action, body.reply
    )
    return ResolveOut(
        interruption=InterruptionItem.of(closed),
        attempt=AttemptRecord.model_validate(attempt) if attempt is not None else None,
    )


# -- projects, sessions, handoffs --------------------------------------------------------


@router.post("/projects", status_code=201)
async def create_project(request: Request, body: ProjectBody) -> ProjectOut:
    """A new project with its own repository in the data dir."""
    from backend.demo.runner import create_project_repo

    project = await asyncio.to_thread(create_project_repo, _b(request), body.name, body.template)
    return ProjectOut.model_validate(project, from_attributes=True)


@router.get("/projects")
async def projects(request: Request) -> list[ProjectOut]:
    """Every project."""
    got = await asyncio.to_thread(_b(request).store.projects)
    return [ProjectOut.model_validate(p, from_attributes=True) for p in got]


@router.post("/projects/{project_id}/sessions", status_code=201)
async def create_session(request: Request, project_id: Ident, body: SessionBody) -> SessionOut:
    """A new session in a project."""
    session = await asyncio.to_thread(_b(request).store.create_session, project_id, body.title)
    return SessionOut.model_validate(session)


@router.post(
    "/projects/{project_id}/sessions/{session_id}/agents/arquiteto/handoff-infra", status_code=201
)
async def offer_infra_handoff(
    request: Request, project_id: Ident, session_id: Ident, body: HandoffBody | None = None
) -> HandoffOut:
    """The Arquiteto's closing turn and the handoff offer to the Infra agent."""
    handoff = await _b(request).team.offer_infra_handoff(
        project_id, session_id, body.note if body else None
    )
    return HandoffOut.model_validate(handoff.to_dict())


@router.post("/projects/{project_id}/sessions/{session_id}/agents/{agent_id}/turns")
async def agent_turn(
    request: Request, project_id: Ident, session_id: Ident, agent_id: Ident, body: TurnBody
) -> AgentTurnOut:
    """One turn of a session-scoped agent; its model provider failing answers 502."""
    result = await _b(request).team.agent_turn(project_id, session_id, agent_id, body.text)
    return AgentTurnOut.model_validate(
        {"text": result.text, "tool_results": result.tool_results, "steps": result.steps}
    )


@router.post("/handoffs/{handoff_id}/accept")
async def accept_handoff(request: Request, handoff_id: Ident, body: AcceptBody) -> HandoffOut:
    """Accept a handoff (to infra: seeds its autonomy)."""
    handoff = await _b(request).team.accept_handoff(handoff_id, body.operator)
    return HandoffOut.model_validate(handoff.to_dict())


@router.post("/projects/{project_id}/execution")
async def activate_execution(
    request: Request, project_id: Ident, body: ExecutionBody
) -> ExecutionOut:
    """Start execution: one dev-<module> per module; each gets its demo task."""
    from backend.infra.dev_tasks import seed_demo_tasks

    backend = _b(request)
    project = await asyncio.to_thread(backend.store.activate_execution, project_id)
    tasks = await asyncio.to_thread(seed_demo_tasks, backend.dev_tasks, project)
    if not tasks:
        raise ConflictError("no tasks were created")
    return ExecutionOut.model_validate(
        {"project_id": project.id, "tasks": [t.to_dict() for t in tasks], "operator": body.operator}
    )
