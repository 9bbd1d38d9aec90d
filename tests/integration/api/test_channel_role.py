"""The ``channel`` role over the real API with real tokens (SQLite and PostgreSQL): a customer
channel's token posts customer messages and nothing else, and an operator's token posting
one is in the audit trail as that operator's action."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from backend.cli import main
from backend.erp.seed import upsert_pedidos
from tests.integration.api.conftest import Live


def _as(live: Live, token: str) -> httpx.Client:
    return httpx.Client(base_url=live.url, headers={"Authorization": f"Bearer {token}"}, timeout=30)


def _audit(live: Live) -> list[dict[str, Any]]:
    got = live.http.get("/api/audit", params={"limit": 1000})
    assert got.status_code == 200, got.text
    return list(got.json())


def test_a_channel_token_only_posts_customer_messages(live: Live) -> None:
    backend = live.backend
    upsert_pedidos(backend.db, [{"pedidoId": "4821", "valorPedido": "129.90", "clienteId": "c-1"}])
    _, channel = backend.operators.add("loja-web", "channel")
    ask = {"text": "Qual o status do pedido 4821?", "cliente_id": "c-1"}
    with _as(live, channel) as web:
        said = web.post("/api/conversations/conv-web/messages", json=ask)
        assert said.status_code == 200, said.text
        assert [a["resultado"] for a in said.json()["attempts"]] == ["executado"]
        for method, path, body in (
            ("GET", "/api/me", None),
            ("GET", "/api/roster", None),
            ("GET", "/api/conversations/conv-web", None),
            ("GET", "/api/events", None),
            ("POST", "/api/interruptions/1/claim", {}),
            ("POST", "/api/agents/po/pause", {"reason": "x"}),
        ):
            refused = web.request(method, path, json=body)
            assert refused.status_code == 403, (method, path, refused.text)
            assert refused.json()["error"]["code"] == "forbidden"
            assert "customer messages" in refused.json()["error"]["message"]
    audited = _audit(live)
    # The customer's message is not an operator's action; what the channel was refused is.
    assert not [e for e in audited if e["action"] == "message"]
    assert [(e["operator"], e["role"], e["action"], e["status"]) for e in audited] == [
        ("loja-web", "channel", "claim", 403),
        ("loja-web", "channel", "pause", 403),
    ]


def test_an_operator_posting_a_customer_message_is_audited_as_that_operator(live: Live) -> None:
    backend = live.backend
    _, ana = backend.operators.add("ana", "operator")
    _, vera = backend.operators.add("vera", "viewer")
    with _as(live, ana) as a, _as(live, vera) as v:
        posted = a.post(
            "/api/conversations/conv-ana/messages", json={"text": "Oi", "cliente_id": "c-1"}
        )
        assert posted.status_code == 200, posted.text
        refused = v.post("/api/conversations/conv-ana/messages", json={"text": "Oi"})
        assert refused.status_code == 403
    by_admin = live.http.post("/api/conversations/conv-ana/messages", json={"text": "Olá?"})
    assert by_admin.status_code == 200, by_admin.text
    audited = [e for e in _audit(live) if e["action"] == "message"]
    assert [(e["operator"], e["role"], e["outcome"], e["target"]) for e in audited] == [
        ("ana", "operator", "done", {"conversa_id": "conv-ana"}),
        ("vera", "viewer", "refused", {"conversa_id": "conv-ana"}),
        ("admin", "admin", "done", {"conversa_id": "conv-ana"}),
    ]


def test_operators_command_adds_a_channel(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = ["--data-dir", str(tmp_path / "data")]
    assert main(["operators", "add", "loja-web", "--role", "channel", *data]) == 0
    token = capsys.readouterr().out.strip()
    assert token.startswith("cad_")
    assert main(["operators", "list", "--json", *data]) == 0
    assert '"role": "channel"' in capsys.readouterr().out
