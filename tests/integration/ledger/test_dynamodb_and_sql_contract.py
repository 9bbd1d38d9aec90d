"""The ledger's behaviour is the same on SQLite, real PostgreSQL and DynamoDB over HTTP (moto).

Each test runs three times, once per backend. Concurrency is proven with threads inside
one process and with several spawned processes sharing one store: every backend must hand
out exactly one claim per key and exactly ``teto`` attempts per counter, no matter the race.
"""

from __future__ import annotations

import multiprocessing
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any

import pytest

from backend.exceptions import LedgerError
from backend.ledger.base import ClaimRequest, Ledger, counter_key, payload_hash
from backend.ledger.factory import dynamodb_client, open_ledger
from backend.settings import load_settings

BACKENDS = ["sqlite", "postgres", "dynamodb"]


@dataclass
class Store:
    """A migrated store and the URL another process can open it with."""

    url: str
    make: Any
    """``make(**policy) -> Ledger`` on this store."""


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest) -> Iterator[Store]:
    if request.param in ("sqlite", "postgres"):
        from backend.ledger.sql import SqlLedger

        db = request.getfixturevalue("sqlite_db" if request.param == "sqlite" else "pg_db")
        yield Store(db.url, lambda **policy: SqlLedger(db, **policy))
        return
    from backend.ledger.dynamodb import DynamoLedger, create_table, drop_table

    endpoint = request.getfixturevalue("moto_endpoint")
    client = dynamodb_client({"endpoint_url": endpoint, "region_name": "us-east-1"})
    table = f"ledger-{uuid.uuid4().hex[:10]}"
    create_table(client, table)
    url = f"dynamodb://{table}?endpoint_url={endpoint}&region=us-east-1"
    yield Store(url, lambda **policy: DynamoLedger(client, table, **policy))
    drop_table(client, table)


@pytest.fixture
def ledger(store: Store) -> Ledger:
    return store.make(teto=4, lease_seconds=30.0)


def _claim(chave: str, valor: str = "129.90", conversa: str = "conv-1") -> ClaimRequest:
    return ClaimRequest(
        chave=chave,
        ferramenta="emitir-reembolso",
        conversa_id=conversa,
        entidade_id="4821",
        payload_hash=payload_hash({"pedidoId": "4821", "valor": valor}),
        valor=valor,
    )


def test_ceiling_allows_four_and_blocks_the_fifth_onwards(ledger: Ledger) -> None:
    teto = counter_key("conv-1", "4821", "consultar-status-pedido")
    answers = [ledger.reserve(teto, None) for _ in range(7)]
    assert [a.tentativa for a in answers] == [1, 2, 3, 4, 5, 6, 7]
    assert [a.bloqueado_por_teto for a in answers] == [False] * 4 + [True] * 3
    assert ledger.attempts(teto) == 7
    # Counters are per (conversa, entidade, ferramenta): another conversation starts fresh.
    other = ledger.reserve(counter_key("conv-2", "4821", "consultar-status-pedido"), None)
    assert (other.tentativa, other.bloqueado_por_teto) == (1, False)


def test_attempt_past_the_ceiling_never_claims(store: Store) -> None:
    ledger = store.make(teto=1)
    teto = counter_key("conv-1", "4821", "emitir-reembolso")
    assert ledger.reserve(teto, _claim("k-a")).claim == "claimed"
    blocked = ledger.reserve(teto, _claim("k-b"))
    assert blocked.bloqueado_por_teto
    assert blocked.claim == "none"
    assert ledger.get("k-b") is None


def test_claim_then_duplicate_returns_the_stored_result(ledger: Ledger) -> None:
    teto = counter_key("conv-1", "4821", "emitir-reembolso")
    first = ledger.reserve(teto, _claim("4821#reembolso"))
    assert first.claim == "claimed"
    assert first.record is None
    assert ledger.reserve(teto, _claim("4821#reembolso")).claim == "in_progress"
    ledger.complete("4821#reembolso", {"debito": "d-1", "valor": "129.90"})
    dup = ledger.reserve(teto, _claim("4821#reembolso"))
    assert dup.claim == "duplicate"
    assert dup.record is not None
    assert dup.record.status == "executado"
    assert dup.record.resultado == {"debito": "d-1", "valor": "129.90"}
    assert dup.record.valor == "129.90"
    assert dup.record.ferramenta == "emitir-reembolso"
    with pytest.raises(LedgerError):
        ledger.complete("4821#reembolso", {"again": True})


