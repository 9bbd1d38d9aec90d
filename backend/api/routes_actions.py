"""Action routes: takeovers and uncertain outcomes, projects, sessions, handoffs.

PR actions are in routes_prs; conversations and operator replies in routes_conversations.
"""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter, Depends, Request, Response

from backend.api.auth import acting, require_token
from backend.api.models import (
    AcceptBody,
    ClaimBody,
    ExecutionBody,
    GrantBody,
    HandoffBody,
    Ident,
    InterruptionId,
    OperatorBody,
    ProjectBody,
    ResolveBody,
    SessionBody,
    SettleBody,
    TurnBody,
    UncertainActionBody,
    UncertainId,
)
from backend.api.paging import (
    DEFAULT_LIMIT,
    PAGED,
    Cursor,
    PageLimit,
    Stamp,
    decode_cursor,
    next_page,
)
from backend.api.schemas import (
    ERRORS,
    AgentTurnOut,
    AttemptRecord,
    ExecutionOut,
    HandoffOut,
    InterruptionDetailOut,
    InterruptionItem,
    LedgerFacts,
    ProjectOut,
    ResolveOut,
    SessionOut,
    UncertainOut,
)

router = APIRouter(prefix="/api", dependencies=[Depends(require_token)], responses=ERRORS)


def _b(request: Request) -> Any:
    return request.app.state.backend


# -- takeovers ---------------------------------------------------------------------------


@router.get("/interruptions/{ident}")
async def interruption(request: Request, ident: InterruptionId) -> InterruptionDetailOut:
    """A takeover: transcript, the attempt history and what the ledger holds for it."""
    story = await asyncio.to_thread(_b(request).interruption_detail, ident)
    item = story.interruption
    return InterruptionDetailOut.model_validate(
        {
            **InterruptionItem.of(item).model_dump(),
            "transcript": story.transcript,
            "attempts": story.attempts,
            "ledger": story.ledger.to_dict() if story.ledger else None,
        }
    )


@router.post("/interruptions/{ident}/claim")
async def claim(request: Request, ident: InterruptionId, body: ClaimBody) -> InterruptionItem:
    """Take the conversation over (one operator at a time)."""
    got = await asyncio.to_thread(
        _b(request).guard.interruptions.claim, ident, acting(request, body)
    )
    return InterruptionItem.of(got)


@router.post("/interruptions/{ident}/release")
async def release(request: Request, ident: InterruptionId, body: OperatorBody) -> InterruptionItem:
    """Give a claimed takeover back to the queue (its holder only; 409 otherwise), e.g. when
    going off shift. It is open again, and paged again if it is past its SLA."""
    got = await asyncio.to_thread(
        _b(request).guard.interruptions.release, ident, acting(request, body), body.reason
    )
    return InterruptionItem.of(got)


@router.post("/interruptions/{ident}/resolve")
async def resolve(request: Request, ident: InterruptionId, body: ResolveBody) -> ResolveOut:
    """Execute the tool once under the operator's authority (through the ledger), deny, or
    hand back; every resolve returns the conversation to the bot.

    ``outcome`` is the ledger's real resultado. An execute the ledger blocks (already
    refunded, another amount claimed) answers 409 ``blocked_by_ledger`` with the ledger's
    facts in ``error.ledger``; one that did not execute (refused, uncertain) 409
    ``not_executed``; a dependency failing answers 502/503. In all of these the takeover
    stays claimed and the customer gets no reply, so the operator can act again.
    """
    done = await _b(request).resolve_interruption(
        ident, acting(request, body), body.action, body.reply, valor=body.valor, reason=body.reason
    )
    return ResolveOut(
        outcome=done.outcome,  # type: ignore[arg-type]
        interruption=InterruptionItem.of(done.interruption),
        attempt=AttemptRecord.model_validate(done.attempt) if done.attempt else None,
        ledger=LedgerFacts.model_validate(done.ledger.to_dict()) if done.ledger else None,
    )


