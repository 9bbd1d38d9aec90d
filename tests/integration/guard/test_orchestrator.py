"""The guard's rules, end to end on real storage and the gateway simulator."""

from __future__ import annotations

import time

from backend.events import TENTATIVA
from backend.guard.assembly import Guard
from backend.guard.orchestrator import mensagem_de_teto

REFUND = {"pedidoId": "4821", "valor": "129.90"}


def _gateway_reads(guard: Guard) -> list[str]:
    """Reads of the gateway secret (tool roles' own DB credentials are not the point here)."""
    return [r for r in guard.secrets.reads if r == "cadencia/gateway-pagamento"]  # type: ignore[attr-defined]


def _debits(guard: Guard) -> int:
    assert guard.simulator is not None
    return len(guard.simulator.debits())


def _wait_for_debits(guard: Guard, n: int, deadline_s: float = 15.0) -> None:
    """Wait for the simulator's delayed debit (a condition, not a fixed sleep: a loaded
    machine may land it later than its nominal delay)."""
    end = time.monotonic() + deadline_s
    while _debits(guard) < n and time.monotonic() < end:
        time.sleep(0.05)
    assert _debits(guard) == n


def test_first_refund_executes_and_repeats_are_blocked_by_idempotency(guard: Guard) -> None:
    first = guard.orchestrator.call("conv-1", "emitir-reembolso", REFUND)
    second = guard.orchestrator.call("conv-1", "emitir-reembolso", REFUND)
    assert first.resultado == "executado"
    assert second.resultado == "bloqueado_por_idempotencia"
    assert second.record["tentativaNumero"] == 2
    assert second.record["chaveIdempotencia"] == first.record["chaveIdempotencia"]
    assert _debits(guard) == 1
    # the refund was written on the order by the refund role
    with guard.db.transaction(write=False) as tx:
        pedido = tx.one("erp_pedido_admin", {"id": "4821"})
    assert pedido is not None
    assert pedido["status_reembolso"] == "reembolsado"


def test_another_conversation_cannot_refund_the_same_order_again(guard: Guard) -> None:
    assert guard.orchestrator.call("conv-1", "emitir-reembolso", REFUND).resultado == "executado"
    other = guard.orchestrator.call("conv-2", "emitir-reembolso", REFUND)
    assert other.resultado == "bloqueado_por_idempotencia"
    assert _debits(guard) == 1


def test_ceiling_blocks_exactly_the_fifth_attempt_and_opens_one_takeover(guard: Guard) -> None:
    results = [guard.orchestrator.call("conv-1", "emitir-reembolso", REFUND) for _ in range(7)]
    assert [r.record["tentativaNumero"] for r in results] == [1, 2, 3, 4, 5, 6, 7]
    assert [r.resultado for r in results[:4]] == ["executado"] + ["bloqueado_por_idempotencia"] * 3
    assert all(r.resultado == "bloqueado_por_teto" for r in results[4:])
    assert results[4].mensagem == mensagem_de_teto("4821")
    takeovers = guard.interruptions.unresolved()
    assert len(takeovers) == 1
    assert takeovers[0].motivo == "teto_de_voltas"
    assert takeovers[0].attempts == 7
    assert guard.metrics.teto.labels(ferramenta="emitir-reembolso")._value.get() == 3
    assert b"cadencia_interrupcoes_por_teto_total" in guard.metrics.prometheus_text()
    assert _debits(guard) == 1


def test_ceiling_is_per_order_not_per_conversation(guard: Guard) -> None:
    for _ in range(4):
        guard.orchestrator.call("conv-1", "consultar-status-pedido", {"pedidoId": "4821"})
    other_order = guard.orchestrator.call("conv-1", "consultar-status-pedido", {"pedidoId": "4822"})
    assert other_order.resultado == "executado"
    assert other_order.dados is not None
    assert other_order.dados["valor_pedido"] in (
        "50.00",
        "50.0",
        "50",
    )


def test_blocked_attempts_never_read_the_gateway_secret(guard: Guard) -> None:
    guard.orchestrator.call("conv-1", "emitir-reembolso", REFUND)
    assert _gateway_reads(guard) == ["cadencia/gateway-pagamento"]
    guard.secrets.reads.clear()  # type: ignore[attr-defined]
    for _ in range(6):  # 3 idempotency-blocked, then 3 ceiling-blocked
        guard.orchestrator.call("conv-1", "emitir-reembolso", REFUND)
    assert guard.secrets.reads == []  # type: ignore[attr-defined]
    # the read and cadastro tools are never built with the gateway secret
    guard.orchestrator.call("conv-9", "consultar-status-pedido", {"pedidoId": "4821"})
    guard.orchestrator.call(
        "conv-9", "atualizar-cadastro", {"clienteId": "c-17", "email": "a@b.co"}
    )
    assert _gateway_reads(guard) == []


