"""``cadencia ledger reconcile`` settles an uncertain refund by asking the gateway by key."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from backend.cli import main
from backend.store.db import open_database
from tests.integration.guard.conftest import make_guard

REFUND = {"pedidoId": "4821", "valor": "129.90"}


def test_reconcile_command_completes_a_refund_the_gateway_did(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data, url = tmp_path / "data", f"sqlite:///{tmp_path / 'state.sqlite3'}"
    guard = make_guard(data, url, gateway_timeout_s=0.5)
    try:
        assert guard.simulator is not None
        guard.simulator.fail_next("timeout_after_debit", delay_s=1.5)
        attempt = guard.orchestrator.call("conv-1", "emitir-reembolso", REFUND)
        assert attempt.resultado == "resultado_incerto"
        # The debit lands in the simulator's journal after the timeout: wait for it.
        end = time.monotonic() + 15.0
        while not guard.simulator.debits() and time.monotonic() < end:
            time.sleep(0.05)
        assert len(guard.simulator.debits()) == 1
    finally:
        guard.close()
        guard.db.close()
    argv = ["ledger", "reconcile", "--data-dir", str(data), "--database", url]
    assert main(argv) == 0
    assert "reembolso#4821: executado" in capsys.readouterr().out
    assert main(argv) == 0
    assert "nothing to reconcile" in capsys.readouterr().out
    db = open_database(url)
    try:
        with db.transaction(write=False) as tx:
            pedido = tx.one("erp_pedido_admin", {"id": "4821"})
    finally:
        db.close()
    assert pedido is not None
    assert pedido["status_reembolso"] == "reembolsado"  # written by the refund role on reconcile
