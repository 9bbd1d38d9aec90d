"""The conversational agents' turn loop: model → tools → model, until the model answers.

An agent calls only what its registry holds; everything a turn added to the conversation is
stored in its ``agent.turn`` event, so the event log alone rebuilds each agent's history
after a restart. A turn never holds a unit of work across a model call, and a failing
provider ends it with ``agent.status`` ``error``. :class:`AgentRuntime` gives the rules.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from backend.agents.providers.base import (
    Message,
    ModelProvider,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from backend.agents.team import AgentDef, agent
from backend.agents.turn_record import decision_notice, message_to_dict, seen
from backend.agents.turn_record import history as history_of
from backend.events import Event, EventLog, EventType
from backend.exceptions import CadenciaError, ConfigError, ProviderError, UnavailableError
from backend.store.uow import UnitOfWork, Work

log = logging.getLogger(__name__)

ToolImpl = Callable[["TurnContext", dict[str, Any]], "dict[str, Any] | Awaitable[dict[str, Any]]"]
ProviderFactory = Callable[[str, int], ModelProvider]
"""``(agent_id, model calls already made) -> provider`` (the count lets scripts resume)."""
END_TURN = "_end_turn"
"""A tool result holding this key (true) ends the turn once every call of the model's
current answer has its result; the key is removed before the model or the log sees it."""
TurnCheck = Callable[["TurnContext"], None]
"""Runs in a worker thread before a turn; raises (e.g. a ``ConflictError``) to refuse it."""
UsageSink = Callable[..., None]
"""``(ctx, model spec, {"input_tokens", "output_tokens"}, *, tx=Work)`` after each turn, inside
the turn's closing unit of work (a sink on the same database writes in it)."""
Opening = Callable[[Work], None]
"""Caller writes that commit with the turn's ``agent.status`` working, before the model runs."""
Closing = Callable[[Work, "TurnResult"], None]
"""Caller writes that commit with the turn's ``agent.turn``, usage and idle status."""


@dataclass(frozen=True)
class TurnContext:
    """Where a turn runs."""

    project_id: str | None
    session_id: str | None
    agent_id: str


@dataclass(frozen=True)
class TurnResult:
    """What a turn produced."""

    text: str | None
    tool_results: list[dict[str, Any]]
    steps: int


def model_spec(provider: ModelProvider) -> str:
    """The spec that names ``provider`` (``make_provider`` tags each provider it builds with
    ``spec``; anything else is named by its ``name``)."""
    return str(getattr(provider, "spec", None) or getattr(provider, "name", None) or "unknown")


def _reason(exc: CadenciaError) -> str:
    return " ".join(exc.message.split())[:200]


