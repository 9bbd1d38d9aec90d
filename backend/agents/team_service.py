"""The team as one service the HTTP API calls: turns, handoffs, the Infra agent, roster."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from backend.agents.activity import render
from backend.agents.providers.base import ModelProvider
from backend.agents.providers.dev_offline import DEV_OFFLINE
from backend.agents.providers.factory import (
    is_dev_offline,
    is_planner,
    make_provider,
    model_binding,
)
from backend.agents.roster import render_roster
from backend.agents.roster_facts import FactSource, LogFold
from backend.agents.runtime import AgentRuntime, ToolImpl, TurnContext, TurnResult
from backend.agents.store import Handoff, TeamStore
from backend.agents.team import ARQUITETO, DEV_PREFIX, INFRA, QA, SECOPS, agent
from backend.agents.team_tools import AdrProposer, TaskCreator, session_tools
from backend.events import EventType
from backend.exceptions import ConflictError
from backend.settings import Settings

DevTurn = Callable[[str, str, str], Awaitable[TurnResult]]
"""``(project_id, agent_id, operator text) -> turn``: a ``dev-<module>`` agent's turn on its
current task (:meth:`backend.dev.agents.DevAgents.operator_turn`)."""
DevCorrection = Callable[[str, str], Awaitable[TurnResult | None]]
"""``(task_id, correction text) -> turn``, ``None`` on the offline dev model (the rule-based
fixer corrects then): :meth:`backend.dev.agents.DevAgents.correction_turn`."""


class TeamService:
    """Runs the session-scoped agents and derives what the operator sees."""

    def __init__(
        self,
        settings: Settings,
        store: TeamStore,
        *,
        scripts: Any = None,
        infra_tools: dict[str, ToolImpl] | None = None,
        infra_planner: Any = None,
        adr_pr: AdrProposer | None = None,
        task_creator: TaskCreator | None = None,
        dev_turn: DevTurn | None = None,
        dev_correction: DevCorrection | None = None,
        usage: Callable[[str | None], Mapping[str, Mapping[str, Any]]] | None = None,
        roster_facts: FactSource | None = None,
    ) -> None:
        self.settings = settings
        self.store = store
        self.events = store.events
        self.scripts = scripts or {}
        self.infra_planner = infra_planner
        self.dev_turn = dev_turn
        self.dev_correction = dev_correction
        self.usage = usage
        """project id → today's usage per agent (the roster's ``usage``; the usage table)."""
        tools = session_tools(store, adr_pr, task_creator)
        if infra_tools:
            tools[INFRA] = infra_tools
        self.runtime = AgentRuntime(events=self.events, providers=self._provider, tools=tools)
        self.roster_facts: FactSource = roster_facts or LogFold(self.events)
        """The roster's facts: the projection tables (``Backend``), else a fold of the log."""

    def _provider(self, agent_id: str, calls_before: int) -> ModelProvider:
        spec = model_binding(agent_id, self.settings)
        return make_provider(
            spec,
            settings=self.settings,
            scripts=self.scripts,
            agent_id=agent_id,
            start_at=calls_before,
        )

    async def agent_turn(
        self, project_id: str, session_id: str, agent_id: str, text: str
    ) -> TurnResult:
        """Run one turn of a session-scoped agent."""
        definition = agent(agent_id)
        session = await asyncio.to_thread(self.store.session, session_id)
        if session["project_id"] != project_id:
            raise ConflictError(f"session {session_id} is not in project {project_id}")
        if definition.scope != "session":
            if agent_id.startswith(DEV_PREFIX) and self.dev_turn is not None:
                return await self.dev_turn(project_id, agent_id, text)
            raise ConflictError(f"{agent_id} is not a conversational agent")
        if agent_id == INFRA:
            await self._require_infra_handoff(project_id, session_id)
            if is_planner(model_binding(INFRA, self.settings)):
                return await self.run_infra_planner(project_id, session_id)
        return await self.runtime.run_turn(TurnContext(project_id, session_id, agent_id), text)

    async def correction_turn(
        self, project_id: str, session_id: str | None, agent_id: str, text: str
    ) -> TurnResult | None:
        """A model turn of a PR's author asked to correct it (``text``: the reason, the
        findings and the files); ``None`` when the agent runs on the rule-based planner,
        whose corrections the PR pipeline applies itself."""
        if agent_id.startswith(DEV_PREFIX):  # a dev PR: its turn runs on its task
            if self.dev_correction is None or not session_id:
                return None
            return await self.dev_correction(session_id, text)
        ctx = TurnContext(project_id, session_id, agent_id)
        if is_planner(model_binding(agent_id, self.settings)):
            await self._check(ctx)  # a paused author's PR waits, whoever would correct it
            return None
        return await self.runtime.run_turn(ctx, text)

    async def _check(self, ctx: TurnContext) -> None:
        """The runtime's turn checks (a pause...), for work that runs outside a runtime turn."""
        for check in self.runtime.checks:
            await asyncio.to_thread(check, ctx)

    async def _require_infra_handoff(self, project_id: str, session_id: str) -> None:
        handoffs = await asyncio.to_thread(self.store.handoffs, project_id)
        if not any(
            h.to_agent == INFRA and h.status == "accepted" and h.session_id == session_id
            for h in handoffs
        ):
            raise ConflictError(
                "the Infra agent works only after an accepted Arquiteto→Infra handoff"
            )

    async def offer_infra_handoff(
        self, project_id: str, session_id: str, note: str | None = None
    ) -> Handoff:
        """The Arquiteto's closing turn, then the handoff offer (the seed's ADR 0014,
        decision 1)."""
        await asyncio.to_thread(self.store.session, session_id)
        existing = [
            h
            for h in await asyncio.to_thread(self.store.handoffs, project_id)
            if h.session_id == session_id and h.to_agent == INFRA
        ]
        if existing:
            raise ConflictError(
                f"the Arquiteto already offered the Infra handoff ({existing[0].id})"
            )
        await self.runtime.run_turn(
            TurnContext(project_id, session_id, ARQUITETO),
            "Feche a arquitetura desta sessão e prepare o handoff para o Infra.",
        )
        project = await asyncio.to_thread(self.store.project, project_id)
        await asyncio.to_thread(
            self.events.append,
            EventType.ARCHITECTURE_READINESS_CONFIRMED,
            {"summary": note or f"{len(project.modules())} modules ready for infra"},
            project_id=project_id,
            session_id=session_id,
            agent=ARQUITETO,
        )
        return await asyncio.to_thread(
            self.store.offer_handoff, project_id, session_id, ARQUITETO, INFRA, note
        )

    async def accept_handoff(self, handoff_id: str, operator: str) -> Handoff:
        """Accept a handoff (seeds the Infra agent's autonomy)."""
        return await asyncio.to_thread(self.store.accept_handoff, handoff_id, operator)

    async def run_infra_planner(self, project_id: str, session_id: str) -> TurnResult:
        """The Infra agent's offline model: plan, validate each file, propose the PR."""
        if self.infra_planner is None:
            raise ConflictError("no infra planner is configured")
        ctx = TurnContext(project_id, session_id, INFRA)
        await self._check(ctx)
        await self.runtime._status(ctx, "working", "planning Dockerfiles, compose and CI")
        try:
            result = await asyncio.to_thread(
                self.infra_planner.plan_and_propose, project_id, session_id
            )
        finally:
            await self.runtime._status(ctx, "idle", "")
        return TurnResult(
            text="infra PR proposed",
            tool_results=[
                {"tool": "propose_infra_pr", "result": _jsonable(result), "error": False}
            ],
            steps=1,
        )

    def roster(self, project_id: str | None = None, at: int | None = None) -> list[dict[str, Any]]:
        """The roster of a project (default: the newest), live or as of event ``at``.

        Live, it renders the projection's facts with the store's handoffs, autonomy and
        today's usage: O(agents), never the log. As of ``at`` it renders the facts at that
        event alone (a snapshot plus a bounded replay): the log is the only record of the
        past, so handoffs and autonomy come from its events and usage is left out.
        """
        projects = self.store.projects()
        project = next(
            (p for p in projects if p.id == project_id), projects[-1] if projects else None
        )
        scope = project.id if project else None
        if at is not None:
            roster = render_roster(self.roster_facts.facts_at(at, scope), bindings=self._binding)
            return [r.to_dict() for r in roster]
        roster = render_roster(
            self.roster_facts.facts(scope),
            module_map=project.module_map if project else None,
            execution_activated=None,
            handoffs=self.store.handoffs(project.id) if project else [],
            bindings=self._binding,
            autonomy=self.store.autonomy(project.id) if project else None,
            usage=self.usage(scope) if self.usage else None,
        )
        return [r.to_dict() for r in roster]

    def _binding(self, agent_id: str) -> str:
        if agent_id in (QA, SECOPS):
            return "deterministic"  # gates run scanners, never a model
        spec = model_binding(agent_id, self.settings)
        return DEV_OFFLINE if is_dev_offline(spec, agent_id, self.scripts) else spec

    def activity(self, after: int = 0, limit: int = 200) -> list[dict[str, Any]]:
        """Operator-readable lines for events after ``after``."""
        return [render(e).to_dict() for e in self.events.after(after, limit)]


def _jsonable(value: Any) -> Any:
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    if isinstance(value, dict):
        return value
    return str(value)