def test_same_key_different_payload_is_a_conflict(ledger: Ledger) -> None:
    teto = counter_key("conv-1", "4821", "emitir-reembolso")
    assert ledger.reserve(teto, _claim("4821#reembolso", "129.90")).claim == "claimed"
    ledger.complete("4821#reembolso", {"ok": True})
    other = ledger.reserve(teto, _claim("4821#reembolso", "500.00"))
    assert other.claim == "conflict"
    assert other.record is not None
    assert other.record.valor == "129.90"


def test_failed_claim_is_retaken_by_the_next_attempt(ledger: Ledger) -> None:
    teto = counter_key("conv-1", "4821", "emitir-reembolso")
    ledger.reserve(teto, _claim("k"))
    ledger.fail("k", {"erro": "saldo insuficiente no gateway"})
    assert ledger.get("k").status == "falhou"  # type: ignore[union-attr]
    again = ledger.reserve(teto, _claim("k", conversa="conv-9"))
    assert again.claim == "claimed"
    record = ledger.get("k")
    assert record is not None
    assert (record.status, record.resultado, record.conversa_id) == ("tentando", None, "conv-9")


def test_failed_claim_is_released_to_a_corrected_amount(ledger: Ledger) -> None:
    teto = counter_key("conv-1", "4821", "emitir-reembolso")
    ledger.reserve(teto, _claim("k", "500.00"))
    ledger.fail("k", {"erro": "valor acima do valor do pedido"})
    corrected = ledger.reserve(teto, _claim("k", "129.90"))
    assert corrected.claim == "claimed"  # not a conflict: nothing happened under the key
    record = ledger.get("k")
    assert record is not None
    assert (record.status, record.valor) == ("tentando", "129.90")
    assert record.payload_hash == payload_hash({"pedidoId": "4821", "valor": "129.90"})
    ledger.complete("k", {"ok": True})
    assert ledger.reserve(teto, _claim("k", "129.90")).claim == "duplicate"
    assert ledger.reserve(teto, _claim("k", "500.00")).claim == "conflict"


def test_stale_claim_becomes_uncertain_and_is_reconciled(store: Store) -> None:
    ledger = store.make(lease_seconds=0.2)
    teto = counter_key("conv-1", "4821", "emitir-reembolso")
    # A claim within its lease (a long one, so a loaded machine cannot outlive it).
    patient = store.make(lease_seconds=600.0)
    assert patient.reserve(teto, _claim("running")).claim == "claimed"
    with pytest.raises(LedgerError):  # still within its lease: the owner may be running
        patient.reconcile("running", happened=True, detalhe={})
    assert ledger.reserve(teto, _claim("k")).claim == "claimed"
    time.sleep(0.3)
    stale = ledger.reserve(teto, _claim("k"))
    assert stale.claim == "uncertain"  # never retried blindly
    assert [r.chave for r in ledger.uncertain()] == ["k"]  # "running" is not uncertain
    assert ledger.reserve(teto, _claim("k")).claim == "uncertain"
    assert ledger.reconcile("k", happened=True, detalhe={"gateway": "debito d-7"}) == "executado"
    assert ledger.uncertain() == []
    assert ledger.reserve(counter_key("c2", "4821", "emitir-reembolso"), _claim("k")).claim == (
        "duplicate"
    )


def test_reconcile_not_happened_releases_the_key(store: Store) -> None:
    ledger = store.make(lease_seconds=0.1)
    ledger.reserve(counter_key("c", "p", "emitir-reembolso"), _claim("k"))
    ledger.mark_uncertain("k", {"erro": "timeout"})
    assert ledger.reconcile("k", happened=False, detalhe={"gateway": "sem debito"}) == "falhou"
    assert ledger.reserve(counter_key("c", "p", "emitir-reembolso"), _claim("k")).claim == "claimed"


def test_only_the_settle_that_settled_a_claim_says_so(ledger: Ledger) -> None:
    ledger.reserve(counter_key("c", "p", "emitir-reembolso"), _claim("k"))
    ledger.mark_uncertain("k", {"erro": "timeout"})
    # Two reconcilers (the loop and an operator) both heard "debited": one settles it.
    assert ledger.settle("k", happened=True, detalhe={}) == ("executado", True)
    assert ledger.settle("k", happened=True, detalhe={}) == ("executado", False)


