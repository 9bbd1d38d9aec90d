"""History-scale benchmark: how the operator's reads behave with a long event log.

``python -m bench.history --backend {sqlite,postgres} --events N [--database URL] --json FILE``

1. Fills a fresh store with ``N`` events of realistic history (:func:`bench._fill.fill`,
   the product's own append path, in bulk).
2. Starts a real ``cadencia serve`` subprocess on it (loopback, a token).
3. Times each operator read over repeated calls (p50/p99, ms):

   * ``roster`` — ``GET /api/roster`` of the filled project;
   * ``roster_after_event`` — the same, right after one customer message was posted
     through the API (what every console does on each message);
   * ``inbox`` — ``GET /api/inbox``;
   * ``activity`` — the feed's tail: ``GET /api/activity?tail=200`` when the server has
     the tail form, else ``?after=<last-200>``;
   * ``events_tail`` — ``GET /api/events?after=<last-200>``;
   * ``conversation`` — ``GET /api/conversations/<id>`` of a long conversation;
   * ``sse_resume`` — time to the first event on ``/api/events/stream`` resumed with
     ``Last-Event-ID`` 50 events before the end.

4. Reads the serve process's peak RSS (``VmHWM``) and times the console's first paint:
   ``console.app`` headless (``App.run_test``) against that serve, until the Team screen's
   roster table has rows (``up_first_paint_ms``).

Every call is capped by ``--timeout`` and every endpoint by ``--budget`` seconds, so today's
slow code still finishes: a call that timed out is recorded as such, not waited for. The
result is the issue's JSON shape; the exit status is 0 whether or not the targets hold
(p50 < 20 ms, p99 < 50 ms at 1M, RSS < 300 MB, first paint < 1.5 s) — the table says which.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import math
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse, urlunparse

import httpx

from bench._common import write_json
from bench._fill import FillResult, fill

TOKEN = "bench-history-token"
TARGET_P50_MS = 20.0
TARGET_P99_MS = 50.0
TARGET_RSS_MB = 300.0
TARGET_FIRST_PAINT_MS = 1500.0
ENDPOINTS = (
    "roster",
    "roster_after_event",
    "inbox",
    "activity",
    "events_tail",
    "conversation",
    "sse_resume",
)


@dataclass
class Timing:
    """The samples of one endpoint and why it stopped early, if it did."""

    samples: list[float] = field(default_factory=list)  # ms
    timeouts: int = 0
    error: str | None = None

    def summary(self) -> dict[str, Any]:
        """``{"p50_ms", "p99_ms", "calls", ...}``; ``None`` figures when nothing finished."""
        out: dict[str, Any] = {
            "p50_ms": round(_pct(self.samples, 50), 2) if self.samples else None,
            "p99_ms": round(_pct(self.samples, 99), 2) if self.samples else None,
            "calls": len(self.samples),
        }
        if self.timeouts:
            out["timeouts"] = self.timeouts
        if self.error:
            out["error"] = self.error
        return out


def _pct(values: list[float], pct: float) -> float:
    """Nearest-rank percentile (p99 of 30 samples is their maximum: the honest reading)."""
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, math.ceil(pct / 100 * len(ordered)) - 1))
    return ordered[rank]


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# -- the store -----------------------------------------------------------------------------


@contextlib.contextmanager
def _postgres_database(url: str | None) -> Iterator[str]:
    """The given URL, or a fresh database named for this bench (dropped afterwards)."""
    if url:
        yield url
        return
    import psycopg

    base = os.environ.get(
        "CADENCIA_TEST_PG_URL",
        "postgresql://cadencia_admin:cadencia-test@127.0.0.1:5432/cadencia_test",
    )
    name = f"bench_history_archive_{os.getpid()}"
    parts = urlparse(base)
    admin = urlunparse(parts._replace(path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield urlunparse(parts._replace(path=f"/{name}"))
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


# -- the server ----------------------------------------------------------------------------


@contextlib.contextmanager
def _serve(data_dir: Path, database_url: str, *, ready_s: float) -> Iterator[tuple[str, int]]:
    """``cadencia serve`` in a subprocess; yields its base URL and pid."""
    port = _port()
    env = {**os.environ, "CADENCIA_TOKEN": TOKEN}
    log = (data_dir / "serve.log").open("w")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "backend.cli",
            "serve",
            "--data-dir",
            str(data_dir),
            "--database",
            database_url,
            "--port",
            str(port),
            "--log-level",
            "WARNING",
        ],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + ready_s
        while True:
            if proc.poll() is not None:
                raise SystemExit(f"cadencia serve exited with {proc.returncode}: see {log.name}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{url}/healthz", timeout=1.0).status_code == 200:
                    break
            if time.monotonic() > deadline:
                raise SystemExit(f"cadencia serve not healthy after {ready_s:.0f} s")
            time.sleep(0.1)
        yield url, proc.pid
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def _peak_rss_mb(pid: int) -> float | None:
    """The process's peak resident set (``VmHWM``), in MB; None off Linux."""
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("VmHWM:"):
            return round(int(line.split()[1]) / 1024, 1)
    return None


