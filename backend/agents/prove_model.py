"""``cadencia prove --model SPEC``: the scenario's customer turns through a model.

Instead of the scenario's scripted calls, each customer message (``cliente``) goes to
``atendimento`` bound to ``SPEC``, through the same :class:`CustomerService` the backend
runs: the orchestrator, the ledger and the teto de voltas decide, whatever the model asks.
The summary is the one of the scripted replay, counted from the gateway's journal.
"""

from __future__ import annotations

import asyncio
from typing import Any

from backend.agents.customer_service import CustomerService
from backend.agents.providers.base import ModelProvider
from backend.agents.providers.exceptions import ProviderError
from backend.agents.providers.factory import make_provider, resolve_spec
from backend.agents.team import CUSTOMER_SERVICE
from backend.guard.assembly import Guard
from backend.guard.prove import Conversa, Replay
from backend.settings import Settings


def model_replay(spec: str, settings: Settings) -> Replay:
    """A replay that sends every customer message to ``atendimento`` on ``spec``.

    The provider is built once here, so a bad spec (or an OpenAI endpoint without a key)
    fails before any conversation runs.

    Raises:
        ConfigError: ``spec`` names no provider.
    """
    resolved = resolve_spec(CUSTOMER_SERVICE, spec)
    make_provider(resolved, settings=settings, agent_id=CUSTOMER_SERVICE)

    def providers(agent_id: str, calls_before: int) -> ModelProvider:
        return make_provider(resolved, settings=settings, agent_id=agent_id, start_at=calls_before)

    def replay(guard: Guard, conversa: Conversa) -> list[dict[str, Any]]:
        service = CustomerService(
            events=guard.events,
            orchestrator=guard.orchestrator,
            conversations=guard.conversations,
            providers=providers,
        )
        return asyncio.run(_play(service, conversa, resolved))

    return replay


async def _play(service: CustomerService, conversa: Conversa, spec: str) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    for number, turno in enumerate(conversa.turnos, 1):
        try:
            answer = await service.handle_message(
                conversa.conversaId, turno.cliente, conversa.clienteId
            )
        except ProviderError as exc:
            # The run cannot be measured without its model: say which one, and where.
            raise type(exc)(
                f"model {spec} failed in {conversa.conversaId}, turn {number}: {exc.message}",
                retryable=exc.retryable,
                retry_after_s=exc.retry_after_s,
                **exc.context,
            ) from exc
        records.extend(answer["attempts"])
    return records
