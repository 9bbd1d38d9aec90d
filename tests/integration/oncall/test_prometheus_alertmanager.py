"""The shipped alert rules on the real components: Debian's ``prometheus`` scrapes a live
backend's ``/metrics``, evaluates ``deploy/prometheus/alerts.yml`` and sends to Debian's
``prometheus-alertmanager``, which delivers to a loopback webhook. A takeover past its SLA
(0 s here) arrives there as a firing ``CadenciaCustomerWaitingPastSla`` alert."""

from __future__ import annotations

import json
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from backend.erp.seed import upsert_pedidos
from tests.ci import require_binary
from tests.integration.api.conftest import ASKS, Live, live_backend, live_settings

ROOT = Path(__file__).resolve().parents[3]
RULES = ROOT / "deploy" / "prometheus" / "alerts.yml"
DEADLINE_S = 90.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Receiver:
    """A loopback webhook that keeps every JSON body Alertmanager posts."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        received = self.bodies

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                size = int(self.headers.get("Content-Length") or 0)
                received.append(json.loads(self.rfile.read(size) or b"{}"))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/alerts"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def firing(self, alertname: str) -> list[dict[str, Any]]:
        return [
            alert
            for body in list(self.bodies)
            for alert in body.get("alerts", [])
            if alert["labels"].get("alertname") == alertname and alert["status"] == "firing"
        ]


def _start(args: list[str], log: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(args, stdout=log.open("wb"), stderr=subprocess.STDOUT)


@pytest.fixture
def live(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Live]:
    request.param = "sqlite"  # type: ignore[attr-defined]  # what live_settings reads
    settings = live_settings(request, tmp_path, reconcile_interval_s=3600, sla={"interruption": 0})
    for running in live_backend(settings):
        upsert_pedidos(
            running.backend.db, [{"pedidoId": "4821", "valorPedido": "129.90", "clienteId": "c-1"}]
        )
        yield running


def test_a_breaching_takeover_reaches_a_webhook_through_prometheus_and_alertmanager(
    live: Live, tmp_path: Path
) -> None:
    prometheus = require_binary("prometheus")
    alertmanager = require_binary("prometheus-alertmanager")
    receiver = Receiver()
    am_port, prom_port = _free_port(), _free_port()
    am_config = tmp_path / "alertmanager.yml"
    am_config.write_text(
        "route:\n  receiver: hook\n  group_wait: 1s\n  group_interval: 1s\n"
        f"receivers:\n  - name: hook\n    webhook_configs:\n      - url: {receiver.url}\n"
    )
    target = live.url.removeprefix("http://").rstrip("/")
    prom_config = tmp_path / "prometheus.yml"
    prom_config.write_text(
        "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
        f"rule_files:\n  - {RULES}\n"
        "scrape_configs:\n  - job_name: cadencia\n"
        f"    static_configs:\n      - targets: ['{target}']\n"
        "alerting:\n  alertmanagers:\n"
        f"    - static_configs:\n        - targets: ['127.0.0.1:{am_port}']\n"
    )
    procs = [
        _start(
            [
                alertmanager,
                f"--config.file={am_config}",
                f"--storage.path={tmp_path / 'am'}",
                f"--web.listen-address=127.0.0.1:{am_port}",
                "--cluster.listen-address=",
            ],
            tmp_path / "alertmanager.log",
        ),
        _start(
            [
                prometheus,
                f"--config.file={prom_config}",
                f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                f"--web.listen-address=127.0.0.1:{prom_port}",
            ],
            tmp_path / "prometheus.log",
        ),
    ]
    try:
        for text in ASKS:  # the teto de voltas hands the customer to a person
            assert live.http.post(
                "/api/conversations/conv-am/messages", json={"text": text, "cliente_id": "c-1"}
            ).is_success
        deadline = time.monotonic() + DEADLINE_S
        while not receiver.firing("CadenciaCustomerWaitingPastSla"):
            dead = [p.args[0] for p in procs if p.poll() is not None]
            logs = "\n".join(f.read_text()[-2000:] for f in tmp_path.glob("*.log"))
            assert not dead, f"{dead} exited:\n{logs}"
            assert time.monotonic() < deadline, f"no alert reached the webhook:\n{logs}"
            time.sleep(0.5)
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
        receiver.server.shutdown()
    [alert, *_] = receiver.firing("CadenciaCustomerWaitingPastSla")
    assert alert["labels"]["severity"] == "critical"
    assert alert["labels"]["kind"] == "interruption"
    assert alert["annotations"]["summary"].startswith("1 customer conversation(s)")