# -- the reads -----------------------------------------------------------------------------


def _time_calls(
    call: Callable[[], None],
    *,
    calls: int,
    budget_s: float,
    before: Callable[[], None] | None = None,
) -> Timing:
    """Warm up once, then time ``call`` up to ``calls`` times within ``budget_s`` seconds."""
    timing = Timing()
    started = time.monotonic()
    for n in range(calls + 1):
        if n and time.monotonic() - started > budget_s:
            break
        try:
            if before is not None:
                before()
            t0 = time.perf_counter()
            call()
            elapsed = (time.perf_counter() - t0) * 1000
        except httpx.TimeoutException:
            timing.timeouts += 1
            timing.error = "timeout"
            break  # the next call would wait just as long
        except httpx.HTTPError as exc:
            timing.error = f"{type(exc).__name__}: {exc}"
            break
        if n:  # the first call warms caches and connections
            timing.samples.append(elapsed)
    return timing


def _check(response: httpx.Response) -> httpx.Response:
    response.raise_for_status()
    return response


class _Reads:
    """The operator's reads, against one serve."""

    def __init__(self, url: str, filled: FillResult, timeout_s: float) -> None:
        self.client = httpx.Client(
            base_url=url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=timeout_s
        )
        self.filled = filled
        self.last = filled.last_event_id
        self._messages = 0

    def close(self) -> None:
        self.client.close()

    def roster(self) -> None:
        got = _check(self.client.get("/api/roster", params={"project_id": self.filled.project_id}))
        assert got.json(), "the roster of the filled project is empty"

    def post_message(self) -> None:
        """One customer message through the API: a new event (several, really) in the log."""
        self._messages += 1
        conversa = f"conv-bench-after-{self._messages:04d}"
        _check(
            self.client.post(
                f"/api/conversations/{conversa}/messages",
                json={"text": "Qual o status do pedido 4821?", "cliente_id": "c-4821"},
            )
        )

    def inbox(self) -> None:
        _check(self.client.get("/api/inbox"))

    def activity_params(self) -> dict[str, Any]:
        """The tail form when the server has it (its answer ends at the log's end), else
        ``after=<last-200>`` (an unknown query parameter is ignored, hence the check)."""
        with contextlib.suppress(httpx.HTTPError):
            got = self.client.get("/api/activity", params={"tail": 200})
            if got.status_code == 200 and (rows := got.json()) and rows[-1]["id"] >= self.last:
                return {"tail": 200}
        return {"after": max(0, self.last - 200), "limit": 200}

    def activity(self, params: dict[str, Any]) -> None:
        _check(self.client.get("/api/activity", params=params))

    def events_tail(self) -> None:
        _check(self.client.get("/api/events", params={"after": max(0, self.last - 200)}))

    def conversation(self) -> None:
        _check(self.client.get(f"/api/conversations/{self.filled.conversation_id}"))

    def sse_resume(self) -> None:
        """Until the first ``event`` frame of a stream resumed 50 events before the end."""
        headers = {"Last-Event-ID": str(max(0, self.last - 50)), "Accept": "text/event-stream"}
        with self.client.stream("GET", "/api/events/stream", headers=headers) as response:
            response.raise_for_status()
            for line in response.iter_lines():
                if line.startswith("id:"):
                    return
        raise httpx.ReadError("the stream ended before its first event")


def measure(
    url: str, filled: FillResult, *, calls: int, timeout_s: float, budget_s: float
) -> dict[str, Timing]:
    """Time every endpoint of :data:`ENDPOINTS`."""
    reads = _Reads(url, filled, timeout_s)
    try:
        activity = reads.activity_params()
        # The roster goes last: today a call that times out keeps computing in the server
        # and would slow every read measured after it.
        plan: dict[str, tuple[Callable[[], None], Callable[[], None] | None]] = {
            "inbox": (reads.inbox, None),
            "activity": (lambda: reads.activity(activity), None),
            "events_tail": (reads.events_tail, None),
            "conversation": (reads.conversation, None),
            "sse_resume": (reads.sse_resume, None),
            "roster": (reads.roster, None),
            "roster_after_event": (reads.roster, reads.post_message),
        }
        out: dict[str, Timing] = {}
        for name, (call, before) in plan.items():
            out[name] = _time_calls(call, calls=calls, budget_s=budget_s, before=before)
            print(f"  {name}: {out[name].summary()}", flush=True)
        return out
    finally:
        reads.close()


async def _first_paint(url: str, timeout_s: float) -> float | None:
    """ms from starting the console until the Team roster table has rows (None: timed out)."""
    from textual.widgets import DataTable

    from console.app import make_console
    from console.config import ConsoleSettings

    app = make_console(ConsoleSettings(url=url, token=TOKEN, operator="bench"))
    started = time.perf_counter()
    async with app.run_test(size=(160, 48)) as pilot:
        deadline = started + timeout_s
        while time.perf_counter() < deadline:
            tables = app.screen.query("#roster").results(DataTable)
            if any(t.row_count for t in tables):
                return (time.perf_counter() - started) * 1000
            await pilot.pause(0.01)
    return None


