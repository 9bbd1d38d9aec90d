"""Console benchmark: ``python -m bench.console --json FILE [--rounds N] [--backlog N]``.

Side by side in one run, interleaved in rounds (absolute times here are noise):

* first paint — our console (mount + first frame) vs a minimal Textual app with a Log;
* backlog — our console showing an N-event backlog fetched over HTTP from a loopback
  backend vs the minimal app writing the same N lines into a ``Log`` from memory;
* keypress-to-screen — ``3`` (switch to Approvals) and ``j`` (move the cursor) in ours
  vs ``j`` in the minimal app's DataTable;
* Inbox — with N held actions waiting: ``2`` until the Inbox shows them (first / again),
  ``j`` in the Inbox, ``enter`` until the item's detail screen has fetched and drawn its
  record; vs ``j`` and pushing a screen in the minimal app;
* live burst — N events over the SSE stream until the last one is in the feed.

The backend is the real one (``create_app`` on loopback, a fresh data dir); the events
are ``agent.status`` lines written by the backend's own event log, in batches.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from textual.app import App, ComposeResult
from textual.screen import Screen
from textual.widgets import DataTable, Log, Static

from bench._common import print_table, ratio, write_json
from console.app import CadenciaConsole, make_console
from console.config import ConsoleSettings
from console.screens.inbox import InboxScreen
from console.screens.item_details import ItemDetailScreen
from console.widgets.activity_feed import ActivityFeed
from tests.console.world import TOKEN, Live, live_backend

SIZE = (120, 40)


class MinimalApp(App[None]):
    """The baseline: a Log and a DataTable, no network."""

    def compose(self) -> ComposeResult:
        yield DataTable(cursor_type="row")
        yield Log(max_lines=5_000)

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("a", "b")
        for n in range(20):
            table.add_row(str(n), "x" * 10)
        table.focus()


class _Detail(Screen[None]):
    """The baseline's "detail screen": one Static, no fetch."""

    def compose(self) -> ComposeResult:
        yield Static("detail " * 40)


def _seed_inbox(live: Live, n: int) -> None:
    """``n`` held actions (``decide()`` → ask) in one project: ``n`` Inbox rows."""
    project = live.http.post("/api/projects", json={"name": "bench", "template": "empty"})
    project_id = project.json()["id"]
    session = live.backend.store.create_session(project_id, "bench")
    for i in range(n):
        live.backend.store.request_approval(
            project_id=project_id,
            session_id=session["id"],
            agent="arquiteto",
            action="open_adr_pr",
            payload={"title": f"ADR {i:04d}", "content": "x" * 200},
            stage="default",
            rule="default: open_adr_pr -> ask",
        )


def _seed(live: Live, n: int, batch: int = 1_000) -> int:
    """Append ``n`` events through the backend's event log (and broadcast them); last id."""
    events = live.backend.events
    for start in range(0, n, batch):
        with live.backend.db.transaction() as tx:
            written = [
                events.append_in(
                    tx, "agent.status", {"status": "working", "detail": f"step {i}"}, agent="qa"
                )
                for i in range(start, min(n, start + batch))
            ]
        events.publish(written)
    return int(events.last_id())


async def _wait(pilot: Any, cond: Any, timeout: float = 60.0) -> None:
    deadline = time.perf_counter() + timeout
    while not cond():
        if time.perf_counter() > deadline:
            raise TimeoutError("benchmark condition not reached")
        await pilot.pause(0.005)