def test_same_key_different_value_is_handed_to_a_human(guard: Guard) -> None:
    guard.orchestrator.call("conv-1", "emitir-reembolso", REFUND)
    other = guard.orchestrator.call(
        "conv-1", "emitir-reembolso", {"pedidoId": "4821", "valor": "10.00"}
    )
    assert other.resultado == "bloqueado_por_idempotencia"
    assert other.record["detalhe"] == "conflito_de_valor"
    assert [i.motivo for i in guard.interruptions.unresolved()] == ["conflito_de_valor"]
    assert _debits(guard) == 1


def test_refund_above_order_value_fails_and_debits_nothing(guard: Guard) -> None:
    attempt = guard.orchestrator.call(
        "conv-1", "emitir-reembolso", {"pedidoId": "4822", "valor": "50.01"}
    )
    assert attempt.resultado == "falhou"
    assert _debits(guard) == 0
    # a failed claim is released: a correct amount can still go through
    ok = guard.orchestrator.call(
        "conv-1", "emitir-reembolso", {"pedidoId": "4822", "valor": "50.01"}
    )
    assert ok.resultado == "falhou"


def test_invalid_arguments_are_not_counted(guard: Guard) -> None:
    bad = [
        ("emitir-reembolso", {"pedidoId": "4821"}),
        ("emitir-reembolso", {"pedidoId": "4821", "valor": "-1"}),
        ("emitir-reembolso", {"pedidoId": "4821'; DROP TABLE pedidos;--", "valor": "1"}),
        ("emitir-reembolso", "not an object"),
        ("apagar-tudo", {"pedidoId": "4821"}),
        ("atualizar-cadastro", {"clienteId": "c-17"}),
    ]
    for ferramenta, args in bad:
        attempt = guard.orchestrator.call("conv-1", ferramenta, args)
        assert attempt.resultado == "argumentos_invalidos", (ferramenta, args)
        assert attempt.record["tentativaNumero"] == 0
    first_real = guard.orchestrator.call("conv-1", "emitir-reembolso", REFUND)
    assert first_real.record["tentativaNumero"] == 1
    assert _gateway_reads(guard) == ["cadencia/gateway-pagamento"]


def test_cadastro_deduplicates_identical_payload_only(guard: Guard) -> None:
    payload = {"clienteId": "c-17", "email": "novo@exemplo.com"}
    assert guard.orchestrator.call("conv-1", "atualizar-cadastro", payload).resultado == "executado"
    assert (
        guard.orchestrator.call("conv-1", "atualizar-cadastro", payload).resultado
        == "bloqueado_por_idempotencia"
    )
    changed = {"clienteId": "c-17", "telefone": "+55 11 99999-0000"}
    assert guard.orchestrator.call("conv-1", "atualizar-cadastro", changed).resultado == "executado"
    with guard.db.transaction(write=False) as tx:
        cliente = tx.one("erp_cliente_admin", {"id": "c-17"})
    assert cliente is not None
    assert cliente["email"] == "novo@exemplo.com"
    assert cliente["telefone"] == "+55 11 99999-0000"


def test_gateway_timeout_leaves_resultado_incerto_and_reconcile_completes(guard: Guard) -> None:
    assert guard.simulator is not None
    guard.simulator.fail_next("timeout_after_debit", delay_s=1.5)
    attempt = guard.orchestrator.call("conv-1", "emitir-reembolso", REFUND)
    assert attempt.resultado == "resultado_incerto"
    _wait_for_debits(guard, 1)  # the gateway did debit; only the answer was lost
    retry = guard.orchestrator.call("conv-1", "emitir-reembolso", REFUND)
    assert retry.resultado == "bloqueado_por_idempotencia"  # never retried blindly
    assert retry.record["detalhe"] == "aguardando_reconciliacao"
    assert guard.orchestrator.reconcile() == [("reembolso#4821", "executado")]
    assert guard.ledger is not None
    assert guard.ledger.get("reembolso#4821").status == "executado"
    assert _debits(guard) == 1


def test_crash_between_claim_and_completion_is_recovered_by_reconcile(guard: Guard) -> None:
    from backend.ledger.base import ClaimRequest, counter_key, payload_hash

    assert guard.ledger is not None
    # a process claimed the refund and died before calling the gateway
    claim = ClaimRequest(
        "reembolso#4821",
        "emitir-reembolso",
        "conv-1",
        "4821",
        payload_hash({"pedidoId": "4821", "valor": "129.90"}),
        "129.90",
    )
    assert (
        guard.ledger.reserve(counter_key("conv-1", "4821", "emitir-reembolso"), claim).claim
        == "claimed"
    )
    blocked = guard.orchestrator.call("conv-1", "emitir-reembolso", REFUND)
    assert blocked.record["detalhe"] == "em_andamento"
    time.sleep(0.6)  # the lease runs out
    assert (
        guard.orchestrator.call("conv-1", "emitir-reembolso", REFUND).record["detalhe"]
        == "aguardando_reconciliacao"
    )
    # The gateway does not know the key, but it may still be working on the request: within
    # the settle window the claim stays uncertain; once the window is over, falhou.
    assert guard.orchestrator.reconcile() == []
    still = guard.ledger.get("reembolso#4821")
    assert still is not None
    assert still.status == "resultado_incerto"
    guard.toolbox.gateway_settle_s = 0.0
    assert guard.orchestrator.reconcile() == [("reembolso#4821", "falhou")]  # gateway never saw it
    assert guard.orchestrator.call("conv-2", "emitir-reembolso", REFUND).resultado == "executado"
    assert _debits(guard) == 1


