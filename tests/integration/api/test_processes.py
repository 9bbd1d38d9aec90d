"""Real ``cadencia serve`` processes: two on one PostgreSQL, and graceful SIGTERM."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from backend.erp.seed import upsert_pedidos
from backend.gateway.simulator import GatewaySimulator
from backend.secrets.base import FileSecretStore
from backend.store.db import open_database
from backend.store.migrate import migrate

TOKEN = "proc-token-123"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _serve(
    data_dir: Path, database: str, env_extra: dict[str, str] | None = None
) -> tuple[subprocess.Popen, str]:
    port = _free_port()
    env = {**os.environ, "CADENCIA_TOKEN": TOKEN, **(env_extra or {})}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "backend.cli",
            "serve",
            "--port",
            str(port),
            "--data-dir",
            str(data_dir),
            "--database",
            database,
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(proc.stdout.read().decode() if proc.stdout else "serve exited")
        try:
            if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            time.sleep(0.2)
    proc.kill()
    raise AssertionError("serve did not come up")


def _client(url: str) -> httpx.Client:
    return httpx.Client(base_url=url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60)


@pytest.fixture
def two_backends(pg_url: str, tmp_path: Path) -> Iterator[tuple[str, str, GatewaySimulator]]:
    data_dir = tmp_path / "data"
    store = FileSecretStore(data_dir / "secrets")
    sim = GatewaySimulator(store.ensure("cadencia/gateway-pagamento")).start()
    db = open_database(pg_url)
    migrate(db)
    upsert_pedidos(db, [{"pedidoId": "4821", "valorPedido": "129.90", "clienteId": "c-1"}])
    db.close()
    env = {"CADENCIA_GATEWAY_URL": sim.url}
    a, url_a = _serve(data_dir, pg_url, env)
    b, url_b = _serve(data_dir, pg_url, env)
    try:
        yield url_a, url_b, sim
    finally:
        for proc in (a, b):
            proc.terminate()
            proc.wait(30)
        sim.stop()


def test_event_through_one_process_reaches_sse_client_of_the_other(two_backends) -> None:
    url_a, url_b, _ = two_backends
    seen: list[dict] = []
    ready = threading.Event()

    def listen() -> None:
        with httpx.stream(
            "GET",
            f"{url_b}/api/events/stream",
            headers={"Authorization": f"Bearer {TOKEN}"},
            timeout=30,
        ) as response:
            ready.set()
            for line in response.iter_lines():
                if line.startswith("data:"):
                    event = json.loads(line[5:])
                    seen.append(event)
                    if (
                        event["type"] == "conversa.mensagem"
                        and event["payload"]["texto"] == "olá via A"
                    ):
                        return

    thread = threading.Thread(target=listen, daemon=True)
    thread.start()
    ready.wait(10)
    time.sleep(0.5)
    with _client(url_a) as http:
        assert (
            http.post(
                "/api/conversations/conv-x/messages",
                json={"text": "olá via A", "cliente_id": "c-1"},
            ).status_code
            == 200
        )
    thread.join(20)
    assert any(
        e["type"] == "conversa.mensagem" and e["payload"]["texto"] == "olá via A" for e in seen
    )


def test_refund_storm_split_across_two_processes_debits_once(two_backends) -> None:
    url_a, url_b, sim = two_backends
    clients = [_client(url_a), _client(url_b)]

    def ask(i: int) -> int:
        http = clients[i % 2]
        return http.post(
            f"/api/conversations/storm-{i}/messages",
            json={"text": "Quero o reembolso do pedido 4821", "cliente_id": "c-1"},
        ).status_code

    with ThreadPoolExecutor(16) as pool:
        codes = list(pool.map(ask, range(60)))
    for c in clients:
        c.close()
    assert codes == [200] * 60
    assert len(sim.debits()) == 1


def test_sigterm_finishes_in_flight_work_and_loses_no_event(tmp_path: Path) -> None:
    database = f"sqlite:///{tmp_path / 'state.sqlite3'}"
    proc, url = _serve(tmp_path / "data", database)
    results: list[int] = []

    def slow_request() -> None:
        with _client(url) as http:
            results.append(
                http.post(
                    "/api/conversations/conv-term/messages",
                    json={"text": "Qual o status do pedido 777?", "cliente_id": "c-1"},
                ).status_code
            )

    worker = threading.Thread(target=slow_request)
    worker.start()
    time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    worker.join(30)
    assert proc.wait(30) == 0
    db = open_database(database)
    try:
        with db.transaction(write=False) as tx:
            tx.execute_sql("SELECT payload FROM events WHERE type = 'conversa.mensagem'")
            texts = [json.loads(r["payload"])["texto"] for r in tx._cursor.fetchall()]
    finally:
        db.close()
    if results == [200]:  # the request was accepted before shutdown: its whole turn is logged
        assert "Qual o status do pedido 777?" in texts
        assert len(texts) == 2
    else:  # refused at the door: nothing half-done
        assert texts == []


def test_two_processes_share_one_reconcile_job(pg_url: str, tmp_path: Path) -> None:
    """Each tick is one row claimed by one process, not one loop per process."""
    env = {"CADENCIA_RECONCILE_INTERVAL_S": "0.3"}
    db = open_database(pg_url)
    migrate(db)
    a, _ = _serve(tmp_path / "data", pg_url, env)
    b, _ = _serve(tmp_path / "data", pg_url, env)
    ticks: set[float] = set()
    try:
        deadline = time.monotonic() + 60
        while len(ticks) < 4:
            assert time.monotonic() < deadline, f"the reconcile job ticked {len(ticks)} time(s)"
            with db.transaction(write=False) as tx:
                tx.execute_sql("SELECT state, run_at FROM jobs WHERE kind = 'reconcile'")
                rows = tx._cursor.fetchall()
            assert len(rows) == 1
            assert rows[0]["state"] in ("queued", "running")
            ticks.add(rows[0]["run_at"])
            time.sleep(0.05)
    finally:
        for proc in (a, b):
            proc.terminate()
            proc.wait(30)
        db.close()
