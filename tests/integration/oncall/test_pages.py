"""Pages through PagerDuty's Events API v2 and a chat webhook, from a real backend (loopback
HTTP) on SQLite and PostgreSQL, to a loopback receiver speaking the real wire format:
a takeover past its SLA pages once, a 500 then a 429 with ``Retry-After`` are retried,
claiming acknowledges and resolving resolves with the same ``dedup_key``, and two backends
on one PostgreSQL send one trigger per item."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from backend.erp.seed import upsert_pedidos
from tests.integration.api.conftest import ASKS, Live, live_backend, live_settings

KEY = "R0UT1NGKEY0000000000000000000000"
DEADLINE_S = 30.0


class Receiver:
    """PagerDuty's enqueue endpoint and a chat webhook on loopback: every body is kept, and
    the next answers can be scripted (status, headers)."""

    def __init__(self, port: int = 0) -> None:
        self.events: list[dict[str, Any]] = []
        self.chat: list[dict[str, Any]] = []
        self.answers: list[tuple[int, dict[str, str]]] = []
        self.tried = 0
        me = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                size = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(size) or b"{}")
                if self.path == "/chat":
                    me.chat.append(body)
                    status, headers = 200, {}
                else:
                    me.tried += 1
                    status, headers = me.answers.pop(0) if me.answers else (202, {})
                    if status == 202:
                        me.events.append(body)
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                answer = {"status": "success", "dedup_key": body.get("dedup_key")}
                data = json.dumps(answer if status == 202 else {"status": "error"}).encode()
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.base = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def actions(self, dedup_key: str) -> list[str]:
        return [e["event_action"] for e in self.events if e["dedup_key"] == dedup_key]


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    got = Receiver()
    yield got
    got.server.shutdown()


def _settings(request: pytest.FixtureRequest, tmp_path: Path, receiver: Receiver) -> Any:
    return live_settings(
        request,
        tmp_path,
        reconcile_interval_s=3600,
        sla={"interruption": "0s"},
        pagerduty_routing_key=KEY,
        pagerduty_url=f"{receiver.base}/v2/enqueue",
        notify_webhook_url=f"{receiver.base}/chat",
        oncall_sweep_s=0.2,
    )


@pytest.fixture(params=["sqlite", "postgres"])
def live(request: pytest.FixtureRequest, tmp_path: Path, receiver: Receiver) -> Iterator[Live]:
    for running in live_backend(_settings(request, tmp_path, receiver)):
        upsert_pedidos(
            running.backend.db, [{"pedidoId": "4821", "valorPedido": "129.90", "clienteId": "c-1"}]
        )
        yield running


def _until(check: Callable[[], Any], what: str) -> Any:
    deadline = time.monotonic() + DEADLINE_S
    while not (found := check()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)
    return found


def _takeover(live: Live, conversa: str) -> dict[str, Any]:
    for text in ASKS:  # the teto de voltas hands the customer to a person
        sent = live.http.post(
            f"/api/conversations/{conversa}/messages", json={"text": text, "cliente_id": "c-1"}
        )
        assert sent.is_success, sent.text
    [item] = [i for i in live.http.get("/api/inbox").json() if i["kind"] == "interruption"]
    return dict(item)


def test_a_takeover_past_its_sla_pages_once_then_claim_acks_and_resolve_resolves(
    live: Live, receiver: Receiver
) -> None:
    item = _takeover(live, "conv-page")
    assert item["sla_state"] == "breached"
    _until(lambda: receiver.actions(item["id"]), "the trigger")
    time.sleep(1.0)  # five more sweeps: still one trigger
    [trigger] = receiver.events
    assert trigger["routing_key"] == KEY
    assert (trigger["event_action"], trigger["dedup_key"]) == ("trigger", item["id"])
    payload = trigger["payload"]
    assert payload["severity"] == "critical"
    assert item["title"] in payload["summary"]
    assert payload["source"]
    assert payload["custom_details"]["id"] == item["id"]
    assert trigger["links"][0]["href"].endswith("/api/inbox?kind=interruption")
    assert [m["event"] for m in receiver.chat] == ["new", "breached"]
    assert all(m["text"] for m in receiver.chat)  # Slack-compatible

    target = item["target_id"]
    claimed = live.http.post(f"/api/interruptions/{target}/claim", json={"operator": "ana"})
    assert claimed.status_code == 200, claimed.text
    _until(lambda: "acknowledge" in receiver.actions(item["id"]), "the acknowledge")
    resolved = live.http.post(
        f"/api/interruptions/{target}/resolve",
        json={"operator": "ana", "action": "deny", "reply": "Não podemos reembolsar."},
    )
    assert resolved.status_code == 200, resolved.text
    _until(lambda: "resolve" in receiver.actions(item["id"]), "the resolve")
    assert receiver.actions(item["id"]) == ["trigger", "acknowledge", "resolve"]
    assert {e["dedup_key"] for e in receiver.events} == {item["id"]}
    _until(lambda: [m["event"] for m in receiver.chat][-1:] == ["resolved"], "chat resolved")


def test_a_500_then_a_429_with_retry_after_are_retried(live: Live, receiver: Receiver) -> None:
    receiver.answers = [(500, {}), (429, {"Retry-After": "1"})]
    item = _takeover(live, "conv-retry")
    started = time.monotonic()
    _until(lambda: receiver.actions(item["id"]), "the trigger to get through")
    assert receiver.tried == 3  # 500, 429, then accepted
    assert time.monotonic() - started >= 1.0  # the 429's Retry-After was honoured
    assert receiver.actions(item["id"]) == ["trigger"]


def test_two_backends_on_one_postgres_send_one_trigger_per_item(
    request: pytest.FixtureRequest, tmp_path: Path, receiver: Receiver
) -> None:
    request.param = "postgres"  # type: ignore[attr-defined]  # what live_settings reads
    # One deployment, two processes: the same database and data dir (the tool roles'
    # passwords live there), each with its own port.
    settings = _settings(request, tmp_path, receiver)
    for one in live_backend(settings):
        upsert_pedidos(
            one.backend.db, [{"pedidoId": "4821", "valorPedido": "129.90", "clienteId": "c-1"}]
        )
        for _two in live_backend(settings):
            item = _takeover(one, "conv-two")
            dedup_key = item["id"]
            _until(lambda: receiver.actions(dedup_key), "the trigger")  # noqa: B023
            time.sleep(1.5)  # many sweeps in both processes
    triggers = [e for e in receiver.events if e["event_action"] == "trigger"]
    assert [t["dedup_key"] for t in triggers] == [dedup_key]


def test_release_by_the_holder_reopens_the_takeover_and_pages_it_again(
    live: Live, receiver: Receiver
) -> None:
    item = _takeover(live, "conv-release")
    target = item["target_id"]
    _until(lambda: receiver.actions(item["id"]), "the trigger")
    assert live.http.post(f"/api/interruptions/{target}/claim", json={"operator": "ana"}).is_success
    _until(lambda: "acknowledge" in receiver.actions(item["id"]), "the acknowledge")
    claimed = next(i for i in live.http.get("/api/inbox").json() if i["id"] == item["id"])
    assert ("release", f"/api/interruptions/{target}/release") in [
        (a["name"], a["path"]) for a in claimed["actions"]
    ]

    other = live.http.post(f"/api/interruptions/{target}/release", json={"operator": "bia"})
    assert other.status_code == 409, other.text  # only its holder releases it
    released = live.http.post(
        f"/api/interruptions/{target}/release", json={"operator": "ana", "reason": "fim do turno"}
    )

    assert released.status_code == 200, released.text
    assert released.json()["status"] == "open"
    _until(lambda: receiver.actions(item["id"]).count("trigger") == 2, "the page again")
    assert receiver.actions(item["id"]) == ["trigger", "acknowledge", "trigger"]
    events = live.http.get("/api/events", params={"limit": 1000}).json()
    [event] = [e for e in events if e["type"] == "interrupcao.liberada"]
    assert (event["payload"]["operator"], event["payload"]["reason"]) == ("ana", "fim do turno")
    again = live.http.post(f"/api/interruptions/{target}/release", json={"operator": "ana"})
    assert again.status_code == 409  # open now: nothing to release


def test_a_customer_nobody_took_by_the_sla_is_told_once_that_a_person_will_answer(
    live: Live, receiver: Receiver
) -> None:
    from backend.core import HOLDING_MESSAGE

    _takeover(live, "conv-hold")

    def holding() -> list[dict[str, Any]]:
        messages = live.http.get("/api/conversations/conv-hold").json()["messages"]
        return [m for m in messages if m["texto"] == HOLDING_MESSAGE]

    [told] = _until(holding, "the holding message")
    time.sleep(1.0)  # more sweeps: still one
    assert len(holding()) == 1
    assert told["delivery"] is not None  # it goes out through the channel like any reply
