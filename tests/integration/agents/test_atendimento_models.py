"""``atendimento`` on real provider wire formats: a loopback OpenAI chat-completions server
and botocore's Stubber on the real ``bedrock-runtime`` service model.

Whatever the model asks, the guard decides: a model that insists on refunding is stopped
at exactly the 5th attempt, with exactly one debit on the gateway.
"""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from backend.agents.customer_prompt import SYSTEM_PROMPT
from backend.agents.customer_service import UNAVAILABLE_REPLY, CustomerService
from backend.agents.providers.bedrock import BedrockProvider
from backend.agents.providers.factory import make_provider
from backend.agents.providers.openai import OpenAIProvider
from backend.erp.seed import upsert_pedidos
from backend.exceptions import ConfigError
from backend.guard.assembly import Guard, build_guard
from backend.guard.outcomes import mensagem_de_teto
from backend.settings import load_settings
from backend.tools.registry import TOOL_NAMES
from tests.integration.api.conftest import live_backend
from tests.openai_server import serve, text, tool_call, tool_calls

MESSAGES = [
    "Quero o reembolso do pedido 4821",
    "Já caiu?",
    "Ainda não vi o dinheiro",
    "Faz o estorno de novo",
    "Olá? saiu o reembolso?",
]
REFUND = {"pedidoId": "4821", "valor": "129.90"}
ORDER = {"pedidoId": "4821", "valorPedido": "129.90", "clienteId": "c-1"}
INSISTED = [
    "executado",
    "bloqueado_por_idempotencia",
    "bloqueado_por_idempotencia",
    "bloqueado_por_idempotencia",
    "bloqueado_por_teto",
]


def _insists(body: dict[str, Any]) -> dict[str, Any]:
    """A model that refunds on every customer message and then says it did."""
    messages = body["messages"]
    if messages[-1]["role"] == "user":
        n = sum(m["role"] == "assistant" for m in messages)
        return tool_call(f"call_{n}", "emitir-reembolso", REFUND)
    return text("Pronto, reembolso emitido de novo!")


def _facts(guard: Guard) -> tuple[int, str | None, dict[str, Any]]:
    """Gateway debits, the ledger's claim, and the ERP's order as the tools see them."""
    assert guard.simulator is not None
    assert guard.ledger is not None
    record = guard.ledger.get("reembolso#4821")
    guard.conversations.bind("conv-check", ORDER["clienteId"])
    order = guard.orchestrator.call("conv-check", "consultar-status-pedido", {"pedidoId": "4821"})
    return len(guard.simulator.debits()), record.status if record else None, order.dados


def test_openai_atendimento_that_insists_is_stopped_at_the_fifth_attempt_with_one_debit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with serve() as server:
        server.responder = _insists
        spec = f"openai:gpt-test@{server.url}"
        monkeypatch.setenv("CADENCIA_AGENT_MODELS", json.dumps({"atendimento": spec}))
        monkeypatch.setenv("CADENCIA_PROVIDER_RETRIES", "0")
        settings = load_settings(
            data_dir=tmp_path / "data",
            database_url=f"sqlite:///{tmp_path / 'api.sqlite3'}",
            token="test-token-123",
        )
        for live in live_backend(settings):
            upsert_pedidos(live.backend.db, [ORDER])
            replies = [
                live.http.post(
                    "/api/conversations/conv-llm/messages", json={"text": m, "cliente_id": "c-1"}
                ).json()
                for m in MESSAGES
            ]
            interruptions = live.http.get("/api/approvals").json()["interruptions"]
            roster = {r["id"]: r for r in live.http.get("/api/roster").json()}
            debits, ledger, order = _facts(live.backend.guard)

    assert [[a["resultado"] for a in r["attempts"]] for r in replies] == [[x] for x in INSISTED]
    assert [r["attempts"][0]["tentativaNumero"] for r in replies] == [1, 2, 3, 4, 5]
    assert replies[0]["reply"] == "Pronto, reembolso emitido de novo!"
    assert replies[-1]["reply"] == mensagem_de_teto("4821")  # decided in code, not by the model
    assert (debits, ledger) == (1, "executado")
    assert (order["status_reembolso"], str(order["valor_reembolsado"])) == ("reembolsado", "129.90")
    [item] = interruptions
    assert (item["conversation"], item["attempt_count"]) == ("conv-llm", 5)
    assert roster["atendimento"]["model"] == spec

    # 4 turns of (tool call, answer); the ceiling ends the 5th turn without asking again.
    assert len(server.requests) == 9
    first = server.requests[0]["body"]
    assert first["model"] == "gpt-test"
    assert first["messages"][0] == {"role": "system", "content": SYSTEM_PROMPT}
    assert [t["function"]["name"] for t in first["tools"]] == list(TOOL_NAMES)
    assert all(r["body"]["messages"][0]["content"] == SYSTEM_PROMPT for r in server.requests)
    # Turn 2 replays turn 1 from the event log: the call, its result under the same id.
    history = server.requests[2]["body"]["messages"]
    roles = ["system", "user", "assistant", "tool", "assistant", "user"]
    assert [m["role"] for m in history] == roles
    assert history[2]["tool_calls"][0]["id"] == history[3]["tool_call_id"] == "call_0"
    assert json.loads(history[2]["tool_calls"][0]["function"]["arguments"]) == REFUND
    assert json.loads(history[3]["content"])["resultado"] == "executado"
    assert history[5]["content"] == MESSAGES[1]


