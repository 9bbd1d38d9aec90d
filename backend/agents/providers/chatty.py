"""``chatty``: the offline customer-service model, a provider like any other.

A deterministic stand-in for an LLM that insists on refunding (Lab 87's malformed
reasoning). It is the default of ``atendimento`` (``scripted`` resolves to it, see
:func:`backend.agents.providers.factory.model_binding`), so ``cadencia up --demo`` and
``cadencia prove --model chatty`` reach the teto de voltas without any network.
"""

from __future__ import annotations

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
    result_object,
)
from backend.tools.registry import CONSULTAR_STATUS_PEDIDO, EMITIR_REEMBOLSO

_PEDIDO = re.compile(r"\b(\d{3,12})\b")
_REFUND_WORDS = ("reembolso", "estorno", "caiu", "dinheiro", "de novo", "devolu", "saiu")


class ChattyAtendimentoModel:
    """Every customer message about a refund makes it call ``emitir-reembolso`` again,
    after looking the order up once to learn its value (each order its own value)."""

    name = "chatty"

    async def complete(
        self, *, system: str, messages: list[Message], tools: list[ToolSpec]
    ) -> ModelTurn:
        """The next turn, decided from the last customer message and this turn's results."""
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
        # Ids unique over the whole conversation: a real model replaying this history
        # (the binding changed mid-conversation) must not see two calls with one id.
        n = len([m for m in messages if isinstance(m, AssistantMessage)])
        if not results:
            valor = self._valor(messages, pedido)
            if wants_refund and valor:
                return self._call(n, EMITIR_REEMBOLSO, {"pedidoId": pedido, "valor": valor})
            return self._call(n, CONSULTAR_STATUS_PEDIDO, {"pedidoId": pedido})
        last = result_object(results[-1])
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
    def _valor(messages: list[Message], pedido: str) -> str | None:
        """The value this conversation looked up for ``pedido``; None until it has, so a
        new order is looked up first instead of refunded with another order's amount."""
        for m in reversed(messages):
            if isinstance(m, ToolResultMessage) and m.name == CONSULTAR_STATUS_PEDIDO:
                dados = result_object(m).get("dados") or {}
                if str(dados.get("id")) == pedido and dados.get("valor_pedido"):
                    return str(dados["valor_pedido"])
        return None
