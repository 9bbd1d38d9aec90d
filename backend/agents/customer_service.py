"""The customer-service agent (``atendimento``) and its offline model.

Every tool call of a conversation turn goes through the guard's orchestrator, so a chatty
model hits the teto de voltas exactly as in ``cadencia prove``. When the ceiling stopped a
tool in this turn, the customer gets the seed's handoff message — decided in code, not
left to the model's wording.

Internal error text never reaches the customer: a tool failure is told to the model (and
so to the customer) in the tool's own customer-facing words or a generic sentence, never
an exception message. When one of our dependencies fails during the turn (the model
provider, the gateway, the database...), the turn stops, the customer gets a fixed
apology, and the :class:`~backend.exceptions.UnavailableError` goes on to the API caller
(HTTP 502/503), so a retry is possible and nobody mistakes it for an answer.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

from backend.agents.providers.base import (
    AssistantMessage,
    Message,
    ModelTurn,
    ToolCall,
    ToolResultMessage,
    ToolSpec,
    UserMessage,
)
from backend.agents.runtime import AgentRuntime, TurnContext
from backend.agents.team import CUSTOMER_SERVICE
from backend.events import EventLog
from backend.exceptions import UnavailableError, unavailable_cause
from backend.guard.conversations import Conversations, Role
from backend.guard.orchestrator import Attempt, Orchestrator
from backend.tools.registry import CONSULTAR_STATUS_PEDIDO, EMITIR_REEMBOLSO, TOOLS

_PEDIDO = re.compile(r"\b(\d{3,12})\b")
_REFUND_WORDS = ("reembolso", "estorno", "caiu", "dinheiro", "de novo", "devolu", "saiu")
UNAVAILABLE_REPLY = (
    "Desculpe, não consigo concluir isso agora por uma instabilidade do nosso lado. "
    "Pode tentar de novo em alguns minutos?"
)
FAILED_REPLY = "Não foi possível concluir a solicitação agora."


class ChattyAtendimentoModel:
    """A deterministic stand-in for an LLM that insists on refunding (Lab 87's malformed
    reasoning): every customer message about a refund makes it call ``emitir-reembolso``
    again, after looking the order up once to learn its value."""

    name = "atendimento-offline"
    spec = "chatty"  # what the roster and agent.turn show (the contract's spec name)

    async def complete(
        self, *, system: str, messages: list[Message], tools: list[ToolSpec]
    ) -> ModelTurn:
        last_user = max(
            (i for i, m in enumerate(messages) if isinstance(m, UserMessage)), default=-1
        )
        if last_user < 0:
            return ModelTurn("Olá! Como posso ajudar?")
        user = messages[last_user]
        assert isinstance(user, UserMessage)
        this_turn = messages[last_user + 1 :]
        results = [m for m in this_turn if isinstance(m, ToolResultMessage)]
        pedido = self._pedido(messages, last_user)
        if pedido is None:
            return ModelTurn("Pode me informar o número do pedido?")
        wants_refund = any(w in user.text.lower() for w in _REFUND_WORDS)
        n = len([m for m in this_turn if isinstance(m, AssistantMessage)])
        if not results:
            valor = self._valor(messages)
            if wants_refund and valor:
                return self._call(n, EMITIR_REEMBOLSO, {"pedidoId": pedido, "valor": valor})
            return self._call(n, CONSULTAR_STATUS_PEDIDO, {"pedidoId": pedido})
        last = _content(results[-1])
        if (
            results[-1].name == CONSULTAR_STATUS_PEDIDO
            and wants_refund
            and last.get("resultado") == "executado"
        ):
            valor = (last.get("dados") or {}).get("valor_pedido")
            if valor:
                return self._call(n, EMITIR_REEMBOLSO, {"pedidoId": pedido, "valor": str(valor)})
        return ModelTurn(str(last.get("mensagem") or "Certo."))

    @staticmethod
    def _call(n: int, name: str, arguments: dict[str, Any]) -> ModelTurn:
        return ModelTurn(None, (ToolCall(f"atd-{n}-{name}", name, arguments),), "tool_use")

    @staticmethod
    def _pedido(messages: list[Message], upto: int) -> str | None:
        for m in reversed(messages[: upto + 1]):
            if isinstance(m, UserMessage):
                found = _PEDIDO.search(m.text)
                if found:
                    return found.group(1)
        return None

    @staticmethod
    def _valor(messages: list[Message]) -> str | None:
        for m in reversed(messages):
            if isinstance(m, ToolResultMessage) and m.name == CONSULTAR_STATUS_PEDIDO:
                dados = _content(m).get("dados") or {}
                if dados.get("valor_pedido"):
                    return str(dados["valor_pedido"])
        return None


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


def _content(message: ToolResultMessage) -> dict[str, Any]:
    try:
        value = json.loads(message.content)
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


class CustomerService:
    """Runs customer-conversation turns through the runtime and the guard."""

    def __init__(
        self,
        *,
        events: EventLog,
        orchestrator: Orchestrator,
        conversations: Conversations,
        runtime_factory: Any = None,
        model: Any = None,
    ) -> None:
        self.events = events
        self.orchestrator = orchestrator
        self.conversations = conversations
        self._model = model or ChattyAtendimentoModel()
        tools: dict[str, Any] = {name: self._tool(name) for name in TOOLS}
        self.runtime = AgentRuntime(
            events=events,
            providers=lambda _agent, _calls: self._model,
            tools={CUSTOMER_SERVICE: tools},
            max_steps=6,
        )

    def _tool(self, ferramenta: str) -> Any:
        async def call(ctx: TurnContext, args: dict[str, Any]) -> dict[str, Any]:
            assert ctx.session_id is not None
            attempt = await asyncio.to_thread(
                self.orchestrator.call, ctx.session_id, ferramenta, args
            )
            failed = unavailable_cause(attempt.error) if attempt.resultado == "falhou" else None
            if failed is not None:
                # Recorded (falhou, claim released); the turn stops here, see the docstring.
                raise failed
            return {
                "resultado": attempt.resultado,
                "mensagem": _customer_text(attempt),
                "dados": attempt.dados,
                "tentativaNumero": attempt.record["tentativaNumero"],
            }

        return call

    async def handle_message(self, conversa_id: str, text: str) -> dict[str, Any]:
        """The customer wrote ``text``: run a turn, answer, and return reply + attempts.

        While an operator holds the conversation (``human``) the message is only recorded
        and streamed: no model turn runs, ``reply`` is None and the operator answers.
        """
        held = await asyncio.to_thread(self.conversations.state, conversa_id)
        await self._say(conversa_id, "cliente", text)
        if held.state == "human":
            return {"state": "human", "operator": held.operator, "reply": None, "attempts": []}
        first_event = await asyncio.to_thread(self.events.last_id)
        try:
            result = await self.runtime.run_turn(
                TurnContext(None, conversa_id, CUSTOMER_SERVICE), text
            )
        except UnavailableError:
            await self._say(conversa_id, "agente", UNAVAILABLE_REPLY)
            raise
        stopped = [
            r["result"]
            for r in result.tool_results
            if r["result"].get("resultado") == "bloqueado_por_teto"
        ]
        reply = stopped[-1]["mensagem"] if stopped else (result.text or "Certo.")
        await self._say(conversa_id, "agente", reply)
        attempts = [
            e.payload
            for e in await asyncio.to_thread(self.events.after, first_event, 1000)
            if e.type == "TENTATIVA_DE_FERRAMENTA_REGISTRADA" and e.session_id == conversa_id
        ]
        return {"state": "bot", "operator": None, "reply": reply, "attempts": attempts}

    async def _say(self, conversa_id: str, autor: Role, text: str) -> None:
        # Message, its conversa.mensagem event and (for the agent's) its delivery commit
        # together; the channel's worker delivers it after the commit.
        await asyncio.to_thread(
            self.conversations.say,
            conversa_id,
            autor,
            text,
            agent=CUSTOMER_SERVICE if autor == "agente" else None,
        )
