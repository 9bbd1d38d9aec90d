"""The offline ``chatty`` model refunds each order with that order's own value."""

from __future__ import annotations

import asyncio
import json

from backend.agents.providers.base import (
    AssistantMessage,
    Message,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from backend.agents.providers.chatty import ChattyAtendimentoModel
from backend.tools.registry import CONSULTAR_STATUS_PEDIDO, EMITIR_REEMBOLSO


def _looked_up(pedido: str, valor: str) -> list[Message]:
    call = ToolCall(f"c-{pedido}", CONSULTAR_STATUS_PEDIDO, {"pedidoId": pedido})
    dados = {"id": pedido, "status": "entregue", "valor_pedido": valor}
    result = {"resultado": "executado", "mensagem": "ok", "dados": dados}
    return [
        UserMessage(f"Quero o reembolso do pedido {pedido}"),
        AssistantMessage(None, (call,)),
        ToolResultMessage(call.id, CONSULTAR_STATUS_PEDIDO, json.dumps(result)),
        AssistantMessage("Certo."),
    ]


def _next_call(messages: list[Message]) -> ToolCall:
    turn = asyncio.run(ChattyAtendimentoModel().complete(system="", messages=messages, tools=[]))
    [call] = turn.tool_calls
    return call


def test_a_new_order_is_looked_up_before_any_refund() -> None:
    history = [*_looked_up("5501", "55.00"), UserMessage("E o reembolso do pedido 5402?")]
    call = _next_call(history)
    assert (call.name, call.arguments) == (CONSULTAR_STATUS_PEDIDO, {"pedidoId": "5402"})


def test_an_order_looked_up_before_is_refunded_with_its_own_value() -> None:
    history = [
        *_looked_up("5402", "54.00"),
        *_looked_up("5501", "55.00"),
        UserMessage("Cadê o reembolso do pedido 5402?"),
    ]
    call = _next_call(history)
    assert (call.name, call.arguments) == (EMITIR_REEMBOLSO, {"pedidoId": "5402", "valor": "54.00"})
