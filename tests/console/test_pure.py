"""Plain-assert tests of the console's pure parts: ordering, feed lines, backoff, errors."""

from __future__ import annotations

import random
import ssl
from decimal import Decimal
from typing import get_args

import httpx
import pytest
from httpx_sse import ServerSentEvent
from pydantic import ValidationError as PydanticValidationError

from console.client import tls_context
from console.client_decode import error_from, parse, stream_item
from console.exceptions import (
    AuthError,
    BlockedByLedgerError,
    ConflictError,
    ContractError,
    NotFoundError,
)
from console.feed import from_event
from console.models import (
    Approvals,
    Delivery,
    Interruption,
    InterruptionDetail,
    LedgerFacts,
    Malformed,
    PullRequest,
    ResolveResult,
    Resultado,
    RosterEntry,
    StreamEvent,
)
from console.state import (
    RESULTADO_STYLE,
    awaiting_counts,
    backoff_delay,
    needs_approvals_refetch,
    needs_roster_refetch,
    ordered_interruptions,
    ordered_prs,
    resultado_style,
    touched_items,
)
from console.takeover import (
    blocked_outcome,
    delivery_mark,
    execute_warning,
    ledger_text,
    parse_attempts,
    parse_valor,
    resolve_outcome,
)


def test_awaiting_human_first_then_blocked() -> None:
    prs = [
        PullRequest(id="a", gate_status="awaiting_qa", created_at="1"),
        PullRequest(id="b", gate_status="blocked", created_at="2"),
        PullRequest(id="c", gate_status="awaiting_human", created_at="3"),
    ]
    assert [p.id for p in ordered_prs(prs)] == ["c", "b", "a"]
    items = [
        Interruption(id=1, entidade="pedidoId", entidade_id="1", status="claimed"),
        Interruption(id=2, entidade="pedidoId", entidade_id="2", status="open"),
    ]
    assert [i.id for i in ordered_interruptions(items)] == [2, 1]
    assert awaiting_counts(Approvals(infra_prs=prs, interruptions=items)) == (1, 1)


def test_feed_line_is_the_servers_text() -> None:
    event = StreamEvent(id=1, type="interrupcao.aberta", text="interruption 7 opened")
    line = from_event(event)
    assert (line.id, line.kind, line.text) == (1, "interrupcao.aberta", "interruption 7 opened")


def test_every_resultado_has_its_own_colour_and_unknown_stays_plain() -> None:
    values = get_args(Resultado)
    assert set(RESULTADO_STYLE) == set(values)
    assert resultado_style("executado") == "green"
    assert resultado_style("bloqueado_por_teto") == "bold red"
    assert resultado_style("sucesso") == ""  # a value the ledger never sends


def test_backoff_grows_capped_with_jitter() -> None:
    rng = random.Random(1)
    delays = [backoff_delay(n, rng=rng) for n in range(1, 12)]
    assert all(0.25 <= d <= 15.0 for d in delays)
    assert max(backoff_delay(10, rng=random.Random(s)) for s in range(50)) > 5
    assert len({round(backoff_delay(5, rng=random.Random(s)), 3) for s in range(20)}) > 10


def test_plain_http_skips_the_ca_bundle_but_tls_would_still_be_verified() -> None:
    assert tls_context("https://ops.example.com") is True  # httpx's own verification
    ctx = tls_context("http://127.0.0.1:8765")
    assert isinstance(ctx, ssl.SSLContext)
    assert ctx.cert_store_stats()["x509_ca"] == 0  # nothing loaded at start
    assert (ctx.verify_mode, ctx.check_hostname) == (ssl.CERT_REQUIRED, True)  # fails closed


def test_error_translation() -> None:
    def resp(status: int) -> httpx.Response:
        return httpx.Response(status, json={"error": {"code": "c", "message": "m"}})

    assert isinstance(error_from(resp(409)), ConflictError)
    assert isinstance(error_from(resp(401)), AuthError)
    assert isinstance(error_from(resp(404)), NotFoundError)
    assert error_from(resp(409)).message == "m"


def test_interruption_item_and_detail_read_the_agreed_contract() -> None:
    item = Interruption.model_validate(
        {"id": 1, "entidade": "clienteId", "entidade_id": "c-17", "attempt_count": 5}
    )
    assert (item.entity_text(), item.attempt_count) == ("cliente c-17", 5)
    with pytest.raises(PydanticValidationError):  # the pre-contract shape is not read
        Interruption.model_validate({"id": 1, "pedido": "4821", "attempts": 5})
    detail = InterruptionDetail.model_validate(
        {
            "id": 1,
            "entidade": "pedidoId",
            "entidade_id": "4821",
            "attempts": [{"tentativaNumero": 1, "resultado": "falhou"}],
        }
    )
    assert detail.attempts[0].resultado == "falhou"


def test_a_bad_field_is_a_contract_error_naming_route_and_field() -> None:
    with pytest.raises(ContractError) as caught:
        parse(list[RosterEntry], [{"id": "qa", "status": 3}], "GET /api/roster")
    assert (caught.value.route, caught.value.field) == ("GET /api/roster", "[0].status")
    assert "GET /api/roster" in caught.value.message
    assert "[0].status" in caught.value.message


def test_an_unreadable_stream_event_is_malformed_not_fatal() -> None:
    bad = stream_item(StreamEvent, ServerSentEvent(event="event", data='{"id": "x"}', id="41"))
    assert isinstance(bad, Malformed)
    assert (bad.id, bad.field) == (41, "id")
    garbled = stream_item(StreamEvent, ServerSentEvent(event="event", data="{", id="42"))
    assert isinstance(garbled, Malformed)
    assert garbled.field == "(data)"
    no_text = stream_item(StreamEvent, ServerSentEvent(data='{"id": 43, "type": "x"}', id="43"))
    assert isinstance(no_text, Malformed)
    assert no_text.field == "text"  # the feed shows the server's line; without it, say so


