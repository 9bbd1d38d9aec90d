"""``cadencia shift`` against a real backend: breached items first, the time left or over,
and who holds each claimed takeover and for how long; a backend it cannot read is exit 1."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from backend.commands.shift import duration, inert, shift
from backend.erp.seed import upsert_pedidos
from tests.integration.api.conftest import ASKS, Live, live_backend, live_settings


@pytest.fixture(params=["sqlite", "postgres"])
def live(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Live]:
    settings = live_settings(request, tmp_path, reconcile_interval_s=3600, sla={"interruption": 0})
    for running in live_backend(settings):
        upsert_pedidos(
            running.backend.db, [{"pedidoId": "4821", "valorPedido": "129.90", "clienteId": "c-1"}]
        )
        yield running


def test_the_next_person_sees_breached_items_first_and_who_holds_what(live: Live) -> None:
    store = live.backend.store
    project = store.create_project("loja", module_map=None)
    session = store.create_session(project.id, "s")
    store.offer_handoff(project.id, session["id"], "arquiteto", "infra", "pronto")
    for text in ASKS:
        live.http.post(
            "/api/conversations/conv-shift/messages", json={"text": text, "cliente_id": "c-1"}
        )
    [taken] = [i for i in live.http.get("/api/inbox").json() if i["kind"] == "interruption"]
    claimed = live.http.post(
        f"/api/interruptions/{taken['target_id']}/claim", json={"operator": "ana"}
    )
    assert claimed.json()["claimed_at"]

    rows = shift(live.http, now=datetime.now(UTC) + timedelta(minutes=3))

    assert [(r["kind"], r["sla_state"]) for r in rows] == [
        ("interruption", "breached"),
        ("handoff", "ok"),
    ]
    assert rows[0]["held_by"] == "ana"
    assert rows[0]["held_for"] == "3m"
    assert rows[0]["sla"].endswith("over")
    assert rows[1]["sla"].endswith("left")
    assert rows[1]["held_by"] is None

    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "backend.cli",
            "shift",
            "--url",
            live.url,
            "--token",
            live.token,
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert [r["kind"] for r in json.loads(done.stdout)] == ["interruption", "handoff"]
    wrong = subprocess.run(
        [sys.executable, "-m", "backend.cli", "shift", "--url", live.url, "--token", "nope"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert wrong.returncode == 1
    assert "answered 401" in wrong.stderr


def test_durations_and_inert_text() -> None:
    assert [duration(s) for s in (5, 61, 3 * 3600 + 600, 2 * 86400 + 7200)] == [
        "5s",
        "1m",
        "3h 10m",
        "2d 2h",
    ]
    assert inert("pedido \x1b[31m4821\x07") == "pedido \ufffd[31m4821\ufffd"


def test_with_no_pager_a_late_takeover_still_gets_its_holding_message(live: Live) -> None:
    import time

    from backend.core import HOLDING_MESSAGE

    for text in ASKS:
        live.http.post(
            "/api/conversations/conv-nopager/messages", json={"text": text, "cliente_id": "c-1"}
        )
    deadline = time.monotonic() + 30
    while True:
        messages = live.http.get("/api/conversations/conv-nopager").json()["messages"]
        if any(m["texto"] == HOLDING_MESSAGE for m in messages):
            break
        assert time.monotonic() < deadline, "no holding message without a pager"
        time.sleep(0.2)
