"""``cadencia shift [--url URL] [--token T] [--json]``: what is open for the next person.

Reads a running backend over HTTP, like the console: the Inbox in its order (items past
their SLA first), each with how long it has waited and its time left or overdue, and for a
claimed takeover who holds it and since when. Exit status 0; 1 when the backend cannot be
read (the reason is printed).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from datetime import UTC, datetime
from typing import Any

from backend.clock import parse_moment


def register(subparsers: Any) -> None:
    """Add the ``shift`` command."""
    parser = subparsers.add_parser(
        "shift",
        help="what is open for the next person on call: breached items first, who holds what",
    )
    parser.add_argument("--url", default=None, help="backend URL (default: CADENCIA_URL)")
    parser.add_argument("--token", default=None, help="bearer token (default: the token file)")
    parser.add_argument("--data-dir", default=None, help="where the backend keeps its token file")
    parser.add_argument("--json", action="store_true", help="one JSON document on stdout")
    parser.set_defaults(handler=run)


def _seconds(stamp: str | None, now: datetime) -> float | None:
    moment = parse_moment(stamp) if stamp else None
    return None if moment is None else (now - moment).total_seconds()


def inert(text: str) -> str:
    """Customer, model and PR text as inert characters: no terminal control sequence."""
    return "".join(c if c.isprintable() else "\ufffd" for c in text)


def duration(seconds: float) -> str:
    """``42s``, ``5m``, ``3h 10m``, ``2d 4h``: how people say a wait."""
    s = int(abs(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m"
    if s < 86400:
        return f"{s // 3600}h {s % 3600 // 60}m"
    return f"{s // 86400}d {s % 86400 // 3600}h"


def shift(http: Any, now: datetime | None = None) -> list[dict[str, Any]]:
    """The open items as the next person reads them (most urgent first)."""
    now = now or datetime.now(UTC)
    out = []
    for item in http.get("/api/inbox", params={"limit": 200}).raise_for_status().json():
        left = -(_seconds(item.get("due_at"), now) or 0.0)
        row = {
            "id": item["id"],
            "kind": item["kind"],
            "title": inert(item["title"]),
            "sla_state": item.get("sla_state", "ok"),
            "waiting": duration(item["age_s"]),
            "sla": f"{duration(left)} left" if left >= 0 else f"{duration(left)} over",
            "held_by": None,
            "held_for": None,
        }
        if item["kind"] == "interruption" and item["state"] == "claimed":
            got = http.get(f"/api/interruptions/{item['target_id']}").raise_for_status().json()
            row["held_by"] = inert(str(got["claimed_by"]))
            held = _seconds(got.get("claimed_at"), now)
            row["held_for"] = duration(held) if held is not None else None
        out.append(row)
    return out


def run(args: argparse.Namespace) -> int:
    """Print the shift's hand-over."""
    import httpx
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from backend.settings import load_settings

    settings = load_settings(data_dir=args.data_dir)
    token = args.token or settings.token
    token_file = settings.data_dir / "token"
    if token is None and token_file.exists():
        token = token_file.read_text(encoding="utf-8").strip()
    url = args.url or os.environ.get("CADENCIA_URL") or f"http://{settings.host}:{settings.port}"
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        with httpx.Client(base_url=url, headers=headers, timeout=30) as http:
            rows = shift(http)
    except httpx.HTTPStatusError as exc:
        print(f"cadencia shift: {url} answered {exc.response.status_code}", file=sys.stderr)
        return 1
    except httpx.HTTPError as exc:
        print(f"cadencia shift: cannot reach {url}: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(rows, ensure_ascii=False, indent=2))
        return 0
    console = Console()
    breached = sum(1 for r in rows if r["sla_state"] == "breached")
    table = Table(title=f"open for the next shift: {len(rows)} item(s), {breached} past SLA")
    for column in ("kind", "item", "waiting", "SLA", "held by"):
        table.add_column(column)
    for r in rows:
        style = {"breached": "bold red", "warning": "yellow"}.get(r["sla_state"])
        held = f"{r['held_by']} for {r['held_for']}" if r["held_by"] else ""
        table.add_row(
            r["kind"],
            escape(r["title"]),
            r["waiting"],
            r["sla"],
            escape(held),
            style=style,
        )
    console.print(table)
    return 0
