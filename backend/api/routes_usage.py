"""Usage and budget routes: tokens per agent/project/day, and each agent's daily budget.

Every number comes from the usage table (migration 0011), never from scanning the events.
"""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request

from backend.api.auth import acting, require_role, require_token
from backend.api.models import Ident
from backend.api.schemas import ERRORS
from backend.api.schemas_usage import BudgetBody, BudgetOut, UsageOut

router = APIRouter(prefix="/api", dependencies=[Depends(require_token)], responses=ERRORS)
ProjectFilter = Annotated[str | None, Query(pattern=r"^[A-Za-z0-9_-]{1,64}$")]
AgentFilter = Annotated[str | None, Query(pattern=r"^[A-Za-z0-9_-]{1,64}$")]
DayFilter = Annotated[str | None, Query(pattern=r"^\d{4}-\d{2}-\d{2}$")]


def _b(request: Request) -> Any:
    return request.app.state.backend


@router.get("/usage")
async def usage(
    request: Request,
    project_id: ProjectFilter = None,
    agent: AgentFilter = None,
    day: DayFilter = None,
) -> UsageOut:
    """Tokens the providers reported, per agent and model, per project and in total, for
    one UTC day (``YYYY-MM-DD``) or all of them; ``cost_usd`` from the price table."""
    got = await asyncio.to_thread(
        _b(request).usage.report, project_id=project_id, agent=agent, day=day
    )
    return UsageOut.model_validate(got)


@router.get("/agents/{agent_id}/budget")
async def budget(request: Request, agent_id: Ident) -> BudgetOut:
    """The agent's budget (tokens per UTC day; null: none) and its tokens today."""
    return BudgetOut.model_validate(await asyncio.to_thread(_b(request).budgets.budget, agent_id))


@router.post("/agents/{agent_id}/budget", dependencies=[Depends(require_role("admin"))])
async def set_budget(request: Request, agent_id: Ident, body: BudgetBody) -> BudgetOut:
    """An admin sets the agent's daily budget; raising it past today's use lets a
    budget-stopped agent run again (``agent.budget_changed``)."""
    got = await asyncio.to_thread(
        _b(request).budgets.set_budget,
        agent_id,
        acting(request, body),
        body.tokens_per_day,
        body.reason,
    )
    return BudgetOut.model_validate(got)
