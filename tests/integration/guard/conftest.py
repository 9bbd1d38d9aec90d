"""Guards on real SQLite and real PostgreSQL, with a local gateway simulator."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from backend.erp.seed import upsert_pedidos
from backend.guard.assembly import Guard, build_guard
from backend.secrets.base import CountingSecretStore, FileSecretStore
from backend.settings import load_settings

CUSTOMER = "c-17"
"""Whose conversations the guard tests play: 4821 and 4822 are this customer's orders."""
PEDIDOS = [
    {"pedidoId": "4821", "valorPedido": "129.90", "clienteId": CUSTOMER},
    {"pedidoId": "4822", "valorPedido": "50.00", "clienteId": CUSTOMER},
    {"pedidoId": "5107", "valorPedido": "89.00", "clienteId": "c-18"},
]
CONVERSATIONS = ("conv-1", "conv-2", "conv-9")
"""The conversations of :data:`CUSTOMER` every guard made here starts with."""


def make_guard(data_dir: Path, database_url: str, **overrides: object) -> Guard:
    store = CountingSecretStore(FileSecretStore(data_dir / "secrets"))
    FileSecretStore(data_dir / "secrets").ensure("cadencia/gateway-pagamento")
    settings = load_settings(data_dir=data_dir, database_url=database_url, **overrides)
    guard = build_guard(settings, secrets=store)
    upsert_pedidos(guard.db, PEDIDOS)
    for conversa in CONVERSATIONS:
        guard.conversations.bind(conversa, CUSTOMER)
    store.reads.clear()
    return guard


@pytest.fixture(params=["sqlite", "postgres"])
def guard(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Guard]:
    """A production guard on SQLite, then on PostgreSQL."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'state.sqlite3'}"
    else:
        url = request.getfixturevalue("pg_url")
    g = make_guard(tmp_path / "data", url, ledger_lease_seconds=0.5, gateway_timeout_s=0.5)
    yield g
    g.close()
    g.db.close()
