"""Plain-assert tests of the console's pure parts: ordering, feed lines, backoff, errors."""

from __future__ import annotations

import random

import httpx

from console.client import _error_from
from console.exceptions import AuthError, ConflictError, NotFoundError
from console.feed import from_event
from console.models import Approvals, Event, InfraPr, Interruption, InterruptionDetail
from console.state import awaiting_counts, backoff_delay, ordered_interruptions, ordered_prs


def test_awaiting_human_first_then_blocked() -> None:
    prs = [
        InfraPr(pr_action_id="a", gate_status="awaiting_qa", created_at="1"),
        InfraPr(pr_action_id="b", gate_status="blocked", created_at="2"),
        InfraPr(pr_action_id="c", gate_status="awaiting_human", created_at="3"),
    ]
    assert [p.pr_action_id for p in ordered_prs(prs)] == ["c", "b", "a"]
    items = [Interruption(id=1, status="claimed"), Interruption(id=2, status="open")]
    assert [i.id for i in ordered_interruptions(items)] == [2, 1]
    assert awaiting_counts(Approvals(infra_prs=prs, interruptions=items)) == (1, 1)


def test_feed_line_for_known_unknown_and_broken_events() -> None:
    ok = from_event(
        Event(
            id=1,
            type="interrupcao.aberta",
            agent="atendimento",
            payload={
                "interrupcao_id": 7,
                "motivo": "teto_de_voltas",
                "ferramenta": "reembolsar_pedido",
                "conversaId": "c-1",
            },
        )
    )
    assert "teto_de_voltas" in ok.text
    assert "reembolsar_pedido" in ok.text
    odd = from_event(Event(id=2, type="something.new", payload={"x": 1}))
    assert odd.text == "x=1"
    broken = from_event(Event(id=3, type="infra.gate_changed", payload={"reason": object()}))
    assert "PR ?" in broken.text


def test_backoff_grows_capped_with_jitter() -> None:
    rng = random.Random(1)
    delays = [backoff_delay(n, rng=rng) for n in range(1, 12)]
    assert all(0.25 <= d <= 15.0 for d in delays)
    assert max(backoff_delay(10, rng=random.Random(s)) for s in range(50)) > 5
    assert len({round(backoff_delay(5, rng=random.Random(s)), 3) for s in range(20)}) > 10


def test_error_translation() -> None:
    def resp(status: int) -> httpx.Response:
        return httpx.Response(status, json={"error": {"code": "c", "message": "m"}})

    assert isinstance(_error_from(resp(409)), ConflictError)
    assert isinstance(_error_from(resp(401)), AuthError)
    assert isinstance(_error_from(resp(404)), NotFoundError)
    assert _error_from(resp(409)).message == "m"


def test_interruption_detail_attempts_list_is_history() -> None:
    d = InterruptionDetail.from_api(
        {"id": 1, "attempts": [{"tentativaNumero": 1, "resultado": "falha"}]}
    )
    assert d.attempts == 1
    assert d.attempt_history[0].resultado == "falha"
