"""Each answer of a loopback gateway on the real wire format ends in its true state
(SQLite and PostgreSQL): a refusal is ``falhou`` with the gateway's reason; a 5xx, a
timeout or a dropped connection is ``resultado_incerto``; a debit that lands after the
client gave up ends ``executado``, once; a settlement is told to the customer."""

from __future__ import annotations

import time

import pytest

from backend.exceptions import unavailable_cause
from backend.gateway.exceptions import GatewayMismatchError
from backend.gateway.simulator import FailureMode
from backend.guard.assembly import Guard

REFUND = {"pedidoId": "4821", "valor": "129.90"}
KEY = "reembolso#4821"


def _wait_for_debits(guard: Guard, n: int, timeout: float = 20.0) -> None:
    assert guard.simulator is not None
    deadline = time.monotonic() + timeout
    while len(guard.simulator.debits()) < n:
        assert time.monotonic() < deadline, f"the gateway never made debit #{n}"
        time.sleep(0.05)


def _ledger_status(guard: Guard) -> str:
    assert guard.ledger is not None
    record = guard.ledger.get(KEY)
    assert record is not None
    return record.status


@pytest.mark.parametrize(
    ("status", "reason"),
    [
        (402, "saldo insuficiente na conta de origem"),
        (409, "pedido já estornado pelo emissor"),
        (422, "valor fora do limite do cartão"),
    ],
)
def test_a_definitive_refusal_is_falhou_with_the_gateways_reason(
    guard: Guard, status: int, reason: str
) -> None:
    assert guard.simulator is not None
    assert guard.ledger is not None
    guard.simulator.fail_next("refuse", status=status, reason=reason)
    attempt = guard.orchestrator.call("conv-1", "emitir-reembolso", REFUND)
    assert attempt.resultado == "falhou"
    assert reason in attempt.record["detalhe"]
    assert str(status) in attempt.record["detalhe"]
    # The customer is told the bank's answer, and nothing says it was our outage.
    assert attempt.mensagem == f"Não foi possível concluir: o banco recusou: {reason}"
    assert unavailable_cause(attempt.error) is None
    record = guard.ledger.get(KEY)
    assert record is not None
    assert record.status == "falhou"
    assert record.resultado is not None
    assert record.resultado["recusa"] == {"status": status, "motivo": reason}
    assert guard.simulator.debits() == []
    # Released: the next attempt (the gateway now accepts) goes through, once.
    again = guard.orchestrator.call("conv-1", "emitir-reembolso", REFUND)
    assert again.resultado == "executado"
    assert len(guard.simulator.debits()) == 1


def test_a_rate_limit_is_falhou_but_ours_to_retry(guard: Guard) -> None:
    assert guard.simulator is not None
    guard.simulator.fail_next("refuse", status=429, reason="muitas requisições")
    attempt = guard.orchestrator.call("conv-1", "emitir-reembolso", REFUND)
    assert attempt.resultado == "falhou"  # nothing was debited: the claim is released
    assert unavailable_cause(attempt.error) is not None  # answered 502, never "o banco recusou"
    assert guard.simulator.debits() == []


@pytest.mark.parametrize(
    ("mode", "debits"),
    [("error_500_before_debit", 0), ("timeout_after_debit", 1), ("drop_after_debit", 1)],
)
def test_5xx_timeout_and_a_dropped_connection_stay_uncertain(
    guard: Guard, mode: FailureMode, debits: int
) -> None:
    assert guard.simulator is not None
    # The client's timeout is 0.5 s; the answer after a debit comes 3 s later.
    guard.simulator.fail_next(mode, delay_s=3.0 if mode == "timeout_after_debit" else 0.0)
    attempt = guard.orchestrator.call("conv-1", "emitir-reembolso", REFUND)
    assert attempt.resultado == "resultado_incerto"
    assert _ledger_status(guard) == "resultado_incerto"
    _wait_for_debits(guard, debits)
    assert len(guard.simulator.debits()) == debits
    retry = guard.orchestrator.call("conv-1", "emitir-reembolso", REFUND)
    assert retry.record["detalhe"] == "aguardando_reconciliacao"  # never retried blindly


