"""A local payment-gateway simulator: HTTP on loopback, a journal of every debit.

It honours ``Idempotency-Key`` like a real gateway: the same key returns the first
response and never debits twice, even for concurrent requests. Figures in ``prove`` and
the benchmarks come from its journal, never from assumptions. Fault injection
(:meth:`GatewaySimulator.fail_next`, the faults listed on :class:`Fault`) makes it answer
the way a real gateway can.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
import uuid
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Literal
from urllib.parse import parse_qs, urlparse

FailureMode = Literal[
    "timeout_after_debit",
    "slow_debit",
    "drop_after_debit",
    "error_500_before_debit",
    "refuse",
    "decline",
]


@dataclass(frozen=True)
class Fault:
    """One injected fault, for the next refund request.

    - ``timeout_after_debit``: debits at once, answers after ``delay_s`` (the client gave up);
    - ``slow_debit``: debits only after ``delay_s``, then answers (a lookup meanwhile: 404);
    - ``drop_after_debit``: debits, then closes the connection without an answer;
    - ``error_500_before_debit``: 500, nothing debited;
    - ``refuse``: a definitive refusal, ``status`` (402 by default) with ``{"reason": ...}``;
    - ``decline``: ``refuse`` with 402 and the issuer's reason.
    """

    mode: FailureMode
    delay_s: float = 0.0
    status: int = 402
    reason: str = "reembolso recusado pelo emissor"


@dataclass(frozen=True)
class _Reply:
    status: int
    payload: dict[str, Any]
    delay_s: float = 0.0
    drop: bool = False


@dataclass
class Debit:
    """One real debit the gateway performed."""

    id: str
    pedido_id: str
    valor: str
    idempotency_key: str | None
    ts: float = field(default_factory=time.time)

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "id": self.id,
            "pedidoId": self.pedido_id,
            "valor": self.valor,
            "idempotencyKey": self.idempotency_key,
            "ts": self.ts,
        }


class GatewaySimulator:
    """Start with :meth:`start`; ``url`` is then ``http://127.0.0.1:PORT``."""

    def __init__(
        self,
        secret: str,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        journal_path: Path | None = None,
        poll_interval_s: float = 0.05,
    ) -> None:
        self.secret = secret
        # serve_forever only notices shutdown() between polls: socketserver's default of
        # 0.5 s made every stop (one per test using the simulator) wait half a second.
        self._poll_interval_s = poll_interval_s
        self.journal: list[Debit] = []
        self._by_key: dict[str, dict[str, Any]] = {}
        self._journal_path = journal_path
        if journal_path is not None and journal_path.exists():
            # Like a real gateway, what it debited survives a restart of this process, so
            # reconciling an uncertain refund later still finds it by key.
            for line in journal_path.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    d = json.loads(line)
                    debit = Debit(
                        d["id"], d["pedidoId"], d["valor"], d.get("idempotencyKey"), d["ts"]
                    )
                    self.journal.append(debit)
                    if debit.idempotency_key:
                        self._by_key[debit.idempotency_key] = {
                            "id": debit.id,
                            "pedidoId": debit.pedido_id,
                            "valor": debit.valor,
                            "status": "aprovado",
                        }
        self._key_locks: dict[str, threading.Lock] = {}
        self._lock = threading.Lock()
        self._failures: list[Fault] = []
        self.requests = 0
        self._server = ThreadingHTTPServer((host, port), self._handler())
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """Base URL of the running simulator."""
        host, port = self._server.server_address[:2]
        name = host.decode() if isinstance(host, bytes) else str(host)
        return f"http://{name}:{port}"

    def start(self) -> GatewaySimulator:
        """Serve in a daemon thread."""
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": self._poll_interval_s},
            name="gateway-simulator",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving (returns within about one poll interval)."""
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    @property
    def identity(self) -> str:
        """Which gateway this is: its journal (what it debited survives a restart, on a
        new port), or its URL when it keeps no journal."""
        if self._journal_path is not None:
            return f"simulator:{self._journal_path.resolve()}"
        return self.url

    def fail_next(
        self,
        mode: FailureMode,
        *,
        delay_s: float = 0.0,
        status: int = 402,
        reason: str = "reembolso recusado pelo emissor",
    ) -> None:
        """Make the next refund request fail in ``mode`` (queue several for several);
        ``status`` and ``reason`` are the answer of a ``refuse``."""
        with self._lock:
            self._failures.append(Fault(mode, delay_s, status, reason))

    def debits(self) -> list[Debit]:
        """A copy of the journal."""
        with self._lock:
            return list(self.journal)

    # -- request handling ----------------------------------------------------------------

    def _refund(self, body: dict[str, Any], key: str | None) -> _Reply:
        pedido = str(body.get("pedidoId", ""))
        try:
            valor = Decimal(str(body.get("valor")))
        except (InvalidOperation, ValueError):
            return _Reply(400, {"reason": "valor inválido"})
        if not pedido or valor <= 0:
            return _Reply(400, {"reason": "pedidoId e valor > 0 são obrigatórios"})
        with self._lock:
            fault = self._failures.pop(0) if self._failures else None
        mode = fault.mode if fault else None
        if fault is not None and mode == "error_500_before_debit":
            return _Reply(500, {"erro": "falha interna simulada"}, fault.delay_s)
        if fault is not None and mode in ("refuse", "decline"):
            status = 402 if mode == "decline" else fault.status
            return _Reply(status, {"reason": fault.reason}, fault.delay_s)
        if fault is not None and mode == "slow_debit":
            time.sleep(fault.delay_s)  # nothing is debited (nor known by key) until then
        delay = fault.delay_s if fault is not None and mode == "timeout_after_debit" else 0.0
        drop = mode == "drop_after_debit"
        if key is None:
            return _Reply(201, self._debit(pedido, valor, None), delay, drop)
        with self._lock:
            key_lock = self._key_locks.setdefault(key, threading.Lock())
        with key_lock:
            if key in self._by_key:
                return _Reply(200, {**self._by_key[key], "replay": True}, delay, drop)
            response = self._debit(pedido, valor, key)
            self._by_key[key] = response
            return _Reply(201, response, delay, drop)

    def _debit(self, pedido: str, valor: Decimal, key: str | None) -> dict[str, Any]:
        debit = Debit(f"rb_{uuid.uuid4().hex[:16]}", pedido, str(valor), key)
        with self._lock:
            self.journal.append(debit)
            if self._journal_path is not None:
                with self._journal_path.open("a", encoding="utf-8") as fh:
                    fh.write(json.dumps(debit.to_dict()) + "\n")
        return {"id": debit.id, "pedidoId": pedido, "valor": str(valor), "status": "aprovado"}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        sim = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, like a real gateway behind a pool
            # Headers and body go out in two writes; with Nagle on, delayed ACKs add ~40 ms.
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: Any) -> None:
                return

            def _send(self, status: int, payload: Any) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _authorized(self) -> bool:
                if self.headers.get("Authorization") != f"Bearer {sim.secret}":
                    self._send(401, {"erro": "credencial inválida"})
                    return False
                return True

            def do_POST(self) -> None:
                if urlparse(self.path).path != "/v1/reembolsos":
                    self._send(404, {"erro": "rota desconhecida"})
                    return
                if not self._authorized():
                    return
                length = min(int(self.headers.get("Content-Length") or 0), 65536)
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except json.JSONDecodeError:
                    self._send(400, {"erro": "JSON inválido"})
                    return
                with sim._lock:
                    sim.requests += 1
                reply = sim._refund(body, self.headers.get("Idempotency-Key"))
                if reply.drop:
                    # The debit stands; the connection closes before any byte of an answer.
                    self.close_connection = True
                    with contextlib.suppress(OSError):
                        self.connection.shutdown(socket.SHUT_RDWR)
                    return
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                # the client may have given up (timeout): the debit stands, the answer is lost
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self._send(reply.status, reply.payload)

            def do_GET(self) -> None:
                parsed = urlparse(self.path)
                if parsed.path == "/v1/journal":
                    self._send(200, [d.to_dict() for d in sim.debits()])
                    return
                if parsed.path != "/v1/reembolsos":
                    self._send(404, {"erro": "rota desconhecida"})
                    return
                if not self._authorized():
                    return
                key = (parse_qs(parsed.query).get("idempotency_key") or [""])[0]
                with sim._lock:
                    found = sim._by_key.get(key)
                if found is None:
                    self._send(404, {"erro": "nenhum reembolso com esta chave"})
                else:
                    self._send(200, found)

        return Handler
