"""A page survives ``kill -9``: a real ``cadencia serve`` (SQLite) has a takeover past its
SLA while the PagerDuty receiver is down, so the trigger waits in the outbox, retrying.
The process is killed; the receiver comes up; a restarted serve delivers the trigger once."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from backend.erp.seed import upsert_pedidos
from backend.store.db import open_database
from backend.store.migrate import migrate
from tests.integration.api.conftest import ASKS
from tests.integration.oncall.test_pages import KEY, Receiver

TOKEN = "page-crash-token"
SERVE = (sys.executable, "-m", "backend.cli", "serve")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _until(check: Callable[[], Any], what: str, timeout: float, log: Path) -> Any:
    deadline = time.monotonic() + timeout
    while not (found := check()):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}:\n{log.read_text()[-3000:]}")
        time.sleep(0.1)
    return found


def _serve(data_dir: Path, log: Path, receiver_port: int) -> tuple[subprocess.Popen[bytes], str]:
    port = _free_port()
    env = {
        **os.environ,
        "CADENCIA_TOKEN": TOKEN,
        "CADENCIA_SLA": '{"interruption": "0s"}',
        "CADENCIA_PAGERDUTY_ROUTING_KEY": KEY,
        "CADENCIA_PAGERDUTY_URL": f"http://127.0.0.1:{receiver_port}/v2/enqueue",
        "CADENCIA_ONCALL_SWEEP_S": "0.2",
    }
    with log.open("ab") as out:
        proc = subprocess.Popen(
            [*SERVE, f"--port={port}", f"--data-dir={data_dir}"],  # a path is never an option
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"

    def healthy() -> bool:
        assert proc.poll() is None, f"serve exited:\n{log.read_text()[-3000:]}"
        try:
            return httpx.get(f"{url}/healthz", timeout=1).status_code == 200
        except httpx.HTTPError:
            return False

    _until(healthy, "serve to answer /healthz", 90, log)
    return proc, url


def _page_jobs(db_path: Path) -> list[tuple[str, int]]:
    import sqlite3

    conn = sqlite3.connect(db_path, timeout=30)
    try:
        rows = conn.execute("SELECT state, attempts FROM jobs WHERE kind = 'oncall.page'")
        return [(str(r[0]), int(r[1])) for r in rows]
    finally:
        conn.close()


def test_a_page_due_while_the_receiver_is_down_is_delivered_once_after_kill_9(
    tmp_path: Path,
) -> None:
    data_dir, log = tmp_path / "data", tmp_path / "serve.log"
    receiver_port = _free_port()  # nothing listens yet: PagerDuty is unreachable
    db_path = data_dir / "cadencia.sqlite3"
    first, url = _serve(data_dir, log, receiver_port)
    try:
        db = open_database(f"sqlite:///{db_path}")
        migrate(db)
        upsert_pedidos(db, [{"pedidoId": "4821", "valorPedido": "129.90", "clienteId": "c-1"}])
        db.close()
        http = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {TOKEN}"})
        for text in ASKS:
            sent = http.post(
                "/api/conversations/conv-k9/messages", json={"text": text, "cliente_id": "c-1"}
            )
            assert sent.is_success, sent.text
        [item] = [i for i in http.get("/api/inbox").json() if i["kind"] == "interruption"]
        # The trigger is in the outbox and has failed at least once against the dead port.
        _until(
            lambda: any(a >= 1 and s != "done" for s, a in _page_jobs(db_path)),
            "the page to be tried",
            60,
            log,
        )
        os.kill(first.pid, signal.SIGKILL)
        first.wait(30)
    finally:
        if first.poll() is None:
            first.kill()
    receiver = Receiver(receiver_port)
    second, _ = _serve(data_dir, log, receiver_port)
    try:
        _until(lambda: receiver.actions(item["id"]), "the trigger after the restart", 90, log)
        time.sleep(1.5)  # more sweeps and job rounds: nothing is sent twice
        assert receiver.actions(item["id"]) == ["trigger"]
        assert [s for s, _ in _page_jobs(db_path)] == ["done"]
    finally:
        second.terminate()
        second.wait(30)
        receiver.server.shutdown()