# -- the run -------------------------------------------------------------------------------


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Fill, serve, measure; the issue's JSON shape."""
    data_dir = Path(tempfile.mkdtemp(prefix="bench-history-archive-"))
    try:
        with contextlib.ExitStack() as stack:
            if args.backend == "postgres":
                database_url = stack.enter_context(_postgres_database(args.database))
            else:
                database_url = args.database or f"sqlite:///{data_dir / 'cadencia.sqlite3'}"
            t0 = time.perf_counter()
            filled = fill(database_url, args.events, seed=args.seed, progress=sys.stderr.isatty())
            fill_s = time.perf_counter() - t0
            print(f"filled {filled.events} events in {fill_s:.1f} s", flush=True)
            # The fill ran in this process: a full collection of its objects in this client
            # would land inside some timed call. The server's latency is what is measured,
            # so they go out of the collector's sight (the server does the same at start).
            gc.collect()
            gc.freeze()
            url, pid = stack.enter_context(_serve(data_dir, database_url, ready_s=args.timeout))
            timings = measure(
                url, filled, calls=args.calls, timeout_s=args.timeout, budget_s=args.budget
            )
            paint = None
            painted = False  # the first-paint run finished (None then means it timed out)
            if not args.no_console:
                try:
                    paint = asyncio.run(_first_paint(url, args.timeout))
                    painted = True
                except Exception as exc:  # a console that crashes is a finding, not a stop
                    print(f"  first paint failed: {exc!r}", flush=True)
            rss = _peak_rss_mb(pid)
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)
    return {
        "events": filled.events,
        "backend": args.backend,
        "endpoints": {name: timings[name].summary() for name in ENDPOINTS},
        "rss_mb": rss,
        "up_first_paint_ms": round(paint, 1) if paint is not None else None,
        # null with this set: no roster row within --timeout seconds
        "up_first_paint_timed_out": paint is None and painted,
        "fill_s": round(fill_s, 1),
        "calls": args.calls,
        "timeout_s": args.timeout,
    }


def targets(result: dict[str, Any]) -> list[tuple[str, str, bool]]:
    """Each target with the measured figure and whether it holds."""
    out: list[tuple[str, str, bool]] = []
    for name, e in result["endpoints"].items():
        p50, p99 = e["p50_ms"], e["p99_ms"]
        out.append(
            (
                f"{name} p50 < {TARGET_P50_MS:.0f} ms",
                _ms(p50, e),
                p50 is not None and p50 < TARGET_P50_MS and not e.get("error"),
            )
        )
        out.append(
            (
                f"{name} p99 < {TARGET_P99_MS:.0f} ms",
                _ms(p99, e),
                p99 is not None and p99 < TARGET_P99_MS and not e.get("error"),
            )
        )
    rss = result["rss_mb"]
    out.append(
        (
            f"serve RSS < {TARGET_RSS_MB:.0f} MB",
            f"{rss} MB",
            rss is not None and rss < TARGET_RSS_MB,
        )
    )
    paint = result["up_first_paint_ms"]
    if paint is None and not result["up_first_paint_timed_out"]:
        return out  # --no-console (or the console crashed: printed above)
    out.append(
        (
            f"first paint < {TARGET_FIRST_PAINT_MS:.0f} ms",
            f"{paint} ms" if paint is not None else f"timeout (> {result['timeout_s']:.0f} s)",
            paint is not None and paint < TARGET_FIRST_PAINT_MS,
        )
    )
    return out


def _ms(value: float | None, e: dict[str, Any]) -> str:
    text = f"{value:.1f} ms" if value is not None else "—"
    return f"{text} ({e['error']})" if e.get("error") else text


def print_table(result: dict[str, Any]) -> None:
    """The figures and which targets hold (the targets are stated for 1M events)."""
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"bench.history — {result['backend']}, {result['events']:,} events")
    table.add_column("target")
    table.add_column("measured", justify="right")
    table.add_column("holds")
    for name, measured, ok in targets(result):
        table.add_row(name, measured, "yes" if ok else "[red]no[/]")
    Console().print(table)
    held = sum(ok for *_, ok in targets(result))
    print(f"{held}/{len(targets(result))} targets hold at {result['events']} events", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.history", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--backend", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--events", type=int, required=True, help="events to fill")
    parser.add_argument("--database", default=None, help="an existing database URL to fill")
    parser.add_argument("--json", type=Path, required=True, help="write the result here")
    parser.add_argument("--calls", type=int, default=30, help="timed calls per endpoint")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per call")
    parser.add_argument("--budget", type=float, default=60.0, help="seconds per endpoint")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-console", action="store_true", help="skip the first-paint run")
    args = parser.parse_args(argv)
    result = run(args)
    write_json(args.json, result)
    print_table(result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
