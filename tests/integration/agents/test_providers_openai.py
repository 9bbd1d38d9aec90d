"""OpenAI-compatible provider against a real loopback HTTP server speaking the wire format."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from backend.agents.providers import (
    ProviderError,
    ProviderTimeoutError,
    ToolResultMessage,
    ToolSpec,
    UserMessage,
)
from backend.agents.providers.openai import OpenAIProvider

SCHEMA = {
    "type": "object",
    "properties": {"pedidoId": {"type": "string"}},
    "required": ["pedidoId"],
    "additionalProperties": False,
}
TOOLS = [ToolSpec("consultar-status-pedido", "Read the status of one order.", SCHEMA)]


def completion(message: dict[str, Any], finish_reason: str) -> dict[str, Any]:
    """A chat.completion body as OpenAI returns it."""
    return {
        "id": "chatcmpl-123",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": "gpt-4o-mini-2024-07-18",
        "system_fingerprint": "fp_1",
        "choices": [
            {"index": 0, "message": message, "logprobs": None, "finish_reason": finish_reason}
        ],
        "usage": {"prompt_tokens": 82, "completion_tokens": 17, "total_tokens": 99},
    }


@dataclass
class FakeServer:
    """Answers queued (status, body, delay) tuples and records every request."""

    url: str
    replies: list[tuple[int, Any, float]] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)


@pytest.fixture
def server() -> Iterator[FakeServer]:
    state = FakeServer(url="")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            state.requests.append(
                {
                    "path": self.path,
                    "headers": dict(self.headers),
                    "body": json.loads(self.rfile.read(length)),
                }
            )
            status, body, delay = state.replies.pop(0)
            time.sleep(delay)
            raw = body.encode() if isinstance(body, str) else json.dumps(body).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (the timeout test)

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    yield state
    httpd.shutdown()
    httpd.server_close()


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

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(ProviderError, match="could not be reached"):
        await OpenAIProvider("m", base_url=f"http://127.0.0.1:{port}/v1", timeout=2).complete(
            system="", messages=[UserMessage("x")], tools=[]
        )
