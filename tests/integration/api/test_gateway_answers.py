"""The gateway's answers over the real API (SQLite and PostgreSQL): a declined refund is
told to the customer as the bank's answer and lands on the takeover and in the Inbox with
"edit valor" / "deny"; the demo goes on; a settlement reaches the customer; each order of
a conversation is refunded with its own amount."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from backend.erp.seed import upsert_pedidos
from backend.gateway.simulator import GatewaySimulator
from backend.secrets.base import FileSecretStore
from backend.settings import load_settings
from tests.integration.api.conftest import (
    ASKS,
    Live,
    live_backend,
    live_settings,
    refund_attempts,
    say,
)

REFUND = "emitir-reembolso"
REASON = "saldo insuficiente na conta de origem"
PEDIDOS = [
    {"pedidoId": "4821", "valorPedido": "129.90", "clienteId": "c-1"},
    {"pedidoId": "5501", "valorPedido": "55.00", "clienteId": "c-1"},
    {"pedidoId": "5402", "valorPedido": "54.00", "clienteId": "c-1"},
]


def _backend(request: pytest.FixtureRequest, tmp_path: Path, **settings: Any) -> Iterator[Live]:
    for live in live_backend(live_settings(request, tmp_path, **settings)):
        upsert_pedidos(live.backend.db, PEDIDOS)
        yield live


@pytest.fixture(params=["sqlite", "postgres"])
def live(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Live]:
    yield from _backend(request, tmp_path, reconcile_interval_s=3600, gateway_timeout_s=0.3)


def _until(what: str, check: Callable[[], Any], timeout: float = 60.0) -> Any:
    deadline = time.monotonic() + timeout
    while not (got := check()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)
    return got


def test_a_declined_refund_is_the_banks_answer_and_an_operator_corrects_the_valor(
    live: Live,
) -> None:
    simulator = live.backend.guard.simulator
    for _ in range(4):  # every attempt the agent makes before the teto
        simulator.fail_next("refuse", status=402, reason=REASON)
    replies = [say(live, "conv-402", text) for text in ASKS]
    first = replies[0]
    assert f"o banco recusou: {REASON}" in first["reply"]
    assert "instabilidade" not in first["reply"]
    [refused, *_] = refund_attempts(first)
    assert refused["resultado"] == "falhou"
    assert REASON in refused["detalhe"]
    assert refund_attempts(replies[-1])[-1]["resultado"] == "bloqueado_por_teto"
    assert simulator.debits() == []

    [item] = [i for i in live.http.get("/api/inbox").json() if i["kind"] == "interruption"]
    ident = item["target_id"]
    assert REASON in item["detail"]
    actions = {a["name"]: (a["path"], a["reason"]) for a in item["actions"]}
    assert actions["edit"] == (f"/api/interruptions/{ident}/resolve", "required")
    assert actions["deny"] == (f"/api/interruptions/{ident}/resolve", "optional")
    ledger = live.http.get(f"/api/interruptions/{ident}").json()["ledger"]
    assert (ledger["status"], ledger["recusado_pelo_banco"]) == ("falhou", True)
    assert REASON in ledger["motivo"]

    live.http.post(f"/api/interruptions/{ident}/claim", json={"operator": "ana"})
    done = live.http.post(
        f"/api/interruptions/{ident}/resolve",
        json={
            "operator": "ana",
            "action": "execute",
            "reply": "Reembolso parcial de 100,00 emitido.",
            "valor": "100.00",
            "reason": "o cliente aceitou o valor que o banco aprova",
        },
    )
    assert done.status_code == 200, done.text
    assert done.json()["outcome"] == "executado"
    [debit] = simulator.debits()
    assert debit.valor == "100.00"


def test_an_operators_settlement_is_told_to_the_customer(live: Live) -> None:
    live.backend.guard.simulator.fail_next("error_500_before_debit")
    say(live, "conv-500", ASKS[0])
    [item] = live.http.get("/api/approvals").json()["uncertain"]
    done = live.http.post(
        f"/api/uncertain/{item['id']}/settle",
        json={"operator": "ana", "outcome": "falhou", "reason": "banco: sem débito"},
    )
    assert done.status_code == 200, done.text
    messages = live.http.get("/api/conversations/conv-500").json()["messages"]
    assert messages[-1]["autor"] == "agente"
    assert messages[-1]["texto"].startswith(
        "Verificamos com o banco: o reembolso do pedido 4821 não foi efetuado"
    )


def test_each_order_of_a_conversation_is_refunded_with_its_own_amount(live: Live) -> None:
    first = refund_attempts(say(live, "conv-2x", "Quero o reembolso do pedido 5501"))
    assert [a["resultado"] for a in first] == ["executado"]
    second = say(live, "conv-2x", "Agora quero o reembolso do pedido 5402")
    assert [a["resultado"] for a in refund_attempts(second)] == ["executado"]
    assert [(d.pedido_id, d.valor) for d in live.backend.guard.simulator.debits()] == [
        ("5501", "55.00"),
        ("5402", "54.00"),
    ]


def _executed(live: Live) -> list[dict[str, Any]]:
    events = live.http.get("/api/events", params={"limit": 1000}).json()
    return [
        e
        for e in events
        if e["type"] == "TENTATIVA_DE_FERRAMENTA_REGISTRADA"
        and e["payload"]["ferramenta"] == REFUND
        and e["payload"]["resultado"] == "executado"
    ]


def test_the_demo_goes_on_when_the_bank_declines(tmp_path: Path) -> None:
    """The demo's customer insists on a refund the bank declines: the story reaches the
    teto's takeover, with the refusal in the ledger, and the next customer is served."""
    data = tmp_path / "data"
    secret = FileSecretStore(data / "secrets").ensure("cadencia/gateway-pagamento")
    bank = GatewaySimulator(secret).start()
    try:
        for _ in range(4):
            bank.fail_next("refuse", status=402, reason=REASON)
        settings = load_settings(
            data_dir=data,
            database_url=f"sqlite:///{tmp_path / 'demo.sqlite3'}",
            token="demo-token",
            gateway_url=bank.url,
        )
        for live in live_backend(settings, demo=True):
            [executed] = _until("the next customer's refund", partial(_executed, live), 120)
            assert executed["payload"]["conversaId"].startswith("conv-demo-b-")
            [takeover] = live.http.get("/api/approvals").json()["interruptions"]
            assert takeover["motivo"] == "teto_de_voltas"
            ledger = live.http.get(f"/api/interruptions/{takeover['id']}").json()["ledger"]
            assert ledger["status"] == "falhou"
            assert REASON in ledger["motivo"]
            failed = live.http.get("/api/events", params={"limit": 1000}).json()
            assert not [e for e in failed if e["type"] == "backend.task_failed"]
    finally:
        bank.stop()


@pytest.fixture(params=["sqlite"])
def reconciling(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Live]:
    yield from _backend(request, tmp_path, reconcile_interval_s=0.2, gateway_timeout_s=0.3)


def test_the_backends_own_reconcile_is_in_the_audit_and_tells_the_customer(
    reconciling: Live,
) -> None:
    live = reconciling
    live.backend.guard.simulator.fail_next("timeout_after_debit", delay_s=1.0)
    assert refund_attempts(say(live, "conv-auto", ASKS[0]))[-1]["resultado"] == "resultado_incerto"
    audit = _until(
        "the reconcile loop's settlement in the audit",
        lambda: live.http.get("/api/audit", params={"operator": "reconcile"}).json(),
        30,
    )
    assert [(e["action"], e["role"], e["outcome"]) for e in audit] == [
        ("reconcile_uncertain", "backend", "done")
    ]
    messages = live.http.get("/api/conversations/conv-auto").json()["messages"]
    assert messages[-1]["texto"] == (
        "Confirmamos com o banco: o reembolso de R$ 129.90 do pedido 4821 foi emitido."
    )
