"""Outbound delivery through a webhook: retries with one key, deadline, crash recovery."""

from __future__ import annotations

import time
from typing import Any

from backend.channel.simulator import ChannelSimulator
from backend.guard.assembly import build_guard
from backend.settings import load_settings
from tests.integration.api.conftest import Live
from tests.integration.conversations.conftest import StartLive

FAST = {"channel_backoff_base_s": 0.05, "channel_backoff_max_s": 0.2}


def settled(live: Live, conversa: str, timeout: float = 20) -> list[dict[str, Any]]:
    """The conversation's outbound messages once none is ``pending``."""
    deadline = time.monotonic() + timeout
    while True:
        got = live.http.get(f"/api/conversations/{conversa}")
        assert got.status_code == 200, got.text
        out = [m for m in got.json()["messages"] if m["delivery"] is not None]
        if out and all(m["delivery"]["status"] != "pending" for m in out):
            return out
        assert time.monotonic() < deadline, f"still pending: {out}"
        time.sleep(0.05)


def test_webhook_retried_with_one_key_until_delivered_once(
    start_live: StartLive, webhook: ChannelSimulator
) -> None:
    # first answer lost after the receipt, then a 503: the third attempt is delivered
    webhook.fail_next(502, after_receipt=True)
    webhook.fail_next(503)
    with start_live(channel_webhook_url=webhook.url, **FAST) as live:
        answer = live.http.post(
            "/api/conversations/conv-hook/messages", json={"text": "oi", "cliente_id": "c-1"}
        )
        assert answer.status_code == 200
        [message] = settled(live, "conv-hook")

    assert message["delivery"]["status"] == "delivered"
    assert message["delivery"]["attempts"] == 3
    assert message["delivery"]["delivered_at"]
    [receipt] = webhook.received()
    assert (receipt["messageId"], receipt["texto"]) == (message["id"], answer.json()["reply"])
    assert webhook.request_keys == [receipt["idempotencyKey"]] * 3
    assert live.backend.channel_simulator is None  # a webhook URL means no local simulator


def test_webhook_down_past_the_deadline_fails_visibly(
    start_live: StartLive, closed_port_url: str
) -> None:
    with start_live(channel_webhook_url=closed_port_url, channel_deadline_s=0.5, **FAST) as live:
        first = live.http.post(
            "/api/conversations/conv-down/messages", json={"text": "oi", "cliente_id": "c-1"}
        )
        assert first.status_code == 200
        [message] = settled(live, "conv-down")
        # nothing else breaks: the agent still answers and the conversation still reads
        again = live.http.post(
            "/api/conversations/conv-down/messages",
            json={"text": "pedido 4821?", "cliente_id": "c-1"},
        )
        assert again.status_code == 200
        assert again.json()["reply"]
        assert live.http.get("/api/approvals").status_code == 200

    delivery = message["delivery"]
    assert delivery["status"] == "failed"
    assert delivery["attempts"] >= 2
    assert delivery["delivered_at"] is None
    assert "deadline" in delivery["last_error"]
    assert "Connect" in delivery["last_error"]


def test_pending_delivery_left_by_a_crash_is_sent_on_start(
    start_live: StartLive, db_url: str, tmp_path: Any
) -> None:
    # A process recorded the agent's message and died before delivering it.
    settings = load_settings(data_dir=tmp_path / "data", database_url=db_url)
    guard = build_guard(settings)
    try:
        said = guard.conversations.say("conv-crash", "agente", "Seu pedido saiu para entrega.")
    finally:
        guard.close()
    assert said.delivery is not None
    assert said.delivery["status"] == "pending"

    with start_live() as live:
        [message] = settled(live, "conv-crash")
        journal = live.backend.channel_simulator.received()

    assert message["delivery"]["status"] == "delivered"
    assert [j["texto"] for j in journal if j["messageId"] == said.id] == [said.texto]
