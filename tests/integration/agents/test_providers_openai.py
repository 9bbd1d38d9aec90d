"""OpenAI-compatible provider against a real loopback HTTP server speaking the wire format."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from backend.agents.providers import (
    ProviderError,
    ProviderTimeoutError,
    ToolResultMessage,
    ToolSpec,
    UserMessage,
)
from backend.agents.providers.openai import OpenAIProvider
from tests.openai_server import FakeServer, completion, serve

SCHEMA = {
    "type": "object",
    "properties": {"pedidoId": {"type": "string"}},
    "required": ["pedidoId"],
    "additionalProperties": False,
}
TOOLS = [ToolSpec("consultar-status-pedido", "Read the status of one order.", SCHEMA)]


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with serve() as state:
        yield state


async def test_tool_call_round_trip_on_the_wire(server: FakeServer) -> None:
    server.replies.append(
        (
            200,
            completion(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "call_9Fz",
                            "type": "function",
                            "function": {
                                "name": "consultar-status-pedido",
                                "arguments": '{"pedidoId": "4821"}',
                            },
                        }
                    ],
                    "refusal": None,
                },
                "tool_calls",
            ),
            0.0,
        )
    )
    provider = OpenAIProvider("gpt-4o-mini", base_url=server.url, api_key="sk-test", max_tokens=300)
    history = [UserMessage("Cadê meu pedido 4821?")]
    turn = await provider.complete(system="Você é o atendimento.", messages=history, tools=TOOLS)
    assert turn.text is None
    assert turn.stop_reason == "tool_use"
    assert turn.usage == {"input_tokens": 82, "output_tokens": 17}
    (call,) = turn.tool_calls
    assert (call.id, call.name, call.arguments, call.valid) == (
        "call_9Fz",
        "consultar-status-pedido",
        {"pedidoId": "4821"},
        True,
    )

    first = server.requests[0]
    assert first["path"] == "/v1/chat/completions"
    assert first["headers"]["Authorization"] == "Bearer sk-test"
    assert first["body"] == {
        "model": "gpt-4o-mini",
        "messages": [
            {"role": "system", "content": "Você é o atendimento."},
            {"role": "user", "content": "Cadê meu pedido 4821?"},
        ],
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "consultar-status-pedido",
                    "description": "Read the status of one order.",
                    "parameters": SCHEMA,
                },
            }
        ],
        "tool_choice": "auto",
        "max_tokens": 300,
    }

    server.replies.append(
        (200, completion({"role": "assistant", "content": "Seu pedido saiu."}, "stop"), 0.0)
    )
    history += [turn.as_message(), ToolResultMessage(call.id, call.name, '{"status": "enviado"}')]
    final = await provider.complete(system="Você é o atendimento.", messages=history, tools=TOOLS)
    assert (final.text, final.tool_calls, final.stop_reason) == ("Seu pedido saiu.", (), "end_turn")
    assert server.requests[1]["body"]["messages"][2:] == [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_9Fz",
                    "type": "function",
                    "function": {
                        "name": "consultar-status-pedido",
                        "arguments": '{"pedidoId": "4821"}',
                    },
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_9Fz", "content": '{"status": "enviado"}'},
    ]


async def test_malformed_arguments_become_an_invalid_call_not_a_crash(server: FakeServer) -> None:
    server.replies.append(
        (
            200,
            completion(
                {
                    "role": "assistant",
                    "content": "Vou verificar.",
                    "tool_calls": [
                        {
                            "id": "call_bad",
                            "type": "function",
                            "function": {
                                "name": "consultar-status-pedido",
                                "arguments": '{"pedidoId": 4821',
                            },
                        },
                        {
                            "id": "call_list",
                            "type": "function",
                            "function": {"name": "consultar-status-pedido", "arguments": "[1]"},
                        },
                    ],
                },
                "tool_calls",
            ),
            0.0,
        )
    )
    provider = OpenAIProvider("m", base_url=server.url)
    turn = await provider.complete(system="", messages=[UserMessage("x")], tools=TOOLS)
    bad, listed = turn.tool_calls
    assert not bad.valid
    assert "not valid JSON" in (bad.error or "")
    assert bad.raw_arguments == '{"pedidoId": 4821'
    assert not listed.valid
    assert "JSON object" in (listed.error or "")
    assert "Authorization" not in server.requests[0]["headers"]
    # Replaying the turn echoes the model's own malformed text back to it.
    server.replies.append((200, completion({"role": "assistant", "content": "ok"}, "stop"), 0.0))
    await provider.complete(
        system="",
        messages=[UserMessage("x"), turn.as_message(), ToolResultMessage("call_bad", "c", "bad")],
        tools=TOOLS,
    )
    echoed = server.requests[1]["body"]["messages"][1]["tool_calls"][0]["function"]["arguments"]
    assert echoed == '{"pedidoId": 4821'


async def test_http_errors_carry_the_endpoint_message(server: FakeServer) -> None:
    server.replies.append(
        (
            401,
            {
                "error": {
                    "message": "Incorrect API key provided",
                    "type": "invalid_request_error",
                    "param": None,
                    "code": "invalid_api_key",
                }
            },
            0.0,
        )
    )
    with pytest.raises(ProviderError, match="HTTP 401: Incorrect API key provided") as info:
        await OpenAIProvider("m", base_url=server.url, api_key="bad").complete(
            system="", messages=[UserMessage("x")], tools=[]
        )
    assert info.value.context["status"] == 401
    assert "tools" not in server.requests[0]["body"]


async def test_a_body_that_is_not_a_completion_is_a_provider_error(server: FakeServer) -> None:
    server.replies.append((200, {"choices": []}, 0.0))
    with pytest.raises(ProviderError, match="no choices"):
        await OpenAIProvider("m", base_url=server.url).complete(
            system="", messages=[UserMessage("x")], tools=[]
        )


async def test_a_slow_endpoint_times_out(server: FakeServer) -> None:
    server.replies.append((200, completion({"role": "assistant", "content": "late"}, "stop"), 0.6))
    with pytest.raises(ProviderTimeoutError, match=r"did not answer within 0\.2s"):
        await OpenAIProvider("m", base_url=server.url, timeout=0.2).complete(
            system="", messages=[UserMessage("x")], tools=[]
        )


async def test_an_unreachable_endpoint_is_a_provider_error() -> None:
    import socket

    with socket.socket() as sock:  # bound, never listening: refused, and no one else's
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        with pytest.raises(ProviderError, match="could not be reached"):
            await OpenAIProvider("m", base_url=f"http://127.0.0.1:{port}/v1", timeout=2).complete(
                system="", messages=[UserMessage("x")], tools=[]
            )
