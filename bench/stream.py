"""Live stream benchmark: event-log append → SSE client latency, ours vs bare sse-starlette.

``python -m bench.stream --json FILE [--rate 1000] [--seconds 10] [--subscribers 4]``

Two servers run in child processes, each with its own producer appending ``--rate``
events per second for ``--seconds``:

* ``ours``: the real backend (``create_app``, SQLite event log, the broadcast hub,
  ``/api/events/stream`` with auth) — every event goes through ``EventLog.append``.
* ``bare``: a minimal Starlette app whose sse-starlette generator reads from an
  in-memory queue fan-out — the floor any SSE server on this stack can reach.

The subscribers run in this process (asyncio + httpx), so client work does not steal
the servers' GIL. Latency = receive time − the producer's wall-clock stamp in the
payload. Throughput = events delivered per second per subscriber in a flood phase
(producer unpaced for 3 s). Targets: p99 < 50 ms at the paced rate, throughput ≥ 0.5× bare.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import socket
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bench._common import ratio, write_json

TOKEN = "bench-stream-token"


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# -- servers (child processes) -------------------------------------------------------------


def _run_ours(
    port: int, data_dir: str, rate: float, seconds: float, flood_s: float, start_at: float
) -> None:
    import threading

    import uvicorn

    from backend.api.app import create_app
    from backend.settings import load_settings

    settings = load_settings(data_dir=Path(data_dir), token=TOKEN)
    app = create_app(settings)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))

    def produce() -> None:
        while not server.started:
            time.sleep(0.01)
        events = app.state.backend.events

        def flood_batch(first: int, n: int) -> None:
            # One transaction per batch: the flood measures the stream, not SQLite commits.
            with events.db.transaction() as tx:
                batch = [
                    events.append_in(tx, "bench.tick", {"i": first + k, "t": time.time()})
                    for k in range(n)
                ]
            events.publish(batch)

        _pace(
            lambda i: events.append("bench.tick", {"i": i, "t": time.time()}),
            rate,
            seconds,
            flood_s,
            start_at,
            batch=flood_batch,
        )

    threading.Thread(target=produce, daemon=True).start()
    server.run()


def _run_bare(port: int, rate: float, seconds: float, flood_s: float, start_at: float) -> None:
    import threading

    import uvicorn
    from sse_starlette.sse import EventSourceResponse
    from starlette.applications import Starlette
    from starlette.routing import Route

    queues: list[asyncio.Queue[str]] = []
    loop_holder: dict[str, asyncio.AbstractEventLoop] = {}

    async def stream(_: Any) -> EventSourceResponse:
        queue: asyncio.Queue[str] = asyncio.Queue(maxsize=100_000)
        queues.append(queue)
        loop_holder["loop"] = asyncio.get_running_loop()

        async def gen() -> Any:
            n = 0
            while True:
                data = await queue.get()
                n += 1
                yield {"id": str(n), "event": "event", "data": data}

        return EventSourceResponse(gen(), ping=15)

    app = Starlette(routes=[Route("/stream", stream)])
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))

    def publish(i: int) -> None:
        data = json.dumps({"id": i, "type": "bench.tick", "payload": {"i": i, "t": time.time()}})
        loop = loop_holder.get("loop")
        if loop is not None:
            for q in queues:
                loop.call_soon_threadsafe(q.put_nowait, data)

    def produce() -> None:
        while not server.started:
            time.sleep(0.01)

        def flood_batch(first: int, n: int) -> None:
            for k in range(n):
                publish(first + k)

        _pace(publish, rate, seconds, flood_s, start_at, batch=flood_batch)

    threading.Thread(target=produce, daemon=True).start()
    server.run()


def _pace(
    emit: Any, rate: float, seconds: float, flood_s: float, start_at: float, *, batch: Any
) -> None:
    while time.time() < start_at:
        time.sleep(0.005)
    interval = 1.0 / rate
    begin = time.perf_counter()
    i = 0
    while i < int(rate * seconds):
        target = begin + i * interval
        delay = target - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
        emit(i)
        i += 1
    time.sleep(1.0)  # let the paced phase drain before flooding
    end = time.perf_counter() + flood_s
    while time.perf_counter() < end:
        batch(i, 50)
        i += 50


# -- subscribers (this process) ------------------------------------------------------------


async def _subscribe(
    url: str, headers: dict[str, str], paced: int, deadline: float, flood_from: float
) -> dict[str, Any]:
    import httpx

    latencies: list[float] = []
    resyncs = 0
    flood_n = 0
    flood_first = flood_last = None
    async with httpx.AsyncClient(timeout=None) as client:
        try:
            async with client.stream("GET", url, headers=headers) as response:
                async for line in response.aiter_lines():
                    if not line.startswith("data:"):
                        if time.time() > deadline:
                            break
                        continue
                    now = time.time()
                    data = json.loads(line[5:])
                    if "payload" not in data:  # a resync: this client fell too far behind
                        resyncs += 1
                        continue
                    payload = data["payload"]
                    if payload.get("i", -1) < paced:
                        latencies.append((now - payload["t"]) * 1000)
                    elif now >= flood_from:
                        flood_n += 1
                        flood_first = flood_first or now
                        flood_last = now
                    if now > deadline:
                        break
        except httpx.HTTPError:
            pass
    span = (
        (flood_last - flood_first) if flood_first and flood_last and flood_last > flood_first else 0
    )
    return {
        "latencies": latencies,
        "flood_rate": flood_n / span if span else 0.0,
        "resyncs": resyncs,
    }


async def _measure(
    url: str,
    headers: dict[str, str],
    subscribers: int,
    paced: int,
    deadline: float,
    flood_from: float,
) -> dict[str, Any]:
    results = await asyncio.gather(
        *[_subscribe(url, headers, paced, deadline, flood_from) for _ in range(subscribers)]
    )
    latencies = sorted(x for r in results for x in r["latencies"])
    if not latencies:
        return {"p50_ms": None, "p99_ms": None, "delivered_paced": 0, "flood_events_per_s": 0.0}
    return {
        "p50_ms": round(statistics.median(latencies), 2),
        "p99_ms": round(latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))], 2),
        "delivered_paced": len(latencies),
        "expected_paced": paced * subscribers,
        "flood_events_per_s": round(statistics.mean(r["flood_rate"] for r in results), 1),
        "resyncs": sum(r["resyncs"] for r in results),
    }


def _wait_up(url: str, headers: dict[str, str]) -> None:
    import httpx

    for _ in range(300):
        try:
            httpx.get(url, headers=headers, timeout=1)
            return
        except httpx.HTTPError:
            time.sleep(0.1)
    raise SystemExit(f"server at {url} did not start")


def run_one(
    kind: str, rate: float, seconds: float, subscribers: int, flood_s: float
) -> dict[str, Any]:
    """Start one server, subscribe, produce, measure."""
    ctx = multiprocessing.get_context("spawn")
    port = _port()
    start_at = time.time() + 8.0  # time to start the server and attach every subscriber
    with tempfile.TemporaryDirectory(prefix="bench-stream-") as tmp:
        if kind == "ours":
            proc = ctx.Process(target=_run_ours, args=(port, tmp, rate, seconds, flood_s, start_at))
            url = f"http://127.0.0.1:{port}/api/events/stream"
            headers = {"Authorization": f"Bearer {TOKEN}"}
            probe = f"http://127.0.0.1:{port}/healthz"
        else:
            proc = ctx.Process(target=_run_bare, args=(port, rate, seconds, flood_s, start_at))
            url = f"http://127.0.0.1:{port}/stream"
            headers = {}
            probe = f"http://127.0.0.1:{port}/nothing"
        proc.start()
        try:
            _wait_up(probe, headers)
            paced = int(rate * seconds)
            deadline = start_at + seconds + 1.0 + flood_s + 2.0
            flood_from = start_at + seconds + 1.0
            return asyncio.run(_measure(url, headers, subscribers, paced, deadline, flood_from))
        finally:
            proc.terminate()
            proc.join(10)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.stream")
    parser.add_argument("--json", required=True, type=Path)
    parser.add_argument("--rate", type=float, default=1000.0)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--subscribers", type=int, default=4)
    parser.add_argument("--flood-seconds", type=float, default=3.0)
    args = parser.parse_args(argv)
    bare = run_one("bare", args.rate, args.seconds, args.subscribers, args.flood_seconds)
    ours = run_one("ours", args.rate, args.seconds, args.subscribers, args.flood_seconds)
    result = {
        "rate": args.rate,
        "seconds": args.seconds,
        "subscribers": args.subscribers,
        "ours": ours,
        "bare": bare,
        "throughput_ratio": ratio(ours["flood_events_per_s"], bare["flood_events_per_s"]),
        "targets": {"p99_ms": "< 50", "throughput_ratio": ">= 0.5"},
    }
    rows = [
        ("p50 latency (ms)", ours["p50_ms"], bare["p50_ms"], ""),
        ("p99 latency (ms)", ours["p99_ms"], bare["p99_ms"], "< 50"),
        (
            "paced events delivered",
            f"{ours['delivered_paced']}/{ours.get('expected_paced')}",
            f"{bare['delivered_paced']}/{bare.get('expected_paced')}",
            "all",
        ),
        (
            "flood events/s per subscriber",
            ours["flood_events_per_s"],
            bare["flood_events_per_s"],
            "",
        ),
        ("throughput ours ÷ bare", result["throughput_ratio"], "", ">= 0.5"),
        ("resyncs (client fell behind)", ours.get("resyncs", 0), bare.get("resyncs", 0), ""),
    ]
    from rich.console import Console
    from rich.table import Table

    table = Table(title="bench.stream — append → SSE client")
    for column in ("figure", "ours", "bare sse-starlette", "target"):
        table.add_column(column, justify="left" if column == "figure" else "right")
    for row in rows:
        table.add_row(*(str(cell) for cell in row))
    Console().print(table)
    write_json(args.json, result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
