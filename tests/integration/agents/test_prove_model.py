"""``cadencia prove --model``: the shipped scenario's customer turns through a model on the
real OpenAI wire format (loopback server), through the CLI."""

from __future__ import annotations

import json
import re
import socket
from pathlib import Path
from typing import Any

import pytest

from backend.agents.customer_prompt import SYSTEM_PROMPT
from backend.cli import main
from backend.guard.prove import summarize
from tests.openai_server import serve, text, tool_call

SCENARIO = Path(__file__).resolve().parents[3] / "scenarios" / "cenario-reformulacao-ambigua.jsonl"


def _wire_model(body: dict[str, Any]) -> dict[str, Any]:
    """An insisting model reading only what the wire carries: it looks the order up once,
    then asks for the refund on every customer message, whatever the tools answered."""
    messages = body["messages"]
    names = {
        c["id"]: c["function"]["name"]
        for m in messages
        if m["role"] == "assistant"
        for c in m.get("tool_calls") or []
    }
    tool_messages = [m for m in messages if m["role"] == "tool"]
    results = [(names[m["tool_call_id"]], json.loads(m["content"])) for m in tool_messages]
    looked_up = [r for name, r in results if name == "consultar-status-pedido"]
    valor = looked_up[-1]["dados"]["valor_pedido"] if looked_up else None
    pedido = next(
        re.findall(r"\d{4}", m["content"])[-1]
        for m in reversed(messages)
        if m["role"] == "user" and re.search(r"\d{4}", m["content"])
    )
    call_id = f"call_{len(names)}"
    last = messages[-1]
    if last["role"] == "user":
        if valor is None:
            return tool_call(call_id, "consultar-status-pedido", {"pedidoId": pedido})
        return tool_call(call_id, "emitir-reembolso", {"pedidoId": pedido, "valor": str(valor)})
    if names[last["tool_call_id"]] == "consultar-status-pedido":
        return tool_call(call_id, "emitir-reembolso", {"pedidoId": pedido, "valor": str(valor)})
    return text(results[-1][1].get("mensagem") or "Certo.")


def _prove(tmp_path: Path, model: str) -> tuple[int, Path, Path]:
    saida, resumo = tmp_path / "saida.json", tmp_path / "resumo.json"
    code = main(
        [
            "prove",
            "--arquitetura",
            "producao",
            "--cenario",
            str(SCENARIO),
            "--saida",
            str(saida),
            "--resumo",
            str(resumo),
            "--model",
            model,
            "--data-dir",
            str(tmp_path / "data"),
        ]
    )
    return code, saida, resumo


def test_prove_with_an_openai_model_gives_no_duplicate_debit_and_the_same_summary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CADENCIA_PROVIDER_RETRIES", "0")
    with serve() as server:
        server.responder = _wire_model
        code, saida, resumo = _prove(tmp_path, f"openai:gpt-test@{server.url}")
        requests = [r["body"] for r in server.requests]
    assert code == 0
    summary = json.loads(resumo.read_text())
    records = json.loads(saida.read_text())
    turns = sum(len(json.loads(line)["turnos"]) for line in SCENARIO.read_text().splitlines())
    assert summary.keys() == summarize("producao", [], [], []).keys()
    assert summary["conversations"] == 20
    assert summary["duplicate_debits"] == 0
    assert summary["gateway_debits"] == 20  # one per conversation: the first refund only
    assert summary["refund_calls"] == turns  # the model asked on every customer message
    assert summary["blocked_by_idempotency"] == turns - 20
    assert {r["conversaId"] for r in records} == {f"conv-{n:03}" for n in range(1, 21)}
    # look-up + refund + answer on each first turn, refund + answer on the others
    assert len(requests) == 2 * turns + 20
    assert all(b["messages"][0] == {"role": "system", "content": SYSTEM_PROMPT} for b in requests)


def test_prove_with_a_bad_or_unreachable_model_is_one_clear_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CADENCIA_PROVIDER_RETRIES", "0")
    code, saida, _ = _prove(tmp_path, "gpt-4o")
    err = capsys.readouterr().err
    assert code == 2
    assert "unknown model provider spec 'gpt-4o'" in err
    assert "Traceback" not in err
    assert not saida.exists()

    # A loopback port where nothing listens, held bound (never listening: a connection is
    # refused) until the run ends, so the run's own gateway simulator cannot be given it.
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        code, saida, _ = _prove(tmp_path, f"openai:gpt-test@http://127.0.0.1:{port}/v1")
    err = " ".join(capsys.readouterr().err.split())
    assert code == 2
    assert f"model openai:gpt-test@http://127.0.0.1:{port}/v1 failed in conv-001, turn 1" in err
    assert "could not be reached" in err
    assert "Traceback" not in err
    assert not saida.exists()
