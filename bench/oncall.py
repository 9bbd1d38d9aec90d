"""How fast an item waiting for a human reaches the person on call, with a backlog.

``python -m bench.oncall [--backlog N] [--events M] [--samples K] [--json FILE]``

A real ``cadencia serve`` (SQLite) with ``N`` open items already in its inbox (pending
``decide()`` approvals, within their SLA) and ``M`` events of history (``bench._fill``),
the takeover SLA set to 0 and PagerDuty pointed at a loopback receiver speaking Events API
v2. Each sample is a customer the teto de voltas hands to a person:

* ``page``: the takeover's creation (the answer to the message that opened it) → the
  ``trigger`` received;
* ``resolve``: the operator's decision (the answer to ``resolve``, after a ``claim``) →
  the ``resolve`` received.

Beside them, ``raw``: the same event POSTed straight to the receiver, the floor of any
delivery. Targets: p99 of ``page`` and ``resolve`` < 2 s.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx

from bench._common import print_table, write_json

TOKEN = "bench-oncall-token"
KEY = "BENCHR0UT1NGKEY00000000000000000"
ASKS = [
    "Quero o reembolso do pedido 4821",
    "Já caiu?",
    "Ainda não vi o dinheiro",
    "Faz o estorno de novo",
    "Olá? saiu o reembolso?",
]
TARGET_P99_S = 2.0


class Receiver:
    """PagerDuty's enqueue endpoint on loopback: when each (dedup_key, action) arrived."""

    def __init__(self) -> None:
        self.seen: dict[tuple[str, str], float] = {}
        self.lock = threading.Lock()
        me = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with me.lock:
                    me.seen.setdefault((body["dedup_key"], body["event_action"]), time.monotonic())
                self.send_response(202)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"{}")

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/v2/enqueue"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def wait(self, key: str, action: str, timeout: float = 60.0) -> float:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if (key, action) in self.seen:
                    return self.seen[(key, action)]
            time.sleep(0.005)
        raise SystemExit(f"no {action} for {key} within {timeout:.0f} s")


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _prepare(data_dir: Path, backlog: int, events: int) -> str:
    """The database: history, the backlog of open items, the order the customers ask about."""
    from backend.agents.store import TeamStore
    from backend.erp.seed import upsert_pedidos
    from backend.events import EventLog
    from backend.store.db import open_database
    from backend.store.migrate import migrate

    url = f"sqlite:///{data_dir / 'cadencia.sqlite3'}"
    if events:
        from bench._fill import fill

        fill(url, events)
    db = open_database(url)
    try:
        migrate(db)
        store = TeamStore(EventLog(db))
        project = store.create_project("bench-oncall", module_map=None)
        for n in range(backlog):
            store.request_approval(
                project_id=project.id,
                session_id=None,
                agent="arquiteto",
                action="open_adr_pr",
                payload={"adr": f"{n:05d}-backlog"},
                stage="default",
                rule="open_adr_pr",
            )
        upsert_pedidos(db, [{"pedidoId": "4821", "valorPedido": "129.90", "clienteId": "c-1"}])
    finally:
        db.close()
    return url


@contextlib.contextmanager
def _serve(data_dir: Path, url: str, receiver: Receiver) -> Iterator[str]:
    port = _port()
    env = {
        **os.environ,
        "CADENCIA_TOKEN": TOKEN,
        "CADENCIA_SLA": '{"interruption": "0s"}',
        "CADENCIA_PAGERDUTY_ROUTING_KEY": KEY,
        "CADENCIA_PAGERDUTY_URL": receiver.url,
    }
    log = (data_dir / "serve.log").open("w")
    proc = subprocess.Popen(
        # Each value bound to its option with "=": a path or URL starting with "-" stays a
        # value (serve takes no positional argument, so a "--" would change nothing).
        [
            *(sys.executable, "-m", "backend.cli", "serve", f"--data-dir={data_dir}"),
            *(f"--database={url}", f"--port={port}", "--log-level=WARNING"),
        ],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 300
        while True:
            if proc.poll() is not None:
                raise SystemExit(f"cadencia serve exited: see {log.name}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                    break
            if time.monotonic() > deadline:
                raise SystemExit("cadencia serve not healthy after 300 s")
            time.sleep(0.1)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def _pct(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(pct / 100 * (len(ordered) - 1)))]


def measure(backlog: int, events: int, samples: int) -> dict[str, Any]:
    """Run the bench; the latencies in seconds and whether the targets hold."""
    receiver = Receiver()
    with tempfile.TemporaryDirectory(prefix="bench-oncall-") as tmp:
        data_dir = Path(tmp)
        url = _prepare(data_dir, backlog, events)
        page: list[float] = []
        resolve: list[float] = []
        raw: list[float] = []
        with _serve(data_dir, url, receiver) as base:
            http = httpx.Client(base_url=base, headers={"Authorization": f"Bearer {TOKEN}"})
            for n in range(samples):
                conversa = f"conv-bench-{n}"
                for text in ASKS:
                    http.post(
                        f"/api/conversations/{conversa}/messages",
                        json={"text": text, "cliente_id": "c-1"},
                        timeout=60,
                    ).raise_for_status()
                    opened = time.monotonic()
                # Each sample's takeover is resolved before the next opens: it is the only one.
                [ident] = http.get("/api/inbox", params={"kind": "interruption"}).json()
                item_id = ident["id"]
                page.append(receiver.wait(item_id, "trigger") - opened)
                target = ident["target_id"]
                http.post(f"/api/interruptions/{target}/claim", json={}).raise_for_status()
                http.post(
                    f"/api/interruptions/{target}/resolve",
                    json={"action": "deny", "reply": "Não podemos reembolsar."},
                    timeout=60,
                ).raise_for_status()
                decided = time.monotonic()
                resolve.append(receiver.wait(item_id, "resolve") - decided)
                started = time.monotonic()
                httpx.post(
                    receiver.url,
                    json={"routing_key": KEY, "event_action": "trigger", "dedup_key": f"raw-{n}"},
                )
                raw.append(time.monotonic() - started)
    receiver.server.shutdown()
    out: dict[str, Any] = {"backlog": backlog, "events": events, "samples": samples}
    for name, values in (("page", page), ("resolve", resolve), ("raw", raw)):
        out[name] = {
            "p50_s": statistics.median(values),
            "p99_s": _pct(values, 99),
            "max_s": max(values),
        }
    out["targets"] = {
        "page_p99_lt_2s": out["page"]["p99_s"] < TARGET_P99_S,
        "resolve_p99_lt_2s": out["resolve"]["p99_s"] < TARGET_P99_S,
    }
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backlog", type=int, default=10_000, help="open items already waiting")
    parser.add_argument("--events", type=int, default=0, help="events of history (bench._fill)")
    parser.add_argument("--samples", type=int, default=30)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    result = measure(args.backlog, args.events, args.samples)
    rows = []
    for name in ("page", "resolve", "raw"):
        got = result[name]
        target = "" if name == "raw" else f"p99 < {TARGET_P99_S:g} s"
        value = f"p50 {got['p50_s'] * 1000:.0f} ms, p99 {got['p99_s'] * 1000:.0f} ms"
        rows.append((name, value, target))
    print_table(
        f"bench.oncall: {args.backlog} open items, {args.events} events, {args.samples} samples",
        rows,
    )
    for target, ok in result["targets"].items():
        print(f"{target}: {'met' if ok else 'NOT met'}")
    if args.json:
        write_json(args.json, result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
