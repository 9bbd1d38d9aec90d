"""Exactly-once refunds under concurrency: threads and separate processes, SQL backends.

(The DynamoDB ledger has its own concurrency tests on moto over HTTP.)
"""

from __future__ import annotations

import multiprocessing
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from backend.guard.assembly import build_guard
from backend.settings import load_settings
from tests.integration.guard.conftest import CUSTOMER, make_guard

REFUND = {"pedidoId": "4821", "valor": "129.90"}


def _storm_worker(data_dir: str, url: str, gateway_url: str, worker: int, calls: int) -> list[str]:
    settings = load_settings(data_dir=Path(data_dir), database_url=url, gateway_url=gateway_url)
    guard = build_guard(settings)
    try:
        with ThreadPoolExecutor(max_workers=16) as pool:
            results = list(
                pool.map(
                    lambda i: (
                        guard.orchestrator.call(
                            f"conv-{worker}-{i}", "emitir-reembolso", REFUND
                        ).resultado
                    ),
                    range(calls),
                )
            )
        return results
    finally:
        guard.close()
        guard.db.close()


@pytest.fixture(params=["sqlite", "postgres"])
def storm_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'storm.sqlite3'}"
    return str(request.getfixturevalue("pg_url"))


def test_thread_storm_on_one_order_debits_once(storm_url: str, tmp_path: Path) -> None:
    guard = make_guard(tmp_path / "data", storm_url)
    for i in range(200):
        guard.conversations.bind(f"conv-{i}", CUSTOMER)
    try:
        with ThreadPoolExecutor(max_workers=32) as pool:
            results = list(
                pool.map(
                    lambda i: (
                        guard.orchestrator.call(f"conv-{i}", "emitir-reembolso", REFUND).resultado
                    ),
                    range(200),
                )
            )
        assert results.count("executado") == 1
        assert results.count("bloqueado_por_idempotencia") == 199
        assert guard.simulator is not None
        assert len(guard.simulator.debits()) == 1
    finally:
        guard.close()
        guard.db.close()


def test_process_storm_on_one_order_debits_once(storm_url: str, tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    guard = make_guard(data_dir, storm_url)  # migrates, seeds, starts the one gateway
    assert guard.simulator is not None
    for w in range(3):
        for i in range(80):
            guard.conversations.bind(f"conv-{w}-{i}", CUSTOMER)
    try:
        ctx = multiprocessing.get_context("spawn")
        with ctx.Pool(3) as pool:
            per_worker = pool.starmap(
                _storm_worker,
                [(str(data_dir), storm_url, guard.simulator.url, w, 80) for w in range(3)],
            )
        results = [r for worker in per_worker for r in worker]
        assert len(results) == 240
        assert results.count("executado") == 1, results
        assert len(guard.simulator.debits()) == 1
    finally:
        guard.close()
        guard.db.close()


def test_ceiling_counter_is_exact_under_threads(storm_url: str, tmp_path: Path) -> None:
    guard = make_guard(tmp_path / "data", storm_url)
    try:
        with ThreadPoolExecutor(max_workers=16) as pool:
            attempts = list(
                pool.map(
                    lambda _: guard.orchestrator.call(
                        "conv-1", "consultar-status-pedido", {"pedidoId": "4821"}
                    ),
                    range(40),
                )
            )
        numbers = sorted(a.record["tentativaNumero"] for a in attempts)
        assert numbers == list(range(1, 41))  # no lost or doubled increments
        assert sum(a.resultado == "executado" for a in attempts) == 4
        assert len(guard.interruptions.unresolved()) == 1
    finally:
        guard.close()
        guard.db.close()
