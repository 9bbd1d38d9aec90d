"""``cadencia ledger reconcile`` settles an uncertain refund by asking the gateway by key."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from backend.cli import main
from backend.gateway.simulator import GatewaySimulator
from backend.ledger.sql import SqlLedger
from backend.secrets.base import FileSecretStore
from backend.settings import load_settings
from backend.store.db import open_database
from tests.integration.api.conftest import live_backend
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


def test_reconcile_command_asks_only_the_claims_gateway_and_is_audited(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A refund went to the real gateway (here a loopback one named by CADENCIA_GATEWAY_URL);
    run without that URL, the command would ask the local simulator, which never saw the key:
    it refuses, records nothing and exits 1. With the URL it settles; both are audited."""
    data, url = tmp_path / "data", f"sqlite:///{tmp_path / 'state.sqlite3'}"
    secret = FileSecretStore(data / "secrets").ensure("cadencia/gateway-pagamento")
    bank = GatewaySimulator(secret).start()
    try:
        guard = make_guard(data, url, gateway_timeout_s=0.5, gateway_url=bank.url)
        try:
            bank.fail_next("timeout_after_debit", delay_s=2.0)
            attempt = guard.orchestrator.call("conv-1", "emitir-reembolso", REFUND)
            assert attempt.resultado == "resultado_incerto"
        finally:
            guard.close()
            guard.db.close()
        end = time.monotonic() + 15.0
        while not bank.debits() and time.monotonic() < end:
            time.sleep(0.05)
        assert len(bank.debits()) == 1

        monkeypatch.delenv("CADENCIA_GATEWAY_URL", raising=False)
        argv = ["ledger", "reconcile", "--data-dir", str(data), "--database", url]
        assert main(argv) == 1
        out = " ".join(capsys.readouterr().out.split())
        assert f"reembolso#4821: not asked: reembolso#4821 went to gateway {bank.url}" in out
        assert _status(url) == "resultado_incerto"  # nothing recorded

        monkeypatch.setenv("CADENCIA_GATEWAY_URL", bank.url)
        assert main(argv) == 0
        assert "reembolso#4821: executado" in capsys.readouterr().out
        assert _status(url) == "executado"
        assert len(bank.debits()) == 1

        settings = load_settings(
            data_dir=data, database_url=url, token="test-token-123", reconcile_interval_s=3600
        )
        for live in live_backend(settings):
            audit = live.http.get("/api/audit").json()
        cli = [e for e in audit if e["operator"].endswith("@cli")]
        assert [(e["action"], e["outcome"], e["error"]) for e in cli] == [
            ("reconcile_uncertain", "refused", "gateway_mismatch"),
            ("reconcile_uncertain", "done", None),
        ]
        assert {e["role"] for e in cli} == {"cli"}
    finally:
        bank.stop()


def _status(url: str) -> str:
    db = open_database(url)
    try:
        record = SqlLedger(db).get("reembolso#4821")
    finally:
        db.close()
    assert record is not None
    return record.status