def test_a_claim_keeps_its_gateway_and_a_retake_names_the_new_one(ledger: Ledger) -> None:
    teto = counter_key("c", "4821", "emitir-reembolso")
    first = _claim("reembolso#4821", valor="500.00")
    assert ledger.reserve(teto, replace(first, gateway="https://a.example")).claim == "claimed"
    got = ledger.get("reembolso#4821")
    assert got is not None
    assert got.gateway == "https://a.example"
    ledger.fail("reembolso#4821", {"erro": "recusado"})
    second = replace(_claim("reembolso#4821"), gateway="https://b.example")
    assert ledger.reserve(teto, second).claim == "claimed"  # released: retaken
    got = ledger.get("reembolso#4821")
    assert got is not None
    assert (got.gateway, got.valor) == ("https://b.example", "129.90")
    ledger.mark_uncertain("reembolso#4821", {"erro": "timeout"})
    [uncertain] = ledger.uncertain()
    assert uncertain.gateway == "https://b.example"
    assert ledger.reserve(teto, _claim("sem-gateway")).claim == "claimed"
    assert ledger.get("sem-gateway").gateway is None  # type: ignore[union-attr]


def test_expire_stale_only_touches_expired_tentando(store: Store) -> None:
    ledger = store.make(lease_seconds=0.2)
    # "fresh" is claimed through a second ledger on the same store with a long lease: a
    # 0.2 s lease could run out on a loaded machine between its claim and the sweep.
    patient = store.make(lease_seconds=600.0)
    teto = counter_key("c", "p", "emitir-reembolso")
    for chave in ("old", "done"):
        ledger.reserve(teto, _claim(chave))
    ledger.complete("done", {"ok": True})
    time.sleep(0.3)
    patient.reserve(teto, _claim("fresh"))  # its lease has not run out
    assert ledger.expire_stale() == ["old"]
    statuses = {c: ledger.get(c).status for c in ("old", "done", "fresh")}  # type: ignore[union-attr]
    assert statuses == {"old": "resultado_incerto", "done": "executado", "fresh": "tentando"}
    assert ledger.expire_stale() == []


# -- concurrency ------------------------------------------------------------------------------


def _storm(ledger: Ledger, chave: str, tag: str, threads: int, rounds: int) -> list[str]:
    """Every thread is its own conversation hitting the same pedido key ``rounds`` times."""

    def one(i: int) -> list[str]:
        teto = counter_key(f"conv-{tag}-{i}", "4821", "emitir-reembolso")
        return [
            ledger.reserve(teto, _claim(chave, conversa=f"conv-{tag}-{i}")).claim
            for _ in range(rounds)
        ]

    with ThreadPoolExecutor(threads) as pool:
        return [c for got in pool.map(one, range(threads)) for c in got]


def _ceiling_race(ledger: Ledger, teto: str, threads: int) -> list[tuple[int, bool]]:
    with ThreadPoolExecutor(threads) as pool:
        got = list(pool.map(lambda _: ledger.reserve(teto, None), range(threads)))
    return [(r.tentativa, r.bloqueado_por_teto) for r in got]


def test_threads_race_for_one_key_exactly_one_claim(ledger: Ledger) -> None:
    outcomes = Counter(_storm(ledger, "4821#reembolso", "t", threads=32, rounds=3))
    assert outcomes["claimed"] == 1
    assert sum(outcomes.values()) == 96
    assert set(outcomes) <= {"claimed", "in_progress"}


def test_threads_race_on_one_counter_exactly_teto_pass(ledger: Ledger) -> None:
    got = _ceiling_race(ledger, counter_key("conv-1", "4821", "emitir-reembolso"), 32)
    assert sorted(t for t, _ in got) == list(range(1, 33))  # every attempt numbered once
    assert sorted(t for t, blocked in got if not blocked) == [1, 2, 3, 4]


def _process_worker(url: str, chave: str, tag: str, threads: int, rounds: int) -> list[Any]:
    ledger = open_ledger(url, load_settings())
    claims = _storm(ledger, chave, tag, threads, rounds)
    ceiling = _ceiling_race(ledger, counter_key("shared", "4821", "emitir-reembolso"), threads)
    return [claims, ceiling]


def test_processes_race_for_one_key_exactly_one_claim(store: Store) -> None:
    processes, threads, rounds = 3, 12, 3
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(processes) as pool:
        results = pool.starmap(
            _process_worker,
            [(store.url, "4821#reembolso", f"p{n}", threads, rounds) for n in range(processes)],
        )
    claims = Counter(c for got, _ in results for c in got)
    assert claims["claimed"] == 1
    assert sum(claims.values()) == processes * threads * rounds
    ceiling = [a for _, got in results for a in got]
    assert sorted(t for t, _ in ceiling) == list(range(1, processes * threads + 1))
    assert sorted(t for t, blocked in ceiling if not blocked) == [1, 2, 3, 4]
