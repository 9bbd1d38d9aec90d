"""A local payment-gateway simulator: HTTP on loopback, a journal of every debit.

It honours ``Idempotency-Key`` like a real gateway: the same key returns the first
response and never debits twice, even for concurrent requests. Figures in ``prove`` and
the benchmarks come from its journal, never from assumptions. Failure injection lets
tests lose a response after the debit happened (the ``resultado_incerto`` case).
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
import uuid
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Literal
from urllib.parse import parse_qs, urlparse

FailureMode = Literal["timeout_after_debit", "error_500_before_debit", "decline"]


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
        self._failures: list[tuple[FailureMode, float]] = []
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

    def fail_next(self, mode: FailureMode, *, delay_s: float = 0.0) -> None:
        """Make the next refund request fail in ``mode`` (queue several for several)."""
        with self._lock:
            self._failures.append((mode, delay_s))

    def debits(self) -> list[Debit]:
        """A copy of the journal."""
        with self._lock:
            return list(self.journal)

    # -- request handling ----------------------------------------------------------------

    def _refund(self, body: dict[str, Any], key: str | None) -> tuple[int, dict[str, Any], float]:
        pedido = str(body.get("pedidoId", ""))
        try:
            valor = Decimal(str(body.get("valor")))
        except (InvalidOperation, ValueError):
            return 400, {"erro": "valor inválido"}, 0.0
        if not pedido or valor <= 0:
            return 400, {"erro": "pedidoId e valor > 0 são obrigatórios"}, 0.0
        with self._lock:
            failure = self._failures.pop(0) if self._failures else None
        if failure and failure[0] == "error_500_before_debit":
            return 500, {"erro": "falha interna simulada"}, failure[1]
        if failure and failure[0] == "decline":
            return 402, {"erro": "reembolso recusado pelo emissor"}, failure[1]
        delay = failure[1] if failure else 0.0
        if key is None:
            return 201, self._debit(pedido, valor, None), delay
        with self._lock:
            key_lock = self._key_locks.setdefault(key, threading.Lock())
        with key_lock:
            if key in self._by_key:
                return 200, {**self._by_key[key], "replay": True}, delay
            response = self._debit(pedido, valor, key)
            self._by_key[key] = response
            return 201, response, delay

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
                status, payload, delay = sim._refund(body, self.headers.get("Idempotency-Key"))
                if delay:
                    time.sleep(delay)
                # the client may have given up (timeout): the debit stands, the answer is lost
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self._send(status, payload)

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
