"""A claimed takeover really hands the conversation to a human (real API on loopback)."""

from __future__ import annotations

import time
from typing import Any

from backend.agents.team import CUSTOMER_SERVICE
from backend.erp.seed import upsert_pedidos
from backend.events import EventType
from tests.integration.api.conftest import Live

MESSAGES = [
    "Quero o reembolso do pedido 4821",
    "Já caiu?",
    "Ainda não vi o dinheiro",
    "Faz o estorno de novo",
    "Olá? saiu o reembolso?",
]


def takeover(live: Live, conversa: str) -> dict[str, Any]:
    """Drive a conversation into the teto de voltas; returns its takeover item."""
    upsert_pedidos(
        live.backend.db, [{"pedidoId": "4821", "valorPedido": "129.90", "clienteId": "c-1"}]
    )
    for text in MESSAGES:
        got = live.http.post(
            f"/api/conversations/{conversa}/messages", json={"text": text, "cliente_id": "c-1"}
        )
        assert got.status_code == 200, got.text
    items = live.http.get("/api/approvals").json()["interruptions"]
    return next(i for i in items if i["conversation"] == conversa)


def conversation(live: Live, conversa: str) -> dict[str, Any]:
    got = live.http.get(f"/api/conversations/{conversa}")
    assert got.status_code == 200, got.text
    return dict(got.json())


def wait_delivered(live: Live, conversa: str, timeout: float = 20) -> dict[str, Any]:
    """The conversation once no outbound message is ``pending`` any more."""
    deadline = time.monotonic() + timeout
    while True:
        got = conversation(live, conversa)
        pending = [m for m in got["messages"] if (m["delivery"] or {}).get("status") == "pending"]
        if not pending:
            return got
        assert time.monotonic() < deadline, f"still pending: {pending}"
        time.sleep(0.05)


def model_turns(live: Live, conversa: str) -> int:
    return len(live.backend.events.of_agent(conversa, CUSTOMER_SERVICE, EventType.AGENT_TURN))


def test_claimed_conversation_gets_no_model_turn(live: Live) -> None:
    item = takeover(live, "conv-held")
    assert conversation(live, "conv-held")["state"] == "bot"
    claimed = live.http.post(f"/api/interruptions/{item['id']}/claim", json={"operator": "ana"})
    assert claimed.status_code == 200
    held = conversation(live, "conv-held")
    assert (held["state"], held["operator"]) == ("human", "ana")
    turns, last_event = model_turns(live, "conv-held"), live.backend.events.last_id()

    answer = live.http.post(
        "/api/conversations/conv-held/messages",
        json={"text": "Alguém aí? Cadê meu dinheiro?", "cliente_id": "c-1"},
    )

    assert answer.status_code == 200
    assert answer.json() == {"state": "human", "operator": "ana", "reply": None, "attempts": []}
    assert model_turns(live, "conv-held") == turns
    after = conversation(live, "conv-held")
    assert after["messages"][-1]["autor"] == "cliente"
    assert after["messages"][-1]["texto"] == "Alguém aí? Cadê meu dinheiro?"
    assert after["messages"][-1]["delivery"] is None
    # recorded and streamed: the conversa.mensagem event is in the log the stream reads
    new = [e for e in live.backend.events.after(last_event) if e.session_id == "conv-held"]
    assert [(e.type, e.payload["autor"]) for e in new] == [("conversa.mensagem", "cliente")]


