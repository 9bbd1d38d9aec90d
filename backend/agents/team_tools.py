"""Tool implementations of the session-scoped agents (criativo, po, arquiteto).

The Infra agent's two tools are in :mod:`backend.agents.infra_tools`; dev agents' come from
:mod:`backend.dev.agents`. Actions that need permission go through ``decide()``: the
Arquiteto's ``propose_adr_pr`` through the PR pipeline's, like every PR. The PO's
``create_task`` creates a real dev task through the backend's :data:`TaskCreator` (a module
not in the module map is a tool error and creates nothing); its ``backlog.task_created``
event names the task.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from backend.agents.policy import decide
from backend.agents.runtime import ToolImpl, TurnContext
from backend.agents.store import TeamStore
from backend.agents.team import ARQUITETO, CRIATIVO, PO
from backend.events import EventType
from backend.exceptions import ConflictError, ValidationError
from backend.module_map import parse_module_map

AdrProposer = Callable[[TurnContext, dict[str, Any]], dict[str, Any]]
"""``(turn, tool arguments) -> tool result``: runs in a worker thread."""
TaskCreator = Callable[[TurnContext, dict[str, Any]], dict[str, Any]]
"""``(turn, create_task arguments) -> {"task_id", "module", "title", "status"}``: creates a
dev task (raising a :class:`~backend.exceptions.CadenciaError` the model sees); runs in a
worker thread."""


def _require_project(ctx: TurnContext) -> str:
    if not ctx.project_id:
        raise ValidationError(f"{ctx.agent_id} needs a project")
    return ctx.project_id


def session_tools(
    store: TeamStore, adr_pr: AdrProposer | None = None, task_creator: TaskCreator | None = None
) -> dict[str, dict[str, ToolImpl]]:
    """``{agent: {tool: impl}}`` for criativo, po and arquiteto.

    Args:
        store: the team store.
        adr_pr: the Arquiteto's ADR PRs through the backend's PR pipeline.
        task_creator: the PO's tasks into the backend's dev tasks.
    """
    events = store.events

    async def emit(ctx: TurnContext, type: EventType, payload: dict[str, Any]) -> None:
        await asyncio.to_thread(
            events.append,
            type,
            payload,
            project_id=ctx.project_id,
            session_id=ctx.session_id,
            agent=ctx.agent_id,
        )

    async def confirm_readiness(ctx: TurnContext, args: dict[str, Any]) -> dict[str, Any]:
        await emit(ctx, EventType.IDEA_READINESS_CONFIRMED, {"summary": args.get("summary", "")})
        return {"ok": True}

    async def create_story(ctx: TurnContext, args: dict[str, Any]) -> dict[str, Any]:
        await emit(
            ctx,
            EventType.BACKLOG_STORY_CREATED,
            {"title": args.get("title"), "description": args.get("description")},
        )
        return {"ok": True}

    async def create_task(ctx: TurnContext, args: dict[str, Any]) -> dict[str, Any]:
        _require_project(ctx)
        if task_creator is None:
            raise ConflictError("this runtime has no dev task store: no task can be created")
        created = await asyncio.to_thread(task_creator, ctx, args)
        await emit(
            ctx,
            EventType.BACKLOG_TASK_CREATED,
            {"module": created["module"], "title": created["title"], "task_id": created["task_id"]},
        )
        return {"ok": True, **created}

    async def write_module_map(ctx: TurnContext, args: dict[str, Any]) -> dict[str, Any]:
        project_id = _require_project(ctx)
        import json

        module_map = parse_module_map(
            json.dumps({"modules": args.get("modules", [])}), source="write_module_map"
        )
        data = module_map.model_dump(mode="json", exclude_none=True)
        await asyncio.to_thread(store.set_module_map, project_id, data)
        await emit(
            ctx,
            EventType.ARCHITECTURE_MODULE_MAP_WRITTEN,
            {"modules": [m["name"] for m in data["modules"]]},
        )
        return {"ok": True, "modules": len(data["modules"])}

    async def propose_adr_pr(ctx: TurnContext, args: dict[str, Any]) -> dict[str, Any]:
        if adr_pr is not None:  # the backend's PR pipeline (backend.prs.kind_adr.AdrTool)
            return await asyncio.to_thread(adr_pr, ctx, args)
        # No pipeline in this runtime: an "ask" still becomes an approval (approving it
        # opens the PR in a backend that has one), but nothing may claim it was opened.
        project_id = _require_project(ctx)
        autonomy = await asyncio.to_thread(store.autonomy, project_id)
        decision = decide(ctx.agent_id, "open_adr_pr", autonomy=autonomy)
        await emit(ctx, EventType.ACTION_DECIDED, {"action": "open_adr_pr", **decision.to_dict()})
        if decision.outcome != "ask":
            raise ConflictError(
                f"open_adr_pr is {decision.outcome} ({decision.rule}) but this runtime has no "
                "PR pipeline to open it"
            )
        approval = await asyncio.to_thread(
            store.request_approval,
            project_id=project_id,
            session_id=ctx.session_id,
            agent=ctx.agent_id,
            action="open_adr_pr",
            payload={k: args.get(k) for k in ("title", "slug", "content")},
            stage=decision.stage,
            rule=decision.rule,
        )
        return {"status": "pending", "decision": decision.to_dict(), "approval_id": approval}

    return {
        CRIATIVO: {"confirm_readiness": confirm_readiness},
        PO: {"create_story": create_story, "create_task": create_task},
        ARQUITETO: {"write_module_map": write_module_map, "propose_adr_pr": propose_adr_pr},
    }
