"""The guard's hot path stays minimal: a blocked attempt is one commit and one ledger
statement (the ceiling's bump reads the claim it meets), whatever else the event adds."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from backend.guard.assembly import Guard
from tests.integration.guard.conftest import make_guard

REFUND = {"pedidoId": "4821", "valor": "129.90"}


@pytest.fixture
def sqlite_guard(tmp_path: Path) -> Iterator[Guard]:
    g = make_guard(tmp_path / "data", f"sqlite:///{tmp_path / 'state.sqlite3'}")
    yield g
    g.close()
    g.db.close()


def test_a_blocked_attempt_is_one_commit_and_one_ledger_statement(sqlite_guard: Guard) -> None:
    call = sqlite_guard.orchestrator.call
    assert call("conv-1", "emitir-reembolso", REFUND).resultado == "executado"
    statements: list[str] = []
    conn = sqlite_guard.db._conn()  # type: ignore[attr-defined]  # this thread's connection
    conn.set_trace_callback(statements.append)
    try:
        again = call("conv-2", "emitir-reembolso", REFUND)
    finally:
        conn.set_trace_callback(None)
    assert again.resultado == "bloqueado_por_idempotencia"
    assert again.record["tentativaNumero"] == 1
    assert statements.count("COMMIT") == 1
    assert [s for s in statements if s.startswith("BEGIN")] == ["BEGIN IMMEDIATE"]
    ledger = [s for s in statements if "ledger_" in s]
    assert len(ledger) == 1, ledger  # the bump that also read the executed claim
    # The decision is the ledger's, read in that one statement: the stored result comes back.
    assert again.dados == sqlite_guard.ledger.get(again.record["chaveIdempotencia"]).resultado
