"""A loopback HTTP server speaking the OpenAI chat-completions wire format (for tests).

It answers queued ``(status, body, delay[, headers])`` replies in order and records every
request, so a test can assert what the provider really sent. With no reply queued it asks its
``responder`` (a model written over the wire format: request body in, completion out), and
without one it answers 500 with an OpenAI error body (a test that expected no more calls
then sees the extra request). :meth:`FakeServer.fail` queues an OpenAI error (429 with
``Retry-After``, 500...), :meth:`FakeServer.hang` a reply that comes too late;
``completion(..., usage=)`` sets the token counts the server reports.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def completion(
    message: dict[str, Any], finish_reason: str, usage: tuple[int, int] = (82, 17)
) -> dict[str, Any]:
    """A chat.completion body as OpenAI returns it (``usage``: prompt, completion tokens)."""
    prompt, answer = usage
    return {
        "id": "chatcmpl-123",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": "gpt-4o-mini-2024-07-18",
        "system_fingerprint": "fp_1",
        "choices": [
            {"index": 0, "message": message, "logprobs": None, "finish_reason": finish_reason}
        ],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": answer,
            "total_tokens": prompt + answer,
        },
    }


def tool_call(
    call_id: str, name: str, arguments: dict[str, Any], usage: tuple[int, int] = (82, 17)
) -> dict[str, Any]:
    """A completion whose assistant message calls one tool."""
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
        ],
        "refusal": None,
    }
    return completion(message, "tool_calls", usage)


def tool_calls(*calls: tuple[str, str, dict[str, Any] | str]) -> dict[str, Any]:
    """A completion calling several tools: ``(id, name, arguments)``; arguments given as a
    string are sent verbatim (a model's malformed JSON)."""
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": call_id,
                "type": "function",
                "function": {
                    "name": name,
                    "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments),
                },
            }
            for call_id, name, arguments in calls
        ],
        "refusal": None,
    }
    return completion(message, "tool_calls")


def text(content: str, usage: tuple[int, int] = (82, 17)) -> dict[str, Any]:
    """A completion that answers with text and calls nothing."""
    return completion({"role": "assistant", "content": content, "refusal": None}, "stop", usage)


def error_body(message: str, kind: str = "server_error") -> dict[str, Any]:
    """An OpenAI error body."""
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}


@dataclass
class FakeServer:
    """Answers queued (status, body, delay) tuples and records every request."""

    url: str
    replies: list[tuple[Any, ...]] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    responder: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    """Answers (200) a request body when no reply is queued."""

    def answer(self, *bodies: dict[str, Any]) -> None:
        """Queue 200 replies with these bodies."""
        self.replies.extend((200, body, 0.0) for body in bodies)

    def fail(
        self, status: int, message: str = "upstream failed", retry_after: str | None = None
    ) -> None:
        """Queue an OpenAI error reply (``retry_after``: the ``Retry-After`` header's text)."""
        kind = "rate_limit_exceeded" if status == 429 else "server_error"
        headers = {"Retry-After": retry_after} if retry_after is not None else {}
        self.replies.append((status, error_body(message, kind), 0.0, headers))

    def hang(self, seconds: float, body: dict[str, Any] | None = None) -> None:
        """Queue a reply that comes after ``seconds`` (a client with a shorter timeout
        gives up first)."""
        self.replies.append((200, body or text("too late"), seconds))


@contextmanager
def serve() -> Iterator[FakeServer]:
    """Run a :class:`FakeServer` on 127.0.0.1 (its ``url`` ends in ``/v1``)."""
    state = FakeServer(url="")
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            with lock:
                state.requests.append(
                    {
                        "path": self.path,
                        "headers": dict(self.headers),
                        "body": json.loads(self.rfile.read(length)),
                    }
                )
                body_in = state.requests[-1]["body"]
                reply = state.replies.pop(0) if state.replies else None
                if reply is None and state.responder is not None:
                    reply = (200, state.responder(body_in), 0.0)
            status, body, delay, *extra = reply or (
                500,
                {"error": {"message": "no reply queued", "type": "server_error"}},
                0.0,
            )
            headers: dict[str, str] = extra[0] if extra else {}
            time.sleep(delay)
            raw = body.encode() if isinstance(body, str) else json.dumps(body).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(raw)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (the timeout test)

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    # A short poll interval: shutdown() waits up to one interval (0.5 s by default, per test).
    thread = threading.Thread(
        target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    state.url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()
