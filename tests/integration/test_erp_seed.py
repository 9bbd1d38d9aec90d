"""``cadencia erp seed FILE.jsonl`` on SQLite and PostgreSQL: orders and clients load in one
go, a bad line loads nothing and is named, and the seeded customers can talk to the agent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from backend.cli import main
from backend.settings import load_settings
from backend.store.db import open_database
from tests.integration.api.conftest import live_backend

GOOD = [
    {"clienteId": "c-ana", "nome": "Ana Souza", "email": "ana@exemplo.com"},
    {"clienteId": "c-bia", "nome": "Bia Lima", "telefone": "+55 11 98888-0000"},
    {"pedidoId": "9001", "clienteId": "c-ana", "valorPedido": "129.90"},
    {"pedidoId": "9002", "clienteId": "c-bia", "valorPedido": 55, "status": "em_transito"},
]


@pytest.fixture(params=["sqlite", "postgres"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'erp.sqlite3'}"
    return str(request.getfixturevalue("pg_url"))


def _write(path: Path, lines: list[Any]) -> Path:
    path.write_text(
        "".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines),
        encoding="utf-8",
    )
    return path


def _seed(url: str, tmp_path: Path, file: Path) -> int:
    return main(["erp", "seed", str(file), "--database", url, "--data-dir", str(tmp_path / "d")])


def _rows(url: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    db = open_database(url)
    try:
        with db.transaction(write=False) as tx:
            tx.execute_sql("SELECT id, nome, email, telefone FROM clientes ORDER BY id")
            clientes = list(tx._cursor.fetchall())
            tx.execute_sql(
                "SELECT id, cliente_id, status, valor_pedido, status_reembolso FROM pedidos "
                "ORDER BY id"
            )
            pedidos = list(tx._cursor.fetchall())
    finally:
        db.close()
    return [dict(r) for r in clientes], [dict(r) for r in pedidos]


def test_a_seed_file_loads_orders_and_clients_and_loading_again_changes_nothing(
    url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = _write(tmp_path / "erp.jsonl", [*GOOD, ""])
    assert _seed(url, tmp_path, file) == 0
    assert "loaded 2 cliente(s) and 2 pedido(s)" in capsys.readouterr().err
    clientes, pedidos = _rows(url)
    assert [(c["id"], c["nome"], c["email"], c["telefone"]) for c in clientes] == [
        ("c-ana", "Ana Souza", "ana@exemplo.com", None),
        ("c-bia", "Bia Lima", None, "+55 11 98888-0000"),
    ]
    assert [(p["id"], p["cliente_id"], p["status"], str(p["valor_pedido"])) for p in pedidos] == [
        ("9001", "c-ana", "entregue", "129.90"),
        ("9002", "c-bia", "em_transito", "55.00"),
    ]
    assert _seed(url, tmp_path, file) == 0
    assert _rows(url) == (clientes, pedidos)


def test_bad_lines_are_named_and_nothing_is_loaded(
    url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = _write(
        tmp_path / "bad.jsonl",
        [
            GOOD[0],
            {"pedidoId": "9001'; DROP TABLE pedidos;--", "clienteId": "c-ana", "valorPedido": "1"},
            {"pedidoId": "9003", "clienteId": "c-ana", "valorPedido": "-5"},
            {"pedidoId": "9004", "clienteId": "c-ana", "valorPedido": "abc"},
            {"clienteId": "c-x"},
            {"clienteId": "c-y", "nome": "Y", "cpf": "123"},
            "not json",
            "[1, 2]",
        ],
    )
    assert _seed(url, tmp_path, bad) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "7 bad line(s), nothing loaded" in err
    for number, field in ((2, "pedidoId"), (3, "valorPedido"), (4, "valorPedido"), (5, "nome")):
        assert f"bad.jsonl:{number}: {field}:" in err, (number, err)
    for number in (6, 7, 8):
        assert f"bad.jsonl:{number}:" in err
    assert _rows(url) == ([], [])

    # A pedido of a cliente that is nowhere: the whole file is refused, even its good lines.
    orphan = _write(
        tmp_path / "orphan.jsonl",
        [GOOD[0], GOOD[2], {"pedidoId": "9005", "clienteId": "c-nobody", "valorPedido": "1"}],
    )
    assert _seed(url, tmp_path, orphan) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "orphan.jsonl:3: clienteId c-nobody" in err
    assert _rows(url) == ([], [])
    assert _seed(url, tmp_path, tmp_path / "missing.jsonl") == 2
    assert "cannot read seed file" in capsys.readouterr().err


def test_a_seeded_deployment_serves_its_customers(url: str, tmp_path: Path) -> None:
    assert _seed(url, tmp_path, _write(tmp_path / "erp.jsonl", GOOD)) == 0
    settings = load_settings(data_dir=tmp_path / "d", database_url=url, token="test-token-123")
    for live in live_backend(settings):
        ana = live.http.post(
            "/api/conversations/conv-ana/messages",
            json={"text": "Quero o reembolso do pedido 9001", "cliente_id": "c-ana"},
        )
        assert ana.status_code == 200, ana.text
        assert [a["resultado"] for a in ana.json()["attempts"]] == ["executado", "executado"]
        other = live.http.post(
            "/api/conversations/conv-bia/messages",
            json={"text": "Quero o reembolso do pedido 9001", "cliente_id": "c-bia"},
        )
        assert [a["resultado"] for a in other.json()["attempts"]] == ["falhou"]