def _facts(status: str, **extra: object) -> LedgerFacts:
    return LedgerFacts.model_validate(
        {
            "status": status,
            "valor": "129.90",
            "conversaId": "conv-77f1",
            "ts": "2025-11-29T09:14:03Z",
            "chaveIdempotencia": "reembolso#4821",
            **extra,
        }
    )


def test_the_execute_warning_says_what_the_ledger_holds() -> None:
    text, style = execute_warning(_facts("executado"), "emitir-reembolso")
    assert text == (
        "emitir-reembolso already ran: 129.90 at 09:14 in conv-77f1"
        " — a second emitir-reembolso will be blocked."
    )
    assert style == "bold red"
    assert "released" in execute_warning(_facts("falhou"), "emitir-reembolso")[0]
    assert "reconcile" in execute_warning(_facts("resultado_incerto"), "emitir-reembolso")[0]
    assert "first time" in execute_warning(None, "emitir-reembolso")[0]


def test_a_banks_refusal_is_shown_with_its_reason_on_the_takeover() -> None:
    refused = _facts(
        "falhou", motivo="o banco recusou (402): saldo insuficiente", recusado_pelo_banco=True
    )
    assert ledger_text(refused).endswith("— o banco recusou (402): saldo insuficiente")
    text, _ = execute_warning(refused, "emitir-reembolso")
    assert "the bank refused" in text
    assert "saldo insuficiente" in text
    assert "edit the valor" in text


def test_only_executado_is_reported_as_executed() -> None:
    item = {"id": 1, "entidade": "pedidoId", "entidade_id": "4821"}

    def outcome(value: str | None) -> str:
        result = ResolveResult.model_validate(
            {"outcome": value, "interruption": item, "ledger": _facts("executado").model_dump()}
        )
        return resolve_outcome("execute", result, "emitir-reembolso").text

    assert outcome("executado").startswith("executado")
    for value in get_args(Resultado):
        if value != "executado":
            assert not outcome(value).startswith("executado"), value
            assert "done" not in outcome(value)
    assert "did not say" in outcome(None)
    assert "129.90" in outcome("bloqueado_por_idempotencia")


def test_a_409_blocked_by_ledger_carries_the_ledger_facts() -> None:
    facts = _facts("executado").model_dump()
    blocked = error_from(
        httpx.Response(
            409, json={"error": {"code": "blocked_by_ledger", "message": "m", "ledger": facts}}
        )
    )
    assert isinstance(blocked, BlockedByLedgerError)
    assert blocked.ledger.valor == "129.90"
    assert "nothing ran" in blocked_outcome(blocked.ledger, "emitir-reembolso").text
    unreadable = error_from(
        httpx.Response(409, json={"error": {"code": "blocked_by_ledger", "message": "m"}})
    )
    assert type(unreadable) is ConflictError  # still a conflict, never a success


def test_valor_and_attempts_are_checked_before_sending() -> None:
    assert parse_valor("59,90") == Decimal("59.90")
    assert isinstance(parse_valor("abc"), str)
    assert isinstance(parse_valor("0"), str)
    assert isinstance(parse_valor("1.999"), str)
    assert parse_attempts("3") == 3
    assert isinstance(parse_attempts("11"), str)
    assert isinstance(parse_attempts("0"), str)


def test_delivery_marks() -> None:
    assert delivery_mark(None) == ("", "")
    assert delivery_mark(Delivery(status="pending", attempts=0))[0] == "… pending"
    failed = Delivery(status="failed", attempts=3, last_error="503")
    assert delivery_mark(failed) == ("✗ failed after 3: 503", "bold red")


def test_events_name_the_screens_they_touch() -> None:
    assert touched_items("conversa.mensagem", {"conversaId": "c-17"}) == {"conv:c-17"}
    assert touched_items("interrupcao.assumida", {"interrupcao_id": 4}) == {"int:4"}
    assert touched_items("agent.status", {}) == set()


def test_an_uncertain_attempt_refetches_approvals() -> None:
    attempt = "TENTATIVA_DE_FERRAMENTA_REGISTRADA"
    assert needs_approvals_refetch(attempt, {"resultado": "resultado_incerto"})
    assert not needs_approvals_refetch(attempt, {"resultado": "executado"})
    assert needs_approvals_refetch("ledger.reconciliado")


def test_roster_entries_of_an_older_and_a_newer_backend_both_read() -> None:
    old = RosterEntry.model_validate({"id": "po", "role": "product owner", "status": "idle"})
    assert (old.usage, old.paused_by, old.tokens_text()) == (None, None, "—")
    new = RosterEntry.model_validate(
        {
            "id": "po",
            "status": "paused",
            "paused_by": "ana",
            "usage": {"input_tokens": 9_000, "output_tokens": 3_345, "cost_usd": None},
        }
    )
    assert (new.status, new.paused_by, new.tokens_text()) == ("paused", "ana", "12.3k")
    small = {"input_tokens": 82, "output_tokens": 17, "cost_usd": 0.01}
    assert RosterEntry.model_validate({"id": "x", "usage": small}).tokens_text() == "99"
    assert RosterEntry.model_validate({"id": "x", "status": "error"}).status == "error"
    assert needs_roster_refetch("agent.paused")
    assert needs_roster_refetch("agent.resumed")


def test_a_tool_result_is_shown_with_its_accents_and_non_json_as_it_is() -> None:
    from console.screens.agent_turns import _readable

    assert _readable('{"mensagem": "N\\u00e3o consigo"}') == '{"mensagem": "Não consigo"}'
    assert _readable("plain text, not JSON") == "plain text, not JSON"