async def _ours(url: str, backlog_last: int, inbox_n: int) -> dict[str, float]:
    app: CadenciaConsole = make_console(ConsoleSettings(url=url, token=TOKEN, operator="bench"))
    t0 = time.perf_counter()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        first_paint = time.perf_counter() - t0
        feed = app.screen.query_one(ActivityFeed)
        await _wait(pilot, lambda: feed.line_count and feed.last_lines(1)[0].id >= backlog_last)
        await pilot.pause()
        backlog = time.perf_counter() - t0
        await _wait(pilot, lambda: app.connection == "live")
        await _wait(pilot, lambda: len(app.inbox) >= inbox_n)
        t1 = time.perf_counter()
        await pilot.press("3")
        await pilot.pause()
        switch = time.perf_counter() - t1
        t2 = time.perf_counter()
        await pilot.press("j")
        await pilot.pause()
        key_j = time.perf_counter() - t2
        await pilot.press("1")
        await pilot.pause()
        t3 = time.perf_counter()
        await pilot.press("3")
        await pilot.pause()
        warm = time.perf_counter() - t3
        inbox = await _inbox_keys(pilot, app, inbox_n)
    return {
        "first_paint": first_paint,
        "backlog": backlog,
        "key_switch": switch,
        "key_switch_warm": warm,
        "key_j": key_j,
        **inbox,
    }


async def _inbox_keys(pilot: Any, app: CadenciaConsole, n: int) -> dict[str, float]:
    """``2`` (first and again), ``j`` and ``enter`` on an Inbox of ``n`` rows."""

    def shown() -> bool:
        screen = app.screen
        return isinstance(screen, InboxScreen) and screen.query_one("#inbox").row_count >= n

    await pilot.press("1")
    await pilot.pause()
    t0 = time.perf_counter()
    await pilot.press("2")
    await _wait(pilot, shown)
    first = time.perf_counter() - t0
    await pilot.press("1")
    await pilot.pause()
    t1 = time.perf_counter()
    await pilot.press("2")
    await _wait(pilot, shown)
    warm = time.perf_counter() - t1
    t2 = time.perf_counter()
    await pilot.press("j")
    await pilot.pause()
    key_j = time.perf_counter() - t2
    t3 = time.perf_counter()
    await pilot.press("enter")
    await _wait(pilot, lambda: isinstance(app.screen, ItemDetailScreen) and app.screen.loads > 0)
    await pilot.pause()
    opened = time.perf_counter() - t3
    await pilot.press("escape")
    await pilot.pause()
    return {"inbox_show": first, "inbox_show_warm": warm, "inbox_j": key_j, "inbox_open": opened}


async def _minimal(lines: list[str]) -> dict[str, float]:
    app = MinimalApp()
    t0 = time.perf_counter()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        first_paint = time.perf_counter() - t0
        app.query_one(Log).write_lines(lines)
        await pilot.pause()
        backlog = time.perf_counter() - t0
        t2 = time.perf_counter()
        await pilot.press("j")
        await pilot.pause()
        key_j = time.perf_counter() - t2
        t3 = time.perf_counter()
        await app.push_screen(_Detail())
        await pilot.pause()
        opened = time.perf_counter() - t3
    return {"first_paint": first_paint, "backlog": backlog, "key_j": key_j, "open": opened}


