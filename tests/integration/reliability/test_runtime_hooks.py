"""The runtime's hooks: checks refuse a turn, the usage sink sees each turn, a provider
failure leaves the agent in ``error`` until a turn succeeds."""

from __future__ import annotations

import pytest

from backend.agents.providers.base import Message, ModelTurn, ToolSpec
from backend.agents.runtime import AgentRuntime, TurnContext
from backend.events import EventLog, EventType
from backend.exceptions import ConflictError, ProviderError
from backend.store.db import Database


class Flaky:
    """Fails while ``down``, else answers with a fixed usage."""

    name = "flaky"
    spec = "openai:m@http://127.0.0.1:1/v1"

    def __init__(self) -> None:
        self.down = False
        self.calls = 0

    async def complete(
        self, *, system: str, messages: list[Message], tools: list[ToolSpec]
    ) -> ModelTurn:
        self.calls += 1
        if self.down:
            raise ProviderError("http://127.0.0.1:1/v1 answered HTTP 500: boom")
        return ModelTurn(text="ok", usage={"input_tokens": 7, "output_tokens": 3})


def _statuses(events: EventLog) -> list[tuple[str, str]]:
    return [
        (e.payload["status"], e.payload["detail"])
        for e in events.after(0, 100)
        if e.type == EventType.AGENT_STATUS
    ]


async def test_hooks_and_the_error_status(sqlite_db: Database) -> None:
    events = EventLog(sqlite_db)
    provider = Flaky()
    seen: list[tuple[str, str, dict[str, int]]] = []
    refuse: list[str] = []

    def check(ctx: TurnContext) -> None:
        if refuse:
            raise ConflictError(refuse[0])

    def sink(ctx: TurnContext, spec: str, usage: dict[str, int], *, tx: object = None) -> None:
        seen.append((ctx.agent_id, spec, usage))

    runtime = AgentRuntime(
        events=events,
        providers=lambda _a, _c: provider,
        tools={},
        checks=[check],
        usage=sink,
    )
    ctx = TurnContext(None, "s1", "criativo")
    await runtime.run_turn(ctx, "oi")
    turn = events.of_agent("s1", "criativo", EventType.AGENT_TURN)[-1].payload
    assert turn["model"] == Flaky.spec
    assert turn["usage"] == {"input_tokens": 7, "output_tokens": 3}
    assert seen == [("criativo", Flaky.spec, {"input_tokens": 7, "output_tokens": 3})]

    provider.down = True
    with pytest.raises(ProviderError):
        await runtime.run_turn(ctx, "de novo")
    assert _statuses(events)[-1] == ("error", "http://127.0.0.1:1/v1 answered HTTP 500: boom")
    assert len(events.of_agent("s1", "criativo", EventType.AGENT_TURN)) == 1
    assert len(seen) == 1

    refuse.append("paused")
    before = (provider.calls, events.last_id())
    with pytest.raises(ConflictError):
        await runtime.run_turn(ctx, "recusado")
    assert (provider.calls, events.last_id()) == before  # refused: no call, no event
    refuse.clear()

    provider.down = False
    await runtime.run_turn(ctx, "voltou")
    assert _statuses(events)[-1] == ("idle", "")
    assert len(seen) == 2
