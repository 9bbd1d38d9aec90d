"""A local customer-channel simulator: HTTP on loopback, a journal of every message.

The default channel when no ``CADENCIA_CHANNEL_WEBHOOK_URL`` is set (the backend starts
one, like the gateway simulator). It honours ``Idempotency-Key``: a message sent again
with the same key is answered as before and journaled once, even under concurrent
retries. Failure injection (:meth:`ChannelSimulator.fail_next`) lets tests make the next
requests fail with a status, before the message is journaled or after it (the answer is
lost: only the idempotency key keeps the retry from showing it twice).
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

MESSAGES_PATH = "/v1/messages"
JOURNAL_PATH = "/v1/journal"


class ChannelSimulator:
    """Start with :meth:`start`; messages go to ``url`` (``http://127.0.0.1:PORT/v1/messages``)."""

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        journal_path: Path | None = None,
        poll_interval_s: float = 0.05,
    ) -> None:
        self._poll_interval_s = poll_interval_s
        self._journal_path = journal_path
        self.journal: list[dict[str, Any]] = []
        self._by_key: dict[str, dict[str, Any]] = {}
        if journal_path is not None and journal_path.exists():
            # What the customer received survives a restart: a message retried after one
            # is still recognised by its key.
            for line in journal_path.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    entry = json.loads(line)
                    self.journal.append(entry)
                    self._by_key[entry["idempotencyKey"]] = entry
        self._lock = threading.Lock()
        self._failures: list[tuple[int, bool]] = []
        self.request_keys: list[str | None] = []
        """The ``Idempotency-Key`` of every message request, in arrival order."""
        self._server = ThreadingHTTPServer((host, port), self._handler())
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        """``http://HOST:PORT`` of the running simulator."""
        host, port = self._server.server_address[:2]
        name = host.decode() if isinstance(host, bytes) else str(host)
        return f"http://{name}:{port}"

    @property
    def url(self) -> str:
        """Where messages are POSTed."""
        return self.base_url + MESSAGES_PATH

    def start(self) -> ChannelSimulator:
        """Serve in a daemon thread."""
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": self._poll_interval_s},
            name="channel-simulator",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving (returns within about one poll interval)."""
        if self._thread is None:  # never started: shutdown() would wait for ever
            self._server.server_close()
            return
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def fail_next(self, status: int = 503, *, times: int = 1, after_receipt: bool = False) -> None:
        """Answer the next ``times`` message requests with ``status``; with
        ``after_receipt`` the message is journaled first (a lost answer)."""
        with self._lock:
            self._failures.extend([(status, after_receipt)] * times)

    def received(self) -> list[dict[str, Any]]:
        """A copy of the journal: one entry per message (per idempotency key)."""
        with self._lock:
            return list(self.journal)

    def _receive(self, body: dict[str, Any], key: str | None) -> tuple[int, dict[str, Any]]:
        with self._lock:
            self.request_keys.append(key)
            failure = self._failures.pop(0) if self._failures else None
            if failure is not None and not failure[1]:
                return failure[0], {"erro": "falha simulada"}
            if not key:
                return 400, {"erro": "Idempotency-Key é obrigatório"}
            if key in self._by_key:
                status, answer = 200, {**self._by_key[key], "replay": True}
            else:
                status, answer = 201, self._journal(body, key)
            if failure is not None:
                return failure[0], {"erro": "falha simulada depois do recebimento"}
            return status, answer

    def _journal(self, body: dict[str, Any], key: str) -> dict[str, Any]:
        entry = {**body, "idempotencyKey": key, "receivedAt": time.time()}
        self.journal.append(entry)
        self._by_key[key] = entry
        if self._journal_path is not None:
            with self._journal_path.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(entry, ensure_ascii=False) + "\n")
        return entry

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        sim = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: Any) -> None:
                return

            def _send(self, status: int, payload: Any) -> None:
                data = json.dumps(payload, ensure_ascii=False).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.wfile.write(data)

            def do_POST(self) -> None:
                if urlparse(self.path).path != MESSAGES_PATH:
                    self._send(404, {"erro": "rota desconhecida"})
                    return
                length = min(int(self.headers.get("Content-Length") or 0), 65536)
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except json.JSONDecodeError:
                    self._send(400, {"erro": "JSON inválido"})
                    return
                if not isinstance(body, dict):
                    self._send(400, {"erro": "o corpo deve ser um objeto"})
                    return
                status, payload = sim._receive(body, self.headers.get("Idempotency-Key"))
                self._send(status, payload)

            def do_GET(self) -> None:
                if urlparse(self.path).path != JOURNAL_PATH:
                    self._send(404, {"erro": "rota desconhecida"})
                    return
                self._send(200, sim.received())

        return Handler
