"""The customer-service agent (``atendimento``), on whatever provider it is bound to.

``atendimento`` is bound like every agent (a resolved ``scripted`` is the offline
``chatty`` model) and its provider is built per turn. Every tool call goes through the
guard's orchestrator, so the teto de voltas stops a chatty model as in ``cadencia prove``,
and the handoff message is decided in code. Internal error text never reaches the
customer. :class:`CustomerService` gives the rules.
"""

from __future__ import annotations

import asyncio
from typing import Any

from backend.agents.providers.base import ModelProvider
from backend.agents.providers.chatty import ChattyAtendimentoModel
from backend.agents.runtime import (
    END_TURN,
    AgentRuntime,
    ProviderFactory,
    TurnContext,
    TurnResult,
)
from backend.agents.team import CUSTOMER_SERVICE
from backend.events import EventLog
from backend.exceptions import (
    AgentPausedError,
    BudgetExceededError,
    ConfigError,
    UnavailableError,
    unavailable_cause,
)
from backend.guard.conversations import Conversations, Role
from backend.guard.orchestrator import Attempt, Orchestrator
from backend.store.uow import Work
from backend.tools.registry import TOOLS

__all__ = ["FAILED_REPLY", "UNAVAILABLE_REPLY", "ChattyAtendimentoModel", "CustomerService"]

UNAVAILABLE_REPLY = (
    "Desculpe, não consigo concluir isso agora por uma instabilidade do nosso lado. "
    "Pode tentar de novo em alguns minutos?"
)
FAILED_REPLY = "Não foi possível concluir a solicitação agora."
NOT_ATTEMPTED = "Não tentado: o teto de voltas interrompeu esta volta; um humano assume."
CEILING = "bloqueado_por_teto"


def _customer_text(attempt: Attempt) -> str:
    """What the model may tell the customer about ``attempt``.

    A tool's own refusal ("pedido 4821 não encontrado") is written for the customer; an
    error that wraps another one, or any dependency failure, is not.
    """
    error = attempt.error
    if attempt.resultado == "falhou" and (
        error is None or error.__cause__ is not None or isinstance(error, UnavailableError)
    ):
        return FAILED_REPLY
    return attempt.mensagem