@router.post("/interruptions/{ident}/grant")
async def grant(request: Request, ident: InterruptionId, body: GrantBody) -> InterruptionItem:
    """Give the agent N more attempts on the takeover's combination (audited as an event).

    A takeover still claimed by the operator is handed back first; an unclaimed one is 409.
    """
    got = await asyncio.to_thread(
        _b(request).takeovers.grant, ident, acting(request, body), body.attempts, body.reason
    )
    return InterruptionItem.of(got)


# -- uncertain outcomes ------------------------------------------------------------------


def _settled(ident: str, done: Any) -> UncertainOut:
    status = done.status
    return UncertainOut(
        id=ident,
        outcome=status if status != "tentando" else None,
        settled=done.settled,
        message=done.message,
    )


@router.post("/uncertain/{ident}/reconcile")
async def reconcile_uncertain(
    request: Request, ident: UncertainId, body: UncertainActionBody
) -> UncertainOut:
    """Ask the gateway by idempotency key what happened, and settle the claim with it.

    The gateway not answering is 502 and the item stays uncertain.
    """
    done = await asyncio.to_thread(_b(request).reconcile_uncertain, ident, acting(request, body))
    return _settled(ident, done)


@router.post("/uncertain/{ident}/settle")
async def settle_uncertain(request: Request, ident: UncertainId, body: SettleBody) -> UncertainOut:
    """Settle an uncertain claim by hand (``executado``: the money moved), with a reason."""
    done = await asyncio.to_thread(
        _b(request).settle_uncertain, ident, acting(request, body), body.outcome, body.reason
    )
    return _settled(ident, done)


# -- projects, sessions, handoffs --------------------------------------------------------


@router.post("/projects", status_code=201)
async def create_project(request: Request, body: ProjectBody) -> ProjectOut:
    """A new project with its own repository in the data dir."""
    from backend.demo.runner import create_project_repo

    project = await asyncio.to_thread(create_project_repo, _b(request), body.name, body.template)
    return ProjectOut.model_validate(project, from_attributes=True)


@router.get("/projects", responses=PAGED)
async def projects(
    request: Request, response: Response, limit: PageLimit = DEFAULT_LIMIT, cursor: Cursor = None
) -> list[ProjectOut]:
    """Every project, oldest first."""
    after = decode_cursor("projects", cursor, (Stamp, str))
    got = await asyncio.to_thread(_b(request).store.projects_page, after, limit + 1)
    page = next_page(request, response, got, limit, "projects", lambda p: (p.created_at, p.id))
    return [ProjectOut.model_validate(p, from_attributes=True) for p in page]


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
    """One turn of an agent: a session-scoped one in the session; a ``dev-<module>`` on its
    current task (409 when it has none). Its model provider failing answers 502."""
    result = await _b(request).team.agent_turn(project_id, session_id, agent_id, body.text)
    return AgentTurnOut.model_validate(
        {"text": result.text, "tool_results": result.tool_results, "steps": result.steps}
    )


@router.post("/handoffs/{handoff_id}/accept")
async def accept_handoff(request: Request, handoff_id: Ident, body: AcceptBody) -> HandoffOut:
    """Accept a handoff (to infra: seeds its autonomy)."""
    handoff = await _b(request).team.accept_handoff(handoff_id, acting(request, body))
    return HandoffOut.model_validate(handoff.to_dict())


@router.post("/projects/{project_id}/execution")
async def activate_execution(
    request: Request, project_id: Ident, body: ExecutionBody
) -> ExecutionOut:
    """Start execution: one dev-<module> per module, working the PO's tasks in order (under
    ``--demo`` each module without one also gets a demo task). 409 when the PO has created
    no task yet, or execution is already active."""
    from backend.dev.agents import start_execution

    backend = _b(request)
    demo = bool(getattr(request.app.state, "demo", False))
    project, tasks = await asyncio.to_thread(
        start_execution, backend.dev_tasks, project_id, demo=demo
    )
    await asyncio.to_thread(backend.dev_worker.wake)
    return ExecutionOut.model_validate(
        {
            "project_id": project.id,
            "tasks": [t.to_dict() for t in tasks],
            "operator": acting(request, body),
        }
    )