@pytest.fixture
def guard(tmp_path: Path) -> Iterator[Guard]:
    settings = load_settings(
        data_dir=tmp_path / "data", database_url=f"sqlite:///{tmp_path / 'g.sqlite3'}"
    )
    found = build_guard(settings)
    upsert_pedidos(found.db, [ORDER])
    yield found
    found.close()


def _service(guard: Guard, provider: Any) -> CustomerService:
    return CustomerService(
        events=guard.events,
        orchestrator=guard.orchestrator,
        conversations=guard.conversations,
        providers=lambda _agent, _calls: provider,
    )


def test_malformed_tool_arguments_from_the_model_do_not_crash_the_turn(guard: Guard) -> None:
    with serve() as server:
        server.answer(
            tool_calls(
                ("c1", "emitir-reembolso", '{"pedidoId": "4821", "valor": '),
                ("c2", "emitir-reembolso", {"pedidoId": "4821", "valor": "caro"}),
            ),
            text("Desculpe, vou tentar de novo."),
            tool_call("c3", "emitir-reembolso", REFUND),
            text("Reembolso emitido."),
        )
        service = _service(guard, OpenAIProvider("gpt-test", base_url=server.url, timeout=5))

        async def talk() -> list[dict[str, Any]]:
            return [await service.handle_message("conv-bad", m, "c-1") for m in MESSAGES[:2]]

        first, second = asyncio.run(talk())
        requests = [r["body"]["messages"] for r in server.requests]

    assert first["reply"] == "Desculpe, vou tentar de novo."
    # Broken JSON never reaches the guard; JSON of the wrong shape is recorded, not run.
    assert [a["resultado"] for a in first["attempts"]] == ["argumentos_invalidos"]
    assert [a["resultado"] for a in second["attempts"]] == ["executado"]
    assert len(guard.simulator.debits()) == 1  # type: ignore[union-attr]
    answered = requests[1]
    assert answered[2]["tool_calls"][0]["function"]["arguments"] == '{"pedidoId": "4821", "valor": '
    results = {m["tool_call_id"]: json.loads(m["content"]) for m in answered if m["role"] == "tool"}
    assert "invalid arguments" in results["c1"]["error"]
    assert results["c2"]["resultado"] == "argumentos_invalidos"
    # The next turn replays both calls, each answered under its own id.
    replayed = requests[2]
    ids = [c["id"] for m in replayed if m["role"] == "assistant" for c in m.get("tool_calls", [])]
    assert ids == ["c1", "c2"]
    assert [m["tool_call_id"] for m in replayed if m["role"] == "tool"] == ["c1", "c2"]


def test_calls_after_the_ceiling_in_the_same_answer_are_not_attempted(guard: Guard) -> None:
    with serve() as server:
        for n in range(4):
            server.answer(tool_call(f"c{n}", "emitir-reembolso", REFUND), text("Feito!"))
        server.answer(
            tool_calls(
                ("c4", "emitir-reembolso", REFUND),
                ("c5", "emitir-reembolso", REFUND),
                ("c6", "consultar-status-pedido", {"pedidoId": "4821"}),
            )
        )
        service = _service(guard, OpenAIProvider("gpt-test", base_url=server.url, timeout=5))

        async def talk() -> list[dict[str, Any]]:
            return [await service.handle_message("conv-par", m, "c-1") for m in MESSAGES]

        replies = asyncio.run(talk())
        assert len(server.requests) == 9  # nothing asked after the ceiling

    assert [a["resultado"] for a in replies[-1]["attempts"]] == ["bloqueado_por_teto"]
    assert replies[-1]["reply"] == mensagem_de_teto("4821")
    assert len(guard.simulator.debits()) == 1  # type: ignore[union-attr]