def test_every_attempt_is_an_event_with_the_seed_fields(guard: Guard) -> None:
    guard.orchestrator.call("conv-1", "emitir-reembolso", REFUND)
    guard.orchestrator.call("conv-1", "emitir-reembolso", REFUND)
    events = [e for e in guard.events.after(0) if e.type == TENTATIVA]
    assert len(events) == 2
    assert set(events[0].payload) >= {
        "evento",
        "timestamp",
        "conversaId",
        "pedidoId",
        "ferramenta",
        "tentativaNumero",
        "resultado",
        "chaveIdempotencia",
    }
    assert [e.payload["resultado"] for e in events] == ["executado", "bloqueado_por_idempotencia"]
    assert events[0].id < events[1].id


def test_a_settled_combination_answers_with_the_human_until_a_grant(guard: Guard) -> None:
    consulta = ("conv-1", "consultar-status-pedido", {"pedidoId": "4821"})
    for _ in range(5):
        guard.orchestrator.call(*consulta)
    [first] = guard.interruptions.unresolved()
    guard.interruptions.claim(first.id, "ana")
    guard.interruptions.close(first.id, "ana", "deny", "Vou verificar pessoalmente.")
    assert guard.interruptions.unresolved() == []
    # Settled by a human: the agent's next attempts get the human's answer, no new takeover.
    again = guard.orchestrator.call(*consulta)
    assert again.resultado == "bloqueado_por_teto"
    assert again.interruption_id is None
    assert "Vou verificar pessoalmente." in again.mensagem
    assert "decidido_por_operador: deny" in again.record["detalhe"]
    assert guard.interruptions.unresolved() == []
    # A grant of 2: exactly two more attempts run, then the combination is a human's again.
    guard.interruptions.grant(first.id, "ana", 2, "cliente confirmou o pedido")
    ran = [guard.orchestrator.call(*consulta) for _ in range(2)]
    assert [a.resultado for a in ran] == ["executado", "executado"]
    assert [a.record["tentativaNumero"] for a in ran] == [7, 8]
    stopped = guard.orchestrator.call(*consulta)
    assert stopped.resultado == "bloqueado_por_teto"
    [second] = guard.interruptions.unresolved()  # a resolved takeover hides no later one
    assert second.id != first.id
    assert stopped.interruption_id == second.id
    guard.orchestrator.call(*consulta)
    assert [i.id for i in guard.interruptions.unresolved()] == [second.id]  # still one open
    granted = [e for e in guard.events.after(0) if e.type == "interrupcao.concedida"]
    assert [(e.payload["operator"], e.payload["attempts"]) for e in granted] == [("ana", 2)]


def test_cadastro_takeover_names_the_cliente_not_a_pedido(guard: Guard) -> None:
    heard: list[str] = []
    guard.events.add_listener(lambda e: heard.append(e.type))
    calls = [
        guard.orchestrator.call(
            "conv-1", "atualizar-cadastro", {"clienteId": "c-17", "email": f"n{i}@exemplo.com"}
        )
        for i in range(5)
    ]
    blocked = calls[-1]
    assert blocked.resultado == "bloqueado_por_teto"
    assert blocked.record["clienteId"] == "c-17"
    assert blocked.record["pedidoId"] is None
    [takeover] = guard.interruptions.unresolved()
    item = takeover.to_dict()
    assert (item["entidade"], item["entidade_id"], item["attempt_count"]) == (
        "clienteId",
        "c-17",
        5,
    )
    assert "pedido" not in item
    assert "attempts" not in item
    opened = [e for e in guard.events.after(0) if e.type == "interrupcao.aberta"]
    assert opened[0].payload["clienteId"] == "c-17"
    # The takeover and the attempt that caused it were committed and broadcast together.
    assert heard[-2:] == ["interrupcao.aberta", TENTATIVA]


def test_cadastro_updates_every_given_column_and_refuses_an_unknown_cliente(guard: Guard) -> None:
    guard.conversations.bind("conv-18", "c-18")
    both = {"clienteId": "c-18", "email": "c18@exemplo.com", "endereco": "Rua A, 1"}
    assert guard.orchestrator.call("conv-18", "atualizar-cadastro", both).resultado == "executado"
    with guard.db.transaction(write=False) as tx:
        cliente = tx.one("erp_cliente_admin", {"id": "c-18"})
    assert cliente is not None
    assert (cliente["email"], cliente["endereco"], cliente["telefone"]) == (
        "c18@exemplo.com",
        "Rua A, 1",
        None,
    )
    ghost = guard.orchestrator.call(
        "conv-18", "atualizar-cadastro", {"clienteId": "c-99", "email": "x@exemplo.com"}
    )
    assert ghost.resultado == "falhou"
    assert "c-99" in ghost.mensagem