class CustomerService:
    """Runs customer-conversation turns through the runtime and the guard.

    ``atendimento`` is bound like every agent (``CADENCIA_AGENT_MODELS``, then ``*``, then
    ``CADENCIA_MODEL``; a resolved ``scripted`` is the offline ``chatty`` model) and its
    provider is built per turn by the factory :class:`~backend.core.Backend` wires in.

    Every tool call of a conversation turn goes through the guard's orchestrator, so a chatty
    model hits the teto de voltas exactly as in ``cadencia prove``. When the ceiling stopped a
    tool in this turn, the turn ends there (the model is not asked again, and any further call
    it made in the same answer is not attempted) and the customer gets the seed's handoff
    message — decided in code, not left to the model's wording.

    Internal error text never reaches the customer: a tool failure is told to the model (and
    so to the customer) in the tool's own customer-facing words or a generic sentence, never
    an exception message. When one of our dependencies fails during the turn (the model
    provider, the gateway, the database...), the turn stops, the customer gets a fixed
    apology, and the :class:`~backend.exceptions.UnavailableError` goes on to the API caller
    (HTTP 502/503), so a retry is possible and nobody mistakes it for an answer.

    Args:
        events: the event log (turns, statuses, attempts).
        orchestrator: the guard's orchestrator; every tool call goes through it.
        conversations: who holds each conversation, and its messages.
        providers: ``(agent_id, model calls already made) -> provider``, called once per
            turn (the backend's binding: ``model_binding`` + ``make_provider``).
        model: one fixed provider instead of ``providers`` (tests); with neither, the
            offline ``chatty`` model.
        runtime_options: passed on to :class:`AgentRuntime` (the checks and the usage sink
            every runtime of the backend shares).
    """

    def __init__(
        self,
        *,
        events: EventLog,
        orchestrator: Orchestrator,
        conversations: Conversations,
        providers: ProviderFactory | None = None,
        model: ModelProvider | None = None,
        **runtime_options: Any,
    ) -> None:
        self.events = events
        self.orchestrator = orchestrator
        self.conversations = conversations
        if providers is None:
            fixed = model or ChattyAtendimentoModel()
            providers = lambda _agent, _calls: fixed  # noqa: E731
        self.providers = providers
        # Turns (by their TurnContext's identity) in which the ceiling already stopped a tool.
        self._stopped: set[int] = set()
        # This turn's attempt records (by TurnContext identity), returned to the caller.
        self._attempts: dict[int, list[dict[str, Any]]] = {}
        tools: dict[str, Any] = {name: self._tool(name) for name in TOOLS}
        self.runtime = AgentRuntime(
            events=events,
            providers=providers,
            tools={CUSTOMER_SERVICE: tools},
            max_steps=6,
            **runtime_options,
        )

    def _tool(self, ferramenta: str) -> Any:
        async def call(ctx: TurnContext, args: dict[str, Any]) -> dict[str, Any]:
            assert ctx.session_id is not None
            if id(ctx) in self._stopped:
                # A further call in the answer the ceiling stopped: a human takes over,
                # so it is not attempted (nor counted as an attempt).
                return {"resultado": None, "mensagem": NOT_ATTEMPTED}
            attempt = await asyncio.to_thread(
                self.orchestrator.call, ctx.session_id, ferramenta, args
            )
            self._attempts.setdefault(id(ctx), []).append(attempt.record)
            failed = unavailable_cause(attempt.error) if attempt.resultado == "falhou" else None
            if failed is not None:
                # Recorded (falhou, claim released); the turn stops here, see the docstring.
                raise failed
            result = {
                "resultado": attempt.resultado,
                "mensagem": _customer_text(attempt),
                "dados": attempt.dados,
                "tentativaNumero": attempt.record["tentativaNumero"],
            }
            if attempt.resultado == CEILING:
                self._stopped.add(id(ctx))
                result[END_TURN] = True
            return result

        return call

    async def handle_message(
        self, conversa_id: str, text: str, cliente_id: str | None = None
    ) -> dict[str, Any]:
        """Customer ``cliente_id`` wrote ``text``: run a turn, answer, and return reply +
        attempts.

        The first message names the conversation's customer (``cliente_id``), bound with
        that message; a later one may omit it. A message naming another customer, or none
        for a conversation without one, is refused before anything is recorded
        (:class:`CustomerMismatchError`, :class:`CustomerMissingError`).

        While an operator holds the conversation (``human``) the message is only recorded
        and streamed: no model turn runs, ``reply`` is None and the operator answers. While
        an operator has paused ``atendimento`` the same holds with ``state: paused``.

        Two commits when the turn runs (the guard's decisions aside): the customer's message
        with the turn's start, then the turn's record with the reply and its delivery.
        """
        held = await asyncio.to_thread(self.conversations.state, conversa_id)
        held.check_customer(conversa_id, cliente_id)
        if held.state == "human":
            await self._say(conversa_id, "cliente", text, cliente_id)
            return {"state": "human", "operator": held.operator, "reply": None, "attempts": []}
        ctx = TurnContext(None, conversa_id, CUSTOMER_SERVICE)
        said: list[bool] = []
        replied: list[str] = []

        def opening(work: Work) -> None:
            self.conversations.say(conversa_id, "cliente", text, cliente_id=cliente_id, tx=work)
            work.after_commit(lambda: said.append(True))

        def closing(work: Work, result: TurnResult) -> None:
            stopped = [
                r["result"] for r in result.tool_results if r["result"].get("resultado") == CEILING
            ]
            reply = stopped[-1]["mensagem"] if stopped else (result.text or "Certo.")
            # Message, its conversa.mensagem event and its delivery commit with the turn;
            # the channel's worker delivers it after the commit.
            self.conversations.say(conversa_id, "agente", reply, agent=CUSTOMER_SERVICE, tx=work)
            replied.append(reply)

        try:
            await self.runtime.run_turn(ctx, text, opening=opening, closing=closing)
        except (UnavailableError, ConfigError):
            # Ours to fix (a dependency down, or atendimento bound to a model it cannot
            # reach, e.g. without its API key): the customer gets the fixed apology.
            await self._say_unsaid(conversa_id, text, cliente_id, said)
            await self._say(conversa_id, "agente", UNAVAILABLE_REPLY)
            raise
        except (AgentPausedError, BudgetExceededError) as exc:
            # The turn check refused it: nothing ran and nobody will answer, so the message
            # waits in the inbox (unanswered) until someone replies.
            await self._say_unsaid(conversa_id, text, cliente_id, said)
            await asyncio.to_thread(self.conversations.mark_unanswered, conversa_id, exc.message)
            if isinstance(exc, BudgetExceededError):
                raise
            return {"state": "paused", "operator": None, "reply": None, "attempts": []}
        except Exception:
            await self._say_unsaid(conversa_id, text, cliente_id, said)
            raise
        finally:
            self._stopped.discard(id(ctx))
            attempts = self._attempts.pop(id(ctx), [])
        return {"state": "bot", "operator": None, "reply": replied[-1], "attempts": attempts}

    async def answer_waiting(self) -> list[str]:
        """Answer every customer whose message no agent answered (``unanswered``), now that
        ``atendimento`` runs again: one turn on each one's latest message, recorded once
        already, so only the reply is written. A conversation a person holds is theirs."""
        answered = []
        for row in await asyncio.to_thread(self.conversations.unanswered):
            conversa_id = str(row["conversa_id"])
            held = await asyncio.to_thread(self.conversations.state, conversa_id)
            if held.state == "human":
                continue
            recent = await asyncio.to_thread(self.conversations.newest_messages, conversa_id, 20)
            asked = [m for m in recent if m.autor == "cliente"]
            if not asked:
                continue
            ctx = TurnContext(None, conversa_id, CUSTOMER_SERVICE)

            def closing(work: Work, result: TurnResult, conversa_id: str = conversa_id) -> None:
                reply = result.text or "Certo."
                self.conversations.say(
                    conversa_id, "agente", reply, agent=CUSTOMER_SERVICE, tx=work
                )

            try:
                await self.runtime.run_turn(
                    ctx, asked[-1].texto, opening=lambda work: None, closing=closing
                )
            except (AgentPausedError, BudgetExceededError):
                break  # refused again: they keep waiting in the inbox
            finally:
                self._stopped.discard(id(ctx))
                self._attempts.pop(id(ctx), None)
            answered.append(conversa_id)
        return answered

    async def _say_unsaid(
        self, conversa_id: str, text: str, cliente_id: str | None, said: list[bool]
    ) -> None:
        # A refused (or failed) turn never opened: the customer's message is still recorded
        # (unless it names another customer: then it is refused again, and nothing is).
        if not said:
            await self._say(conversa_id, "cliente", text, cliente_id)

    async def _say(
        self, conversa_id: str, autor: Role, text: str, cliente_id: str | None = None
    ) -> None:
        # Message, its conversa.mensagem event and (for the agent's) its delivery commit
        # together; the channel's worker delivers it after the commit.
        await asyncio.to_thread(
            self.conversations.say,
            conversa_id,
            autor,
            text,
            agent=CUSTOMER_SERVICE if autor == "agente" else None,
            cliente_id=cliente_id,
        )
