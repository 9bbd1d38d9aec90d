"""The webhook channel against a real HTTP receiver on loopback: what it sends, and which
answers (and failures) the delivery worker retries."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from backend.channel.base import OutboundMessage
from backend.channel.exceptions import ChannelError, RetryableChannelError
from backend.channel.webhook import WebhookChannel

MESSAGE = OutboundMessage(
    message_id=7,
    conversa_id="c-1",
    autor="agente",
    texto="Reembolso confirmado: R$ 129,90 — obrigado! 🙏",
    ts="2026-12-03T12:00:00Z",
    idempotency_key="msg-7",
)

Behaviour = Callable[[BaseHTTPRequestHandler], None]


class Receiver:
    """A loopback HTTP server whose answer to each POST is ``behaviour``."""

    def __init__(self) -> None:
        self.behaviour: Behaviour = answer(200)
        self.received: list[tuple[dict[str, str], bytes]] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                receiver.received.append((dict(self.headers), body))
                receiver.behaviour(self)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1/messages"
        threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def answer(status: int, body: bytes = b"{}", **headers: str) -> Behaviour:
    def respond(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(status)
        for name, value in headers.items():
            handler.send_header(name.replace("_", "-"), value)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)

    return respond


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    found = Receiver()
    yield found
    found.close()


@pytest.fixture
def channel(receiver: Receiver) -> Iterator[WebhookChannel]:
    found = WebhookChannel(receiver.url, timeout_s=0.5)
    yield found
    found.close()


def test_posts_the_message_as_utf8_json_with_its_idempotency_key(
    receiver: Receiver, channel: WebhookChannel
) -> None:
    channel.send(MESSAGE)
    channel.send(MESSAGE)  # the pooled connection is reused
    assert len(receiver.received) == 2
    headers, body = receiver.received[0]
    assert headers["Idempotency-Key"] == "msg-7"
    assert headers["Content-Type"] == "application/json"
    assert json.loads(body.decode("utf-8")) == MESSAGE.body()


@pytest.mark.parametrize("status", [200, 201, 202, 204])
def test_any_2xx_is_delivered(receiver: Receiver, channel: WebhookChannel, status: int) -> None:
    receiver.behaviour = answer(status, b"")
    channel.send(MESSAGE)


@pytest.mark.parametrize("status", [500, 502, 503, 429])
def test_5xx_and_429_are_retried_with_the_receivers_retry_after(
    receiver: Receiver, channel: WebhookChannel, status: int
) -> None:
    receiver.behaviour = answer(status, b"busy", Retry_After="3")
    with pytest.raises(RetryableChannelError) as raised:
        channel.send(MESSAGE)
    assert raised.value.retry_after == 3.0
    assert f"HTTP {status}: busy" in raised.value.message


def test_a_retry_after_date_leaves_the_delay_to_the_backoff(
    receiver: Receiver, channel: WebhookChannel
) -> None:
    receiver.behaviour = answer(503, Retry_After="Wed, 21 Oct 2026 07:28:00 GMT")
    with pytest.raises(RetryableChannelError) as raised:
        channel.send(MESSAGE)
    assert raised.value.retry_after is None


@pytest.mark.parametrize("status", [400, 401, 404, 409, 422, 301, 302])
def test_other_answers_are_a_refusal_for_good(
    receiver: Receiver, channel: WebhookChannel, status: int
) -> None:
    receiver.behaviour = answer(status, "não".encode() * 200, Location="http://127.0.0.1:1/")
    with pytest.raises(ChannelError) as raised:
        channel.send(MESSAGE)
    assert not isinstance(raised.value, RetryableChannelError)
    assert raised.value.message.startswith(f"HTTP {status}: não")
    assert len(receiver.received) == 1  # a redirect is not followed


def test_a_receiver_that_is_down_is_retried() -> None:
    with socket.socket() as sock:  # bound, never listening: refused, and no one else's
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        channel = WebhookChannel(f"http://127.0.0.1:{port}/v1/messages", timeout_s=0.5)
        with pytest.raises(RetryableChannelError, match=r"^NewConnectionError: "):
            channel.send(MESSAGE)


def test_a_receiver_that_does_not_answer_in_time_is_retried(
    receiver: Receiver, channel: WebhookChannel
) -> None:
    receiver.behaviour = lambda handler: time.sleep(10)
    started = time.monotonic()
    with pytest.raises(RetryableChannelError, match=r"^ReadTimeoutError: "):
        channel.send(MESSAGE)
    assert time.monotonic() - started < 8  # the 0.5 s read timeout, not the receiver


def test_a_connection_dropped_before_the_answer_is_retried(
    receiver: Receiver, channel: WebhookChannel
) -> None:
    def drop(handler: BaseHTTPRequestHandler) -> None:
        handler.connection.shutdown(socket.SHUT_RDWR)
        handler.close_connection = True

    receiver.behaviour = drop
    with pytest.raises(RetryableChannelError):
        channel.send(MESSAGE)
    receiver.behaviour = answer(200)
    channel.send(MESSAGE)  # the next attempt opens a fresh connection
    assert len(receiver.received) == 2
