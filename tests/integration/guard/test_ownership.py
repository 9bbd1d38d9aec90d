"""A conversation's tools reach only its own customer's orders and client, on both dialects:
another customer's is refused with an unknown one's answer, before any claim or secret read,
and still counts against the teto de voltas."""

from __future__ import annotations

from typing import Any

import pytest

from backend.guard.assembly import Guard
from backend.guard.exceptions import CustomerMismatchError
from tests.integration.guard.conftest import CUSTOMER

THEIRS = {"pedidoId": "5107", "valor": "89.00"}  # customer c-18's order
GHOST = {"pedidoId": "9999999", "valor": "89.00"}  # no such order


def _pedido(guard: Guard, pedido_id: str) -> dict[str, Any] | None:
    with guard.db.transaction(write=False) as tx:
        return tx.one("erp_pedido_admin", {"id": pedido_id})


def _answer(record: dict[str, Any], entidade: str) -> dict[str, Any]:
    """An attempt's record with its entity id and time blanked: what tells two answers apart."""
    out = {k: v for k, v in record.items() if k not in ("timestamp", "conversaId")}
    return {k: (v.replace(entidade, "<id>") if isinstance(v, str) else v) for k, v in out.items()}


def test_another_customers_order_is_refused_like_an_unknown_one(guard: Guard) -> None:
    before = _pedido(guard, "5107")
    foreign = guard.orchestrator.call("conv-1", "emitir-reembolso", THEIRS)
    unknown = guard.orchestrator.call("conv-2", "emitir-reembolso", GHOST)

    assert foreign.resultado == "falhou"
    assert foreign.mensagem == "Não foi possível concluir: pedido 5107 não encontrado"
    assert _answer(foreign.record, "5107") == _answer(unknown.record, "9999999")
    assert foreign.mensagem.replace("5107", "9999999") == unknown.mensagem
    assert foreign.record["chaveIdempotencia"] is None
    # No claim, no gateway secret, no debit, the order untouched.
    assert guard.ledger is not None
    assert guard.ledger.get("reembolso#5107") is None
    assert guard.secrets.reads == []  # type: ignore[attr-defined]
    assert guard.simulator is not None
    assert guard.simulator.debits() == []
    assert _pedido(guard, "5107") == before
    # The lookup and the cadastro refuse the other customer the same way.
    lookup = guard.orchestrator.call("conv-1", "consultar-status-pedido", {"pedidoId": "5107"})
    assert (lookup.resultado, lookup.dados) == ("falhou", None)
    assert lookup.mensagem == "Não foi possível concluir: pedido 5107 não encontrado"
    cadastro = guard.orchestrator.call(
        "conv-1", "atualizar-cadastro", {"clienteId": "c-18", "email": "x@exemplo.com"}
    )
    assert cadastro.resultado == "falhou"
    assert cadastro.mensagem == "Não foi possível concluir: cliente c-18 não encontrado"
    assert cadastro.record["chaveIdempotencia"] is None
    with guard.db.transaction(write=False) as tx:
        cliente = tx.one("erp_cliente_admin", {"id": "c-18"})
    assert cliente is not None
    assert cliente["email"] is None
    # Its own order still goes through.
    own = guard.orchestrator.call("conv-1", "emitir-reembolso", {"pedidoId": "4821", "valor": "1"})
    assert own.resultado == "executado"


def test_a_loop_on_another_customers_order_ends_at_the_teto(guard: Guard) -> None:
    attempts = [guard.orchestrator.call("conv-1", "emitir-reembolso", THEIRS) for _ in range(6)]
    assert [a.resultado for a in attempts] == ["falhou"] * 4 + ["bloqueado_por_teto"] * 2
    assert [a.record["tentativaNumero"] for a in attempts] == [1, 2, 3, 4, 5, 6]
    [takeover] = guard.interruptions.unresolved()
    assert (takeover.entidade_id, takeover.motivo) == ("5107", "teto_de_voltas")
    # A human executing the held call from this conversation is refused the same way.
    guard.interruptions.claim(takeover.id, "ana")
    by_human = guard.orchestrator.call("conv-1", "emitir-reembolso", THEIRS, operator="ana")
    assert by_human.resultado == "falhou"
    assert guard.simulator is not None
    assert guard.simulator.debits() == []
    assert guard.secrets.reads == []  # type: ignore[attr-defined]


def test_a_conversation_without_a_customer_owns_nothing(guard: Guard) -> None:
    nobody = guard.orchestrator.call("conv-nobody", "consultar-status-pedido", {"pedidoId": "4821"})
    assert nobody.resultado == "falhou"
    # A customer id carrying SQL is a parameter like any other: it owns nothing either.
    guard.conversations.bind("conv-sql", "c-17' OR '1'='1")
    sql = guard.orchestrator.call("conv-sql", "consultar-status-pedido", {"pedidoId": "4821"})
    assert sql.resultado == "falhou"
    assert _pedido(guard, "4821") is not None


def test_a_conversation_keeps_its_first_customer(guard: Guard) -> None:
    guard.conversations.bind("conv-1", CUSTOMER)  # the same customer again: nothing changes
    with pytest.raises(CustomerMismatchError):
        guard.conversations.bind("conv-1", "c-18")
    assert guard.conversations.state("conv-1").cliente_id == CUSTOMER