class AgentRuntime:
    """Runs turns of session-scoped conversational agents.

    - Each turn is bracketed by ``agent.status`` working/idle events (the live roster).
    - An agent can only call what its registry holds (the Infra agent: exactly
      ``validate_infra_file`` and ``propose_infra_pr`` — there is no terminal to call).
    - Everything a turn added to the conversation is stored in its ``agent.turn`` event, so
      after a restart :meth:`history` rebuilds each agent's conversation from the event log
      alone, and a scripted provider resumes at the right step.
    - Before a turn, each :data:`TurnCheck` may refuse it (a paused agent, a spent budget);
      after it, the :data:`UsageSink` gets the tokens the provider reported. Both are wired
      once for every runtime of the backend (``Backend._runtime_hooks``).
    - A provider that fails (after its own retries) ends the turn with ``agent.status``
      ``error`` and the reason instead of ``idle`` — the roster and the feed show it — and
      the error goes on to the caller (HTTP 502/503). The next turn that succeeds ends
      ``idle``.
    - A turn writes in two units of work, never holding one across a model call (SQLite has
      one writer): the opening (``agent.status`` working, plus the caller's ``opening``
      writes, e.g. the customer's message) commits before the first model call, so the roster
      shows the agent working while it thinks; the closing (``agent.turn``, the usage row,
      ``agent.status`` idle, plus the caller's ``closing`` writes, e.g. the reply) commits
      once at the end. What the turn's tools decide commits on its own, inside the guard.
    """

    def __init__(
        self,
        *,
        events: EventLog,
        providers: ProviderFactory,
        tools: dict[str, dict[str, ToolImpl]],
        max_steps: int = 8,
        checks: Sequence[TurnCheck] = (),
        usage: UsageSink | None = None,
    ) -> None:
        self.events = events
        self.providers = providers
        self.tools = tools
        self.max_steps = max_steps
        self.checks = tuple(checks)
        self.usage = usage
        self.uow = UnitOfWork(events.db)
        self._locks: dict[tuple[str | None, str], asyncio.Lock] = {}

    def install(self, *, checks: Sequence[TurnCheck] = (), usage: UsageSink | None = None) -> None:
        """Add the backend's turn checks and usage sink (``Backend._runtime_hooks()``) to a
        runtime some service built, so every runtime refuses and counts turns alike."""
        self.checks = (*self.checks, *checks)
        if usage is not None:
            self.usage = usage

    def history(self, session_id: str | None, agent_id: str) -> tuple[list[Message], int]:
        """Rebuild an agent's conversation and its model-call count from the log."""
        return history_of(self._turn_events(session_id, agent_id))

    def _checked_start(self, ctx: TurnContext) -> tuple[tuple[list[Message], int], list[Event]]:
        """The turn checks (each may refuse the turn), then what the turn starts from: one
        trip to a worker thread for all of it, as it runs before every turn."""
        for check in self.checks:
            check(ctx)
        return self._before_turn(ctx)

    def _before_turn(self, ctx: TurnContext) -> tuple[tuple[list[Message], int], list[Event]]:
        """The agent's history in the session and the operators' decisions on its approvals
        that none of its turns saw: one read of its turns serves both, in one read
        transaction with the decisions.

        A turn records the approvals it told the model about (``decisions_seen``), so each
        decision reaches the agent exactly once, in its next turn of that session, even
        after a restart.
        """
        if ctx.session_id is None:
            return history_of([]), []
        found = self.events.of_agent_by_type(
            ctx.session_id, ctx.agent_id, (EventType.AGENT_TURN, EventType.APPROVAL_DECIDED)
        )
        turns = found[EventType.AGENT_TURN]
        seen = {str(a) for event in turns for a in event.payload.get("decisions_seen", [])}
        unseen = [
            e
            for e in found[EventType.APPROVAL_DECIDED]
            if str(e.payload.get("approval_id")) not in seen
        ]
        return history_of(turns), unseen

    def _turn_events(self, session_id: str | None, agent_id: str) -> list[Any]:
        if session_id is None:
            return []
        return self.events.of_agent(session_id, agent_id, EventType.AGENT_TURN)

    async def run_turn(
        self,
        ctx: TurnContext,
        text: str,
        *,
        opening: Opening | None = None,
        closing: Closing | None = None,
    ) -> TurnResult:
        """One turn: the user's ``text`` in, the agent's answer out. Turns of one agent in
        one session are serialized.

        ``opening`` runs in the unit of work that records the turn's start (only once the
        turn checks let it run); ``closing`` in the one that records its end (only when the
        turn succeeded). Each is one commit together with the runtime's own events.
        """
        lock = self._locks.setdefault((ctx.session_id, ctx.agent_id), asyncio.Lock())
        async with lock:
            return await self._run_turn(ctx, text, opening, closing)

    async def _run_turn(
        self, ctx: TurnContext, text: str, opening: Opening | None, closing: Closing | None
    ) -> TurnResult:
        definition = agent(ctx.agent_id)
        (history, calls_before), decided = await asyncio.to_thread(self._checked_start, ctx)
        await asyncio.to_thread(self._open, ctx, f"thinking about: {text[:60]}", opening)
        # One user message: what operators decided since the last turn, then the text (some
        # providers refuse two user messages in a row).
        notices = [decision_notice(e.payload) for e in decided]
        new: list[Message] = [UserMessage("\n\n".join([*notices, text]))]
        results: list[dict[str, Any]] = []
        answer: str | None = None
        steps = 0
        usage = {"input_tokens": 0, "output_tokens": 0}
        reported = False
        spec: str | None = None
        end: tuple[str, str] = ("idle", "")
        try:
            try:
                provider = self.providers(ctx.agent_id, calls_before)
            except (ProviderError, ConfigError) as exc:
                end = ("error", _reason(exc))
                raise
            spec = model_spec(provider)
            while steps < self.max_steps:
                steps += 1
                try:
                    turn = await provider.complete(
                        system=definition.system_prompt,
                        messages=history + new,
                        tools=definition.tool_specs(),
                    )
                except (ProviderError, ConfigError) as exc:
                    # The provider already retried what a retry can fix: the agent is in
                    # error until a turn succeeds (the steps so far are not recorded).
                    end = ("error", _reason(exc))
                    raise
                if turn.usage:
                    reported = True
                    for key in usage:
                        usage[key] += int(turn.usage.get(key, 0) or 0)
                new.append(turn.as_message())
                answer = turn.text
                if not turn.tool_calls:
                    break
                ended = False
                for call in turn.tool_calls:
                    result, is_error = await self._call_tool(definition, ctx, call)
                    ended = bool(result.pop(END_TURN, False)) or ended
                    results.append({"tool": call.name, "result": result, "error": is_error})
                    new.append(
                        ToolResultMessage(
                            call.id, call.name, json.dumps(result, default=str), is_error
                        )
                    )
                if ended:
                    break
            payload = {
                "turn": calls_before + steps,
                "text": answer,
                "tool_calls": [r["tool"] for r in results],
                "stop_reason": "max_steps" if steps >= self.max_steps and results else "end_turn",
                "messages": [message_to_dict(m) for m in new],
                "model_calls": steps,
                "model": spec,
                "usage": dict(usage) if reported else None,
                **seen(decided),
            }
            outcome = TurnResult(answer, results, steps)
            await asyncio.to_thread(self._close, ctx, payload, spec, usage, closing, outcome)
        except BaseException:
            # The tokens earlier steps spent were billed all the same: they count.
            billed = dict(usage) if reported and spec is not None else None
            try:
                await asyncio.to_thread(self._close_failed, ctx, end, spec, billed)
            except Exception:
                log.exception("could not record the end of %s's failed turn", ctx.agent_id)
            raise
        return outcome

    def _open(self, ctx: TurnContext, detail: str, opening: Opening | None) -> None:
        with self.uow.begin() as work:
            if opening is not None:
                opening(work)
            self._status_in(work, ctx, "working", detail)

    def _close(
        self,
        ctx: TurnContext,
        payload: dict[str, Any],
        spec: str,
        usage: dict[str, int],
        closing: Closing | None,
        outcome: TurnResult,
    ) -> None:
        with self.uow.begin() as work:
            self.events.append(
                EventType.AGENT_TURN,
                payload,
                project_id=ctx.project_id,
                session_id=ctx.session_id,
                agent=ctx.agent_id,
                tx=work,
            )
            if self.usage is not None:
                self.usage(ctx, spec, dict(usage), tx=work)
            self._status_in(work, ctx, "idle", "")
            if closing is not None:
                closing(work, outcome)

    def _close_failed(
        self,
        ctx: TurnContext,
        end: tuple[str, str],
        spec: str | None,
        billed: dict[str, int] | None,
    ) -> None:
        with self.uow.begin() as work:
            if billed is not None and spec is not None and self.usage is not None:
                self.usage(ctx, spec, billed, tx=work)
            self._status_in(work, ctx, *end)

    async def _call_tool(
        self, definition: AgentDef, ctx: TurnContext, call: ToolCall
    ) -> tuple[dict[str, Any], bool]:
        if not call.valid:
            return {"error": f"invalid arguments: {call.error}"}, True
        impl = self.tools.get(ctx.agent_id, {}).get(call.name)
        if definition.tool(call.name) is None or impl is None:
            # Structural least privilege: a tool outside the registry does not exist.
            return {"error": f"{ctx.agent_id} has no tool named {call.name!r}"}, True
        try:
            outcome = impl(ctx, call.arguments)
            if inspect.isawaitable(outcome):
                outcome = await outcome
            return dict(outcome), False
        except UnavailableError:
            raise  # our dependency failed: the caller answers 502/503, the model is not told
        except CadenciaError as exc:
            return {"error": exc.message, "code": exc.code}, True

    async def _status(self, ctx: TurnContext, status: str, detail: str) -> None:
        """Append one ``agent.status`` in its own commit (work outside a turn)."""
        await asyncio.to_thread(self._status_alone, ctx, status, detail)

    def _status_alone(self, ctx: TurnContext, status: str, detail: str) -> None:
        with self.uow.begin() as work:
            self._status_in(work, ctx, status, detail)

    def _status_in(self, work: Work, ctx: TurnContext, status: str, detail: str) -> None:
        self.events.append(
            EventType.AGENT_STATUS,
            {"status": status, "detail": detail},
            project_id=ctx.project_id,
            session_id=ctx.session_id,
            agent=ctx.agent_id,
            tx=work,
        )