def test_operator_replies_reach_the_channel_once_each(live: Live) -> None:
    item = takeover(live, "conv-reply")
    live.http.post(f"/api/interruptions/{item['id']}/claim", json={"operator": "ana"})
    texts = ["Oi, sou a Ana. Estou verificando o reembolso.", "Confirmado: o reembolso saiu."]
    replies = [
        live.http.post(
            f"/api/interruptions/{item['id']}/reply", json={"operator": "ana", "text": t}
        )
        for t in texts
    ]
    assert [r.status_code for r in replies] == [200, 200]
    assert [r.json()["autor"] for r in replies] == ["operador", "operador"]
    assert replies[0].json()["delivery"]["status"] in ("pending", "delivered")

    got = wait_delivered(live, "conv-reply")

    operador = [m for m in got["messages"] if m["autor"] == "operador"]
    assert [m["texto"] for m in operador] == texts
    assert all(m["delivery"]["status"] == "delivered" for m in operador)
    assert all(m["delivery"]["attempts"] == 1 for m in operador)
    journal = live.backend.channel_simulator.received()
    for m in operador:
        assert [j["texto"] for j in journal if j["messageId"] == m["id"]] == [m["texto"]]
    # the agent's earlier answers went out through the same channel
    agente = [m for m in got["messages"] if m["autor"] == "agente"]
    assert len(agente) == len(MESSAGES)
    assert {m["id"] for m in agente} <= {j["messageId"] for j in journal}
    events = live.backend.events.of_session("conv-reply", EventType.CONVERSA_MENSAGEM)
    assert [e.payload["texto"] for e in events if e.payload["autor"] == "operador"] == texts


def test_reply_refused_unless_the_claiming_operator(live: Live) -> None:
    item = takeover(live, "conv-409")
    url = f"/api/interruptions/{item['id']}/reply"
    unclaimed = live.http.post(url, json={"operator": "ana", "text": "oi"})
    assert unclaimed.status_code == 409
    assert unclaimed.json()["error"]["code"] == "conflict"
    live.http.post(f"/api/interruptions/{item['id']}/claim", json={"operator": "ana"})
    other = live.http.post(url, json={"operator": "bruno", "text": "oi"})
    assert other.status_code == 409
    missing = live.http.post(
        "/api/interruptions/999999/reply", json={"operator": "ana", "text": "x"}
    )
    assert missing.status_code == 404
    assert not [m for m in conversation(live, "conv-409")["messages"] if m["autor"] == "operador"]


def test_unknown_conversation_is_404(live: Live) -> None:
    got = live.http.get("/api/conversations/conv-nobody")
    assert got.status_code == 404
    assert got.json()["error"]["code"] == "not_found"


def test_bad_reply_bodies_are_4xx(live: Live) -> None:
    item = takeover(live, "conv-bad")
    live.http.post(f"/api/interruptions/{item['id']}/claim", json={"operator": "ana"})
    url = f"/api/interruptions/{item['id']}/reply"
    for body in (
        {"operator": "ana", "text": 42},
        {"operator": "ana"},
        {"operator": "ana", "text": "   "},
        {"operator": "ana", "text": "x" * 4001},
        {"operator": "ana", "text": "oi", "extra": True},
        {"operator": ["ana"], "text": "oi"},
    ):
        assert live.http.post(url, json=body).status_code == 422, body
    # No operator in the body: the token's (the bootstrap admin), who did not claim it.
    not_claimer = live.http.post(url, json={"text": "oi"})
    assert not_claimer.status_code == 409, not_claimer.text
    huge = live.http.post(url, json={"operator": "ana", "text": "x" * 2_000_000})
    assert huge.status_code == 413
    assert not [m for m in conversation(live, "conv-bad")["messages"] if m["autor"] == "operador"]


def test_resolve_reply_is_delivered_and_the_agent_answers_again(live: Live) -> None:
    item = takeover(live, "conv-back")
    live.http.post(f"/api/interruptions/{item['id']}/claim", json={"operator": "ana"})
    resolved = live.http.post(
        f"/api/interruptions/{item['id']}/resolve",
        json={"operator": "ana", "action": "deny", "reply": "Seu reembolso já foi emitido."},
    )
    assert resolved.status_code == 200
    got = wait_delivered(live, "conv-back")
    assert (got["state"], got["operator"]) == ("bot", None)
    last = got["messages"][-1]
    assert (last["autor"], last["delivery"]["status"]) == ("operador", "delivered")
    journal = live.backend.channel_simulator.received()
    assert [j["texto"] for j in journal if j["messageId"] == last["id"]] == [last["texto"]]
    # the takeover is closed: no more replies through it
    late = live.http.post(
        f"/api/interruptions/{item['id']}/reply", json={"operator": "ana", "text": "oi"}
    )
    assert late.status_code == 409
    again = live.http.post(
        "/api/conversations/conv-back/messages", json={"text": "Obrigado!", "cliente_id": "c-1"}
    )
    assert again.json()["state"] == "bot"
    assert again.json()["reply"]
