"""Guarded decisions over HTTP against a bare FastAPI endpoint doing one INSERT.

``python -m bench.throughput --backend {sqlite,postgres} [--database URL] [--seconds S]
[--concurrency C] [--json FILE]``

Two servers on loopback, each in its own process, on the same database:

* the real backend, started exactly like ``cadencia serve`` (uvicorn serving
  ``create_app``), with the offline ``chatty`` model as ``atendimento``;
* a bare FastAPI app with one endpoint, ``POST /insert``, doing one INSERT in its own
  transaction (one commit: an fsync on SQLite with ``synchronous=FULL``, like ours).

The same HTTP client (``httpx.AsyncClient``, ``C`` requests in flight) drives both in
interleaved rounds. A *decision* is a customer message that caused a guarded tool attempt
(``POST /api/conversations/{id}/messages`` asking for a refund of an order already
refunded: validation → teto de voltas → idempotency claim refused, the attempt's event,
the customer's message, the turn's record and the reply; a conversation's first message
also looks the order up). Each conversation takes a few
messages before the next one starts, so a turn's history stays short, as in real traffic.
``ratio`` = decisions/s ÷ bare inserts/s; the target is ≥ 0.5. Each side's server CPU
(user + system, from ``/proc``) per request is reported too: on a shared 2-core machine it
moves far less than the rates, so it is the figure to compare before/after a change.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from bench._common import Interleaved, Workload, print_table, ratio, total, write_json

TARGET = 0.5
TOKEN = "bench-throughput-token"
PEDIDO = {"pedidoId": "4821", "valorPedido": "129.90", "clienteId": "c-1"}
MESSAGES_PER_CONVERSATION = 6
BARE_TABLE = "bench_throughput_bare"


# -- the bare endpoint -----------------------------------------------------------------------


class InsertBody(BaseModel):
    """The bare endpoint's body (a pydantic model, like the backend's routes)."""

    text: str


def bare_app(database_url: str) -> Any:
    """FastAPI app whose ``POST /insert`` runs one INSERT and commits (the raw floor)."""
    from fastapi import FastAPI

    app = FastAPI()
    if database_url.startswith("sqlite"):
        import sqlite3

        from backend.store.db import sqlite_path

        path = sqlite_path(database_url)
        local = threading.local()

        def conn() -> sqlite3.Connection:
            found = getattr(local, "conn", None)
            if found is None:
                # The product's pragmas: WAL, synchronous=FULL, a busy timeout.
                found = sqlite3.connect(path, timeout=30, isolation_level=None)
                found.execute("PRAGMA journal_mode=WAL")
                found.execute("PRAGMA synchronous=FULL")
                found.execute("PRAGMA busy_timeout=30000")
                local.conn = found
            return found

        conn().execute(
            f"CREATE TABLE IF NOT EXISTS {BARE_TABLE} "
            "(id INTEGER PRIMARY KEY AUTOINCREMENT, ts TEXT NOT NULL, body TEXT NOT NULL)"
        )

        def insert(body: str) -> int:
            c = conn()
            c.execute("BEGIN IMMEDIATE")
            row = c.execute(
                f"INSERT INTO {BARE_TABLE} (ts, body) VALUES (?, ?) RETURNING id",
                (time.time(), body),
            ).fetchone()
            c.execute("COMMIT")
            return int(row[0])

    else:
        from psycopg_pool import ConnectionPool

        pool = ConnectionPool(database_url, min_size=1, max_size=8, open=True)
        with pool.connection() as c:
            c.execute(
                f"CREATE TABLE IF NOT EXISTS {BARE_TABLE} "
                "(id BIGSERIAL PRIMARY KEY, ts DOUBLE PRECISION NOT NULL, body TEXT NOT NULL)"
            )

        def insert(body: str) -> int:
            with pool.connection() as c:  # commits when the block ends
                row = c.execute(
                    f"INSERT INTO {BARE_TABLE} (ts, body) VALUES (%s, %s) RETURNING id",
                    (time.time(), body),
                ).fetchone()
            assert row is not None
            return int(row[0])

    @app.post("/insert")
    def insert_route(body: InsertBody) -> dict[str, int]:  # sync: FastAPI's threadpool, like ours
        return {"id": insert(body.text)}

    return app


def _serve_bare(database_url: str, port: int) -> None:
    import uvicorn

    uvicorn.run(bare_app(database_url), host="127.0.0.1", port=port, log_level="warning")


# -- servers ----------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def _process(
    argv: list[str], url: str, env: dict[str, str], log: Path
) -> Iterator[subprocess.Popen[bytes]]:
    import httpx

    with log.open("w") as out:
        # cwd: the log's folder, so ``python -m`` puts no checkout first on sys.path and
        # PYTHONPATH alone decides which tree runs.
        proc = subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT, cwd=log.parent)
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"{argv[2:4]} exited; see {log}:\n{log.read_text()[-2000:]}")
            try:
                if httpx.get(f"{url}/healthz", timeout=1).status_code < 500:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"{argv[2:4]} did not start; see {log}")
            time.sleep(0.1)
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()


@dataclass
class Servers:
    """Where the two servers listen."""

    backend: str
    bare: str
    backend_pid: int = 0
    bare_pid: int = 0


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU ``pid`` has used so far (Linux ``/proc``; None elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@contextmanager
def servers(database_url: str, tmp: Path, server_path: str | None) -> Iterator[Servers]:
    """``cadencia serve`` and the bare app, each in its own process, on ``database_url``."""
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (server_path or root, root) if p)
    env["CADENCIA_TOKEN"] = TOKEN
    env.pop("CADENCIA_MODEL", None)  # atendimento on the offline chatty model
    bport, rport = _free_port(), _free_port()
    serve = [sys.executable, "-m", "backend.cli", "serve", "--database", database_url]
    serve += ["--port", str(bport), "--data-dir", str(tmp / "data"), "--log-level", "WARNING"]
    bare = [sys.executable, "-m", "bench.throughput", "--serve-bare", database_url]
    bare += ["--port", str(rport)]
    # The bare app always runs from this checkout (``bench`` is a package of each tree).
    bare_env = {**env, "PYTHONPATH": root}
    with ExitStack() as stack:
        backend_url, bare_url = f"http://127.0.0.1:{bport}", f"http://127.0.0.1:{rport}"
        ours = stack.enter_context(_process(serve, backend_url, env, tmp / "serve.log"))
        # Second, once the backend has created and migrated the database file.
        theirs = stack.enter_context(_process(bare, bare_url, bare_env, tmp / "bare.log"))
        yield Servers(backend_url, bare_url, ours.pid, theirs.pid)


# -- the client -------------------------------------------------------------------------------


@dataclass
class Tally:
    """What one round of one workload did."""

    ops: int = 0
    requests: int = 0
    cpu_s: float = 0.0
    """CPU the server process used during the round (0 where /proc is missing)."""
    errors: list[str] = field(default_factory=list)


class Driver:
    """Runs timed rounds on one event loop with ``concurrency`` requests in flight."""

    def __init__(self, urls: Servers, concurrency: int, round_s: float) -> None:
        import httpx

        self.urls = urls
        self.concurrency = concurrency
        self.round_s = round_s
        self.loop = asyncio.new_event_loop()
        self.run_id = uuid.uuid4().hex[:6]
        self.messages = 0
        self.errors: list[str] = []
        limits = httpx.Limits(max_connections=concurrency * 2)
        headers = {"Authorization": f"Bearer {TOKEN}"}
        self.http = httpx.AsyncClient(timeout=60, limits=limits, headers=headers)
        self._conversations = 0
        self.cpu_s = {"decisions": 0.0, "bare_inserts": 0.0}
        self.requests = {"decisions": 0, "bare_inserts": 0}

    def close(self) -> None:
        self.loop.run_until_complete(self.http.aclose())
        self.loop.close()

    def _conversation(self) -> str:
        self._conversations += 1
        return f"bench-{self.run_id}-{self._conversations}"

    async def _message(self, conversa: str, text: str) -> list[dict[str, Any]]:
        reply = await self.http.post(
            f"{self.urls.backend}/api/conversations/{conversa}/messages",
            json={"text": text, "cliente_id": PEDIDO["clienteId"]},
        )
        if reply.status_code != 200:
            raise RuntimeError(f"message answered HTTP {reply.status_code}: {reply.text[:200]}")
        return list(reply.json()["attempts"])

    def refund_once(self) -> None:
        """Refund the order once, so every later refund attempt is a blocked decision."""
        attempts = self.loop.run_until_complete(
            self._message(self._conversation(), f"Quero o reembolso do pedido {PEDIDO['pedidoId']}")
        )
        got = [a["resultado"] for a in attempts]
        if "executado" not in got:
            raise RuntimeError(f"the warm-up refund did not execute: {got}")

    async def _timed(self, worker: Any, pid: int) -> Tally:
        tally = Tally()
        before = cpu_seconds(pid)
        deadline = time.perf_counter() + self.round_s
        await asyncio.gather(*(worker(tally, deadline) for _ in range(self.concurrency)))
        after = cpu_seconds(pid)
        if before is not None and after is not None:
            tally.cpu_s = after - before
        return tally

    async def _decider(self, tally: Tally, deadline: float) -> None:
        while time.perf_counter() < deadline:
            conversa = self._conversation()
            for i in range(MESSAGES_PER_CONVERSATION):
                if time.perf_counter() >= deadline:
                    return
                text = (
                    f"Quero o reembolso do pedido {PEDIDO['pedidoId']}"
                    if i == 0
                    else ("Já caiu o reembolso?")
                )
                try:
                    attempts = await self._message(conversa, text)
                except Exception as exc:  # reported, never silently dropped
                    tally.errors.append(repr(exc))
                    break
                tally.requests += 1
                tally.ops += 1 if attempts else 0  # a message that caused a guarded attempt

    async def _inserter(self, tally: Tally, deadline: float) -> None:
        while time.perf_counter() < deadline:
            try:
                reply = await self.http.post(f"{self.urls.bare}/insert", json={"text": "x" * 64})
                reply.raise_for_status()
            except Exception as exc:
                tally.errors.append(repr(exc))
                continue
            tally.requests += 1
            tally.ops += 1

    def decisions(self, _round: int) -> int:
        tally = self.loop.run_until_complete(self._timed(self._decider, self.urls.backend_pid))
        self.messages += tally.requests
        self.errors += tally.errors
        self.cpu_s["decisions"] += tally.cpu_s
        self.requests["decisions"] += tally.requests
        return tally.ops

    def inserts(self, _round: int) -> int:
        tally = self.loop.run_until_complete(self._timed(self._inserter, self.urls.bare_pid))
        self.errors += tally.errors
        self.cpu_s["bare_inserts"] += tally.cpu_s
        self.requests["bare_inserts"] += tally.requests
        return tally.ops


# -- the run ----------------------------------------------------------------------------------


def run(
    backend: str,
    database: str | None,
    *,
    seconds: float = 30.0,
    rounds: int = 3,
    concurrency: int = 8,
    server_path: str | None = None,
) -> dict[str, Any]:
    """Measure both sides (``seconds`` each, split in ``rounds``) and return the figures."""
    from backend.erp.seed import upsert_pedidos
    from backend.store.db import open_database

    with tempfile.TemporaryDirectory(prefix="bench-throughput-") as tmp_dir:
        tmp = Path(tmp_dir)
        if backend == "sqlite":
            database = database or f"sqlite:///{tmp / 'bench.sqlite3'}"
        elif not database:
            raise SystemExit("--backend postgres needs --database postgresql://…")
        with servers(database, tmp, server_path) as urls:
            db = open_database(database)
            try:
                upsert_pedidos(db, [PEDIDO])
            finally:
                db.close()
            driver = Driver(urls, concurrency, seconds / rounds)
            try:
                driver.refund_once()
                # Each call is one whole round of one side (``seconds / rounds`` of
                # traffic), so a round is one turn each: decisions, then bare inserts.
                per_round = Interleaved(
                    rounds=rounds, round_s=0.5 * seconds / rounds, turn_s=1e-9
                ).run(
                    {
                        "decisions": Workload(driver.decisions),
                        "bare_inserts": Workload(driver.inserts),
                    }
                )
                rates = {name: total(got) for name, got in per_round.items()}
            finally:
                driver.close()
    decided, inserted = rates["decisions"].per_s, rates["bare_inserts"].per_s
    cpu_ms = {
        name: round(1000 * driver.cpu_s[name] / driver.requests[name], 2)
        if driver.requests[name] and driver.cpu_s[name]
        else None
        for name in ("decisions", "bare_inserts")
    }
    return {
        "backend": backend,
        "concurrency": concurrency,
        "seconds_per_side": seconds,
        "rounds": rounds,
        "decisions": rates["decisions"].ops,
        "messages": driver.messages,
        "decisions_per_s": round(decided, 1),
        "messages_per_s": round(driver.messages / rates["decisions"].seconds, 1)
        if rates["decisions"].seconds
        else 0.0,
        "bare_inserts_per_s": round(inserted, 1),
        "ratio": ratio(decided, inserted),
        "target": TARGET,
        # Server CPU (user + system) per HTTP request: steadier than the rates on a shared
        # machine, and what bounds one serve process once it is busy.
        "serve_cpu_ms_per_message": cpu_ms["decisions"],
        "bare_cpu_ms_per_insert": cpu_ms["bare_inserts"],
        "errors": driver.errors[:20],
        "error_count": len(driver.errors),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.throughput", description=__doc__)
    parser.add_argument("--backend", choices=["sqlite", "postgres"])
    parser.add_argument("--database", help="state database URL (required for postgres)")
    parser.add_argument("--seconds", type=float, default=30.0, help="measured seconds per side")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=8, help="requests in flight")
    parser.add_argument("--json", type=Path, help="where to write the result")
    parser.add_argument(
        "--server-path",
        help="run the backend from another checkout (PYTHONPATH), e.g. to compare before/after",
    )
    parser.add_argument("--serve-bare", metavar="URL", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve_bare:  # the bare app's own process (started by servers())
        _serve_bare(args.serve_bare, args.port)
        return 0
    if not args.backend:
        parser.error("--backend is required")
    result = run(
        args.backend,
        args.database,
        seconds=args.seconds,
        rounds=args.rounds,
        concurrency=args.concurrency,
        server_path=args.server_path,
    )
    print_table(
        f"bench.throughput ({args.backend}, {args.concurrency} in flight, {args.seconds:g} s/side)",
        [
            ("guarded decisions/s (HTTP messages)", f"{result['decisions_per_s']:.1f}", ""),
            ("customer messages/s", f"{result['messages_per_s']:.1f}", ""),
            ("bare FastAPI one-INSERT/s", f"{result['bare_inserts_per_s']:.1f}", ""),
            ("ratio", f"{result['ratio']:.3f}", f"≥ {TARGET}"),
            ("serve CPU per message (ms)", str(result["serve_cpu_ms_per_message"]), ""),
            ("bare server CPU per insert (ms)", str(result["bare_cpu_ms_per_insert"]), ""),
            ("errors", str(result["error_count"]), "0"),
        ],
    )
    if args.json:
        write_json(args.json, result)
    print(
        f"decisions {result['decisions_per_s']:.1f}/s vs bare {result['bare_inserts_per_s']:.1f}/s:"
        f" ratio {result['ratio']:.3f} (target ≥ {TARGET}), {result['error_count']} errors;"
        f" server CPU {result['serve_cpu_ms_per_message']} ms/message,"
        f" {result['bare_cpu_ms_per_insert']} ms/insert"
    )
    return 0 if not result["error_count"] else 1


if __name__ == "__main__":
    sys.exit(main())