def test_atendimento_bound_to_a_model_it_cannot_use_apologises_and_raises(
    guard: Guard, monkeypatch: pytest.MonkeyPatch
) -> None:
    for var in ("CADENCIA_OPENAI_API_KEY", "OPENAI_API_KEY", "CADENCIA_OPENAI_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)  # the public endpoint, no key
    service = CustomerService(
        events=guard.events,
        orchestrator=guard.orchestrator,
        conversations=guard.conversations,
        providers=lambda agent, calls: make_provider(
            "openai:gpt-4o", settings=guard.settings, agent_id=agent, start_at=calls
        ),
    )
    with pytest.raises(ConfigError, match="API key"):
        asyncio.run(service.handle_message("conv-nokey", MESSAGES[0], "c-1"))
    said = [(m["role"], m["text"]) for m in guard.conversations.transcript("conv-nokey")]
    assert said == [("cliente", MESSAGES[0]), ("agente", UNAVAILABLE_REPLY)]
    assert guard.simulator.debits() == []  # type: ignore[union-attr]


BEDROCK_MODEL = "anthropic.claude-3-5-sonnet-20240620-v1:0"


def _converse_tool_use(n: int) -> dict[str, Any]:
    return {
        "output": {
            "message": {
                "role": "assistant",
                "content": [
                    {
                        "toolUse": {
                            "toolUseId": f"tooluse_{n}",
                            "name": "emitir-reembolso",
                            "input": REFUND,
                        }
                    }
                ],
            }
        },
        "stopReason": "tool_use",
        "usage": {"inputTokens": 900, "outputTokens": 30, "totalTokens": 930},
        "metrics": {"latencyMs": 400},
    }


CONVERSE_TEXT: dict[str, Any] = {
    "output": {"message": {"role": "assistant", "content": [{"text": "Reembolso feito!"}]}},
    "stopReason": "end_turn",
    "usage": {"inputTokens": 950, "outputTokens": 5, "totalTokens": 955},
    "metrics": {"latencyMs": 300},
}


def test_bedrock_atendimento_that_insists_is_stopped_at_the_fifth_attempt(guard: Guard) -> None:
    client = boto3.client(
        "bedrock-runtime",
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
    sent: list[dict[str, Any]] = []
    client.meta.events.register(
        "provide-client-params.bedrock-runtime.Converse",
        lambda params, **_: sent.append(copy.deepcopy(params)),
    )
    service = _service(guard, BedrockProvider(BEDROCK_MODEL, client=client, max_tokens=512))
    with Stubber(client) as stubber:
        for n in range(5):
            stubber.add_response("converse", _converse_tool_use(n))
            if n < 4:  # the ceiling ends the 5th turn: no answer is asked for
                stubber.add_response("converse", CONVERSE_TEXT)

        async def talk() -> list[dict[str, Any]]:
            return [await service.handle_message("conv-br", m, "c-1") for m in MESSAGES]

        replies = asyncio.run(talk())
        stubber.assert_no_pending_responses()

    assert [[a["resultado"] for a in r["attempts"]] for r in replies] == [[x] for x in INSISTED]
    assert replies[-1]["reply"] == mensagem_de_teto("4821")
    assert _facts(guard)[:2] == (1, "executado")
    assert all(p["system"] == [{"text": SYSTEM_PROMPT}] for p in sent)
    tools = [t["toolSpec"]["name"] for t in sent[0]["toolConfig"]["tools"]]
    assert tools == list(TOOL_NAMES)
    # Turn 2's request: turn 1 replayed, the tool result under the toolUse's id, roles alternating.
    history = sent[2]["messages"]
    assert [m["role"] for m in history] == ["user", "assistant", "user", "assistant", "user"]
    assert history[1]["content"][0]["toolUse"]["toolUseId"] == "tooluse_0"
    result = history[2]["content"][0]["toolResult"]
    assert (result["toolUseId"], result["status"]) == ("tooluse_0", "success")
    assert json.loads(result["content"][0]["text"])["resultado"] == "executado"
    assert history[4]["content"] == [{"text": MESSAGES[1]}]