def test_a_debit_after_the_clients_timeout_ends_executado_once(guard: Guard) -> None:
    """The gateway debits 5 s after the request; the client gives up after 0.5 s and
    reconcile asks at once: the gateway does not know the key yet, which is not falhou."""
    assert guard.simulator is not None
    guard.simulator.fail_next("slow_debit", delay_s=5.0)
    attempt = guard.orchestrator.call("conv-1", "emitir-reembolso", REFUND)
    assert attempt.resultado == "resultado_incerto"
    assert guard.orchestrator.reconcile() == []  # 404: still within the settle window
    assert guard.simulator.debits() == []  # (it really asked before the debit)
    assert _ledger_status(guard) == "resultado_incerto"
    _wait_for_debits(guard, 1)
    assert guard.orchestrator.reconcile() == [(KEY, "executado")]
    assert guard.orchestrator.reconcile() == []
    assert _ledger_status(guard) == "executado"
    later = guard.orchestrator.call("conv-1", "emitir-reembolso", REFUND)
    assert later.resultado == "bloqueado_por_idempotencia"
    assert len(guard.simulator.debits()) == 1
    with guard.db.transaction(write=False) as tx:
        pedido = tx.one("erp_pedido_admin", {"id": "4821"})
    assert pedido is not None
    assert pedido["status_reembolso"] == "reembolsado"


def test_a_settled_uncertain_refund_is_told_to_the_customer(guard: Guard) -> None:
    assert guard.simulator is not None
    guard.simulator.fail_next("timeout_after_debit", delay_s=3.0)
    guard.orchestrator.call("conv-1", "emitir-reembolso", REFUND)
    _wait_for_debits(guard, 1)
    before = [m.texto for m in guard.conversations.messages("conv-1")]
    assert guard.orchestrator.reconcile() == [(KEY, "executado")]
    told = [m for m in guard.conversations.messages("conv-1") if m.texto not in before]
    assert [(m.autor, m.texto) for m in told] == [
        ("agente", "Confirmamos com o banco: o reembolso de R$ 129.90 do pedido 4821 foi emitido.")
    ]
    assert told[0].delivery is not None  # queued for the customer's channel


def test_a_claim_names_its_gateway_and_reconcile_asks_no_other(guard: Guard) -> None:
    assert guard.simulator is not None
    assert guard.ledger is not None
    uncertain = guard.orchestrator.uncertain
    assert uncertain is not None
    guard.simulator.fail_next("timeout_after_debit", delay_s=3.0)
    guard.orchestrator.call("conv-1", "emitir-reembolso", REFUND)
    record = guard.ledger.get(KEY)
    assert record is not None
    assert record.gateway == guard.simulator.identity
    _wait_for_debits(guard, 1)
    guard.toolbox.gateway_identity = "https://outro-gateway.example"
    with pytest.raises(GatewayMismatchError) as refused:
        uncertain.reconcile_one(KEY, by="ana")
    assert guard.simulator.identity in refused.value.message
    assert "https://outro-gateway.example" in refused.value.message
    assert guard.orchestrator.reconcile() == []  # the loop skips it too
    assert _ledger_status(guard) == "resultado_incerto"  # nothing recorded
    guard.toolbox.gateway_identity = guard.simulator.identity
    assert guard.orchestrator.reconcile() == [(KEY, "executado")]


def test_an_amount_above_the_order_never_shows_the_customer_the_internal_text(
    guard: Guard,
) -> None:
    attempt = guard.orchestrator.call(
        "conv-1", "emitir-reembolso", {"pedidoId": "4821", "valor": "130.00"}
    )
    assert attempt.resultado == "falhou"
    assert attempt.mensagem == (
        "Não foi possível concluir: o valor pedido é maior que o valor do pedido 4821"
    )
    assert "129.90" not in attempt.mensagem
    # The ledger and the attempt record keep the facts for the operator.
    assert attempt.record["detalhe"] == "valor 130.00 acima do valor do pedido 129.90"
