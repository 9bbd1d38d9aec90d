"""Live stream benchmark: event-log append → SSE client latency, ours vs bare sse-starlette.

``python -m bench.stream --json FILE [--rate 1000] [--seconds 10] [--subscribers 10]
[--flood-seconds 3] [--bare-writer sqlite|memory]``

Two servers run in child processes, one after the other, each with one writer thread that
appends events one per transaction, as the product's writers do:

* ``ours``: the real backend (``create_app``, SQLite event log, the broadcast hub,
  ``/api/events/stream`` with auth); every event is one ``EventLog.append`` (its own
  commit, then the hub reads it back from the log and fans it out).
* ``bare``: a minimal Starlette app whose sse-starlette generator reads from an
  in-memory queue fan-out. With ``--bare-writer sqlite`` (the default) its writer first
  commits each event as one raw ``INSERT`` on a SQLite file with the product's pragmas
  (WAL, ``synchronous=FULL``), so both sides pay the same durable write per event and the
  ratio measures what our stream adds on top; ``memory`` skips the write (the SSE ceiling).

Each invocation runs ``--rounds`` (default 3) alternating bare/ours rounds (who goes first
alternates too) and reports medians, the ratio being the median of per-round ratios: a
shared disk's speed drifts by the minute, so one round of each side would compare two
different disks.

Phases: a paced one (``--rate`` events/s for ``--seconds``), a one-second pause, then a
flood (the writer unpaced for ``--flood-seconds``), then an end marker. A writer that
cannot keep the pace (the disk is slower than the rate) is not hidden: the table shows the
rate it reached and the phase is marked as below its pace; latencies are always the real
ones, receive time − the writer's wall-clock stamp taken just before the append.

The subscribers run in this process on bare asyncio sockets (no HTTP client library: ten
clients parsing ten thousand events per second with httpx would be the bottleneck and hide
the servers'). Flood throughput = flood events a subscriber received ÷ the seconds from the
flood's start to the last one it received (catching up included), averaged over
subscribers. Targets: paced p99 < 50 ms, flood throughput ≥ 0.8× bare.
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
END = -1  # the ``i`` of the marker the writer appends after the flood
TARGETS = {"p99_ms": 50.0, "throughput_ratio": 0.8}


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# -- the writer (in each server process) ---------------------------------------------------


def _write(emit: Any, rate: float, seconds: float, flood_s: float, go: Any, report: Any) -> None:
    """Paced phase, pause, flood, end marker; put what really happened on ``report``."""
    go.wait(120)  # every subscriber is attached: none misses the first events
    interval = 1.0 / rate
    paced = int(rate * seconds)
    begin = time.perf_counter()
    for i in range(paced):
        delay = begin + i * interval - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
        emit(i)
    paced_s = time.perf_counter() - begin
    time.sleep(1.0)  # let the paced phase drain before flooding
    flood_from = time.time()
    end = time.perf_counter() + flood_s
    i = paced
    while time.perf_counter() < end:
        emit(i)
        i += 1
    flood_s_real = time.time() - flood_from
    emit(END)
    report.put(
        {
            "paced_events": paced,
            "paced_seconds": round(paced_s, 3),
            "flood_from": flood_from,
            "flood_events": i - paced,
            "flood_seconds": round(flood_s_real, 3),
        }
    )


# -- servers (child processes) -------------------------------------------------------------


def _run_ours(port: int, data_dir: str, phases: tuple[float, ...], report: Any) -> None:
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
        # One event, one transaction: exactly what every product writer does.
        _write(lambda i: events.append("bench.tick", {"i": i, "t": time.time()}), *phases, report)

    threading.Thread(target=produce, daemon=True).start()
    server.run()


def _raw_writer(data_dir: str) -> Any:
    """One raw INSERT per event, committed, on SQLite with the product's pragmas."""
    import sqlite3

    conn = sqlite3.connect(Path(data_dir) / "bare.sqlite3", isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=FULL")
    conn.execute("CREATE TABLE ticks (id INTEGER PRIMARY KEY AUTOINCREMENT, payload TEXT)")

    def write(data: str) -> None:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("INSERT INTO ticks (payload) VALUES (?)", (data,))
        conn.execute("COMMIT")

    return write


def _run_bare(
    port: int, data_dir: str, writer: str, phases: tuple[float, ...], report: Any
) -> None:
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

    def produce() -> None:
        while not server.started:
            time.sleep(0.01)
        durable = _raw_writer(data_dir) if writer == "sqlite" else None

        def publish(i: int) -> None:
            payload = {"i": i, "t": time.time()}
            data = json.dumps({"id": i, "type": "bench.tick", "payload": payload})
            if durable is not None:
                durable(json.dumps(payload))
            loop = loop_holder.get("loop")
            if loop is not None:
                for q in queues:
                    loop.call_soon_threadsafe(q.put_nowait, data)

        _write(publish, *phases, report)

    threading.Thread(target=produce, daemon=True).start()
    server.run()


# -- subscribers (this process) ------------------------------------------------------------


async def _subscribe(
    port: int, path: str, headers: dict[str, str], paced: int, deadline: float, ready: Any
) -> dict[str, Any]:
    """Read one SSE stream on a bare socket until the end marker (or the deadline)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    writer.write(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{head}\r\n".encode())
    await writer.drain()
    latencies: list[float] = []
    flood_n = resyncs = 0
    flood_last = 0.0
    buffer = b""
    done = False
    try:
        while not done:
            remaining = deadline - time.time()
            if remaining <= 0:
                break
            try:
                chunk = await asyncio.wait_for(reader.read(1 << 16), remaining)
            except TimeoutError:
                break
            if not chunk:
                break
            ready.set()  # the response has started: this subscriber is attached
            now = time.time()  # every line of one read arrived at the same moment
            lines = (buffer + chunk).split(b"\n")
            buffer = lines.pop()
            for line in lines:
                # Chunked-encoding size lines and SSE ``id:``/``event:`` lines are skipped;
                # the server sends whole SSE messages per chunk, so no data line is split.
                if not line.startswith(b"data:"):
                    continue
                data = json.loads(line[5:])
                if "last_id" in data:  # a resync: this client fell too far behind
                    resyncs += 1
                    continue
                if data.get("type") != "bench.tick":  # the backend's own start-up events
                    continue
                payload = data["payload"]
                i = payload["i"]
                if i == END:
                    done = True
                elif i < paced:
                    latencies.append((now - payload["t"]) * 1000)
                else:
                    flood_n += 1
                    flood_last = now
    finally:
        writer.close()
    return {
        "latencies": latencies,
        "flood_n": flood_n,
        "flood_last": flood_last,
        "resyncs": resyncs,
    }


def _summary(results: list[dict[str, Any]], writer: dict[str, Any], rate: float) -> dict[str, Any]:
    latencies = sorted(x for r in results for x in r["latencies"])
    paced = writer["paced_events"]
    achieved = paced / writer["paced_seconds"] if writer["paced_seconds"] else 0.0
    flood_rates = [
        r["flood_n"] / (r["flood_last"] - writer["flood_from"])
        for r in results
        if r["flood_n"] and r["flood_last"] > writer["flood_from"]
    ]
    return {
        "paced_rate_target": rate,
        "paced_rate_achieved": round(achieved, 1),
        # Below 95 % of the asked rate, the disk (or the CPU) could not keep the pace.
        "paced_reached": achieved >= 0.95 * rate,
        "p50_ms": round(statistics.median(latencies), 2) if latencies else None,
        "p99_ms": (
            round(latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))], 2)
            if latencies
            else None
        ),
        "max_ms": round(latencies[-1], 2) if latencies else None,
        "delivered_paced": len(latencies),
        "expected_paced": paced * len(results),
        "flood_written_per_s": round(writer["flood_events"] / writer["flood_seconds"], 1),
        "flood_events_per_s": round(statistics.mean(flood_rates), 1) if flood_rates else 0.0,
        "resyncs": sum(r["resyncs"] for r in results),
    }


def _median_of(sides: list[dict[str, Any]]) -> dict[str, Any]:
    """One side's figures over rounds: medians, sums of deliveries, pace reached in all."""
    out: dict[str, Any] = {}
    for key, first in sides[0].items():
        values = [side[key] for side in sides]
        if key in ("delivered_paced", "expected_paced", "resyncs"):
            out[key] = sum(values)
        elif isinstance(first, bool):
            out[key] = all(values)
        elif isinstance(first, int | float) and None not in values:
            out[key] = round(statistics.median(values), 2)
        else:
            out[key] = first
    return out


def _wait_up(port: int, path: str, headers: dict[str, str]) -> None:
    import httpx

    for _ in range(300):
        try:
            httpx.get(f"http://127.0.0.1:{port}{path}", headers=headers, timeout=1)
            return
        except httpx.HTTPError:
            time.sleep(0.1)
    raise SystemExit(f"server on port {port} did not start")


def run_one(
    kind: str, rate: float, seconds: float, subscribers: int, flood_s: float, bare_writer: str
) -> dict[str, Any]:
    """Start one server, subscribe, let its writer run, measure."""
    ctx = multiprocessing.get_context("spawn")
    report, go = ctx.Queue(), ctx.Event()
    port = _port()
    phases = (rate, seconds, flood_s, go)
    with tempfile.TemporaryDirectory(prefix="bench-stream-", ignore_cleanup_errors=True) as tmp:
        if kind == "ours":
            proc = ctx.Process(target=_run_ours, args=(port, tmp, phases, report))
            path, headers, probe = (
                "/api/events/stream",
                {"Authorization": f"Bearer {TOKEN}"},
                "/healthz",
            )
        else:
            proc = ctx.Process(target=_run_bare, args=(port, tmp, bare_writer, phases, report))
            path, headers, probe = "/stream", {}, "/nothing"
        proc.start()
        try:
            _wait_up(port, probe, headers)
            # Generous: a writer below its pace takes longer, and that is what we measure.
            deadline = time.time() + 10.0 + 3 * seconds + 1.0 + 3 * flood_s + 20.0
            paced = int(rate * seconds)

            async def measure() -> list[dict[str, Any]]:
                attached = [asyncio.Event() for _ in range(subscribers)]
                tasks = [
                    asyncio.create_task(_subscribe(port, path, headers, paced, deadline, ready))
                    for ready in attached
                ]
                await asyncio.wait_for(asyncio.gather(*(r.wait() for r in attached)), 60)
                await asyncio.sleep(0.5)  # their generators are subscribed to the hub
                go.set()
                return await asyncio.gather(*tasks)

            results = asyncio.run(measure())
            writer = report.get(timeout=max(5.0, deadline - time.time() + 5.0))
            return _summary(results, writer, rate)
        finally:
            proc.terminate()
            proc.join(10)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.stream")
    parser.add_argument("--json", required=True, type=Path)
    parser.add_argument("--rate", type=float, default=1000.0)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--subscribers", type=int, default=10)
    parser.add_argument("--flood-seconds", type=float, default=3.0)
    parser.add_argument(
        "--bare-writer",
        choices=["sqlite", "memory"],
        default="sqlite",
        help="what bare's writer does per event before fanning it out (see the docstring)",
    )
    parser.add_argument(
        "--rounds", type=int, default=3, help="alternating bare/ours rounds (medians reported)"
    )
    args = parser.parse_args(argv)
    common = (args.rate, args.seconds, args.subscribers, args.flood_seconds, args.bare_writer)
    rounds: list[dict[str, dict[str, Any]]] = []
    for round_no in range(args.rounds):
        # Alternate who goes first: a disk that drifts over the run favours neither side.
        order = ("bare", "ours") if round_no % 2 == 0 else ("ours", "bare")
        rounds.append({kind: run_one(kind, *common) for kind in order})
    ours = _median_of([r["ours"] for r in rounds])
    bare = _median_of([r["bare"] for r in rounds])
    per_round = [
        ratio(r["ours"]["flood_events_per_s"], r["bare"]["flood_events_per_s"]) for r in rounds
    ]
    result = {
        "rate": args.rate,
        "seconds": args.seconds,
        "subscribers": args.subscribers,
        "bare_writer": args.bare_writer,
        "rounds": rounds,
        "ours": ours,
        "bare": bare,
        "throughput_ratio": round(statistics.median(per_round), 3),
        "throughput_ratio_range": [min(per_round), max(per_round)],
        "targets": {"p99_ms": "< 50", "throughput_ratio": ">= 0.8"},
    }

    def pace(side: dict[str, Any]) -> str:
        mark = "" if side["paced_reached"] else " (below pace)"
        return f"{side['paced_rate_achieved']}/{side['paced_rate_target']:g}{mark}"

    rows = [
        ("paced writer events/s (reached/asked)", pace(ours), pace(bare), "asked"),
        ("p50 latency (ms)", ours["p50_ms"], bare["p50_ms"], ""),
        ("p99 latency (ms)", ours["p99_ms"], bare["p99_ms"], "< 50"),
        ("max latency (ms)", ours["max_ms"], bare["max_ms"], ""),
        (
            "paced events delivered",
            f"{ours['delivered_paced']}/{ours['expected_paced']}",
            f"{bare['delivered_paced']}/{bare['expected_paced']}",
            "all",
        ),
        ("flood writer events/s", ours["flood_written_per_s"], bare["flood_written_per_s"], ""),
        (
            "flood events/s per subscriber",
            ours["flood_events_per_s"],
            bare["flood_events_per_s"],
            "",
        ),
        (
            "throughput ours ÷ bare (median of rounds)",
            f"{result['throughput_ratio']} ({min(per_round)}–{max(per_round)})",
            "",
            ">= 0.8",
        ),
        ("resyncs (client fell behind)", ours["resyncs"], bare["resyncs"], ""),
    ]
    from rich.console import Console
    from rich.table import Table

    table = Table(
        title=f"bench.stream — append → SSE client, {args.subscribers} subscribers, "
        f"bare writer {args.bare_writer}, median of {args.rounds} alternating rounds"
    )
    for column in ("figure", "ours", "bare sse-starlette", "target"):
        table.add_column(column, justify="left" if column == "figure" else "right")
    for row in rows:
        table.add_row(*(str(cell) for cell in row))
    Console().print(table)
    write_json(args.json, result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