async def _burst(live: Live, n: int) -> float:
    app = make_console(ConsoleSettings(url=live.url, token=TOKEN, operator="bench"))
    async with app.run_test(size=SIZE) as pilot:
        await _wait(pilot, lambda: app.connection == "live")
        feed = app.screen.query_one(ActivityFeed)
        t0 = time.perf_counter()
        last = await asyncio.to_thread(_seed, live, n)
        await _wait(pilot, lambda: feed.last_lines(1)[0].id >= last, timeout=300)
        await pilot.pause()
        return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; print a table and write JSON."""
    parser = argparse.ArgumentParser(prog="python -m bench.console")
    parser.add_argument("--json", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--backlog", type=int, default=10_000)
    parser.add_argument("--burst", type=int, default=20_000)
    parser.add_argument("--inbox", type=int, default=200, help="held actions on the Inbox")
    args = parser.parse_args(argv)

    lines = [f"12:00:00 agent.status qa: working — step {i}" for i in range(args.backlog)]
    ours: list[dict[str, float]] = []
    base: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory() as data_dir, live_backend(Path(data_dir)) as live:
        _seed_inbox(live, args.inbox)
        backlog_last = _seed(live, args.backlog)
        for _ in range(args.rounds):
            ours.append(asyncio.run(_ours(live.url, backlog_last, args.inbox)))
            base.append(asyncio.run(_minimal(lines)))
        burst_s = asyncio.run(_burst(live, args.burst))

    def med(rows: list[dict[str, float]], key: str) -> float:
        return statistics.median(r[key] for r in rows)

    result = {
        "rounds": args.rounds,
        "backlog_events": args.backlog,
        "ours_first_paint_s": med(ours, "first_paint"),
        "minimal_first_paint_s": med(base, "first_paint"),
        "first_paint_ratio": ratio(med(ours, "first_paint"), med(base, "first_paint")),
        "ours_backlog_s": med(ours, "backlog"),
        "minimal_backlog_s": med(base, "backlog"),
        "backlog_ratio": ratio(med(ours, "backlog"), med(base, "backlog")),
        "ours_key_switch_screen_ms": med(ours, "key_switch") * 1000,
        "ours_key_switch_warm_ms": med(ours, "key_switch_warm") * 1000,
        "ours_key_j_ms": med(ours, "key_j") * 1000,
        "minimal_key_j_ms": med(base, "key_j") * 1000,
        "key_j_ratio": ratio(med(ours, "key_j"), med(base, "key_j")),
        "inbox_items": args.inbox,
        "ours_inbox_show_ms": med(ours, "inbox_show") * 1000,
        "ours_inbox_show_warm_ms": med(ours, "inbox_show_warm") * 1000,
        "ours_inbox_j_ms": med(ours, "inbox_j") * 1000,
        "inbox_j_ratio": ratio(med(ours, "inbox_j"), med(base, "key_j")),
        "ours_inbox_open_ms": med(ours, "inbox_open") * 1000,
        "minimal_open_ms": med(base, "open") * 1000,
        "inbox_open_ratio": ratio(med(ours, "inbox_open"), med(base, "open")),
        "burst_events": args.burst,
        "burst_s": burst_s,
        "burst_events_per_s": args.burst / burst_s if burst_s else 0.0,
    }
    r = result
    print_table(
        "console vs minimal Textual app (medians)",
        [
            (
                "first paint: ours / minimal",
                f"{r['ours_first_paint_s'] * 1000:.0f} / "
                f"{r['minimal_first_paint_s'] * 1000:.0f} ms",
                f"ratio {r['first_paint_ratio']}",
            ),
            (
                f"{args.backlog} backlog rendered: ours (HTTP) / minimal (memory)",
                f"{r['ours_backlog_s']:.2f} / {r['minimal_backlog_s']:.2f} s",
                f"ratio {r['backlog_ratio']}",
            ),
            (
                "key '3' → Approvals shown: first / again",
                f"{r['ours_key_switch_screen_ms']:.0f} / {r['ours_key_switch_warm_ms']:.0f} ms",
                "< 100 ms",
            ),
            (
                "key 'j': ours / minimal",
                f"{r['ours_key_j_ms']:.1f} / {r['minimal_key_j_ms']:.1f} ms",
                f"ratio {r['key_j_ratio']}",
            ),
            (
                f"key '2' → Inbox of {args.inbox} shown: first / again",
                f"{r['ours_inbox_show_ms']:.0f} / {r['ours_inbox_show_warm_ms']:.0f} ms",
                "< 100 ms",
            ),
            (
                "key 'j' in the Inbox: ours / minimal",
                f"{r['ours_inbox_j_ms']:.1f} / {r['minimal_key_j_ms']:.1f} ms",
                f"ratio {r['inbox_j_ratio']}",
            ),
            (
                "enter → detail fetched and drawn: ours (HTTP) / minimal (push)",
                f"{r['ours_inbox_open_ms']:.1f} / {r['minimal_open_ms']:.1f} ms",
                f"ratio {r['inbox_open_ratio']}",
            ),
            (
                f"{args.burst} live events over SSE",
                f"{r['burst_s']:.2f} s",
                f"{r['burst_events_per_s']:.0f} ev/s",
            ),
        ],
    )
    write_json(args.json, result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
