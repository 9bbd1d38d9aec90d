"""``cadencia prove`` on the shipped scenario, both architectures, through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from backend.cli import main

SCENARIO = Path(__file__).resolve().parents[3] / "scenarios" / "cenario-reformulacao-ambigua.jsonl"


def _prove(arch: str, tmp_path: Path) -> tuple[list[dict], dict]:
    saida, resumo = tmp_path / f"{arch}.json", tmp_path / f"{arch}-resumo.json"
    code = main(
        [
            "prove",
            "--arquitetura",
            arch,
            "--cenario",
            str(SCENARIO),
            "--saida",
            str(saida),
            "--resumo",
            str(resumo),
        ]
    )
    assert code == 0
    return json.loads(saida.read_text()), json.loads(resumo.read_text())


def test_shipped_scenario_shape() -> None:
    lines = [json.loads(line) for line in SCENARIO.read_text().splitlines() if line.strip()]
    assert len(lines) == 20
    refunds = [
        sum(c["ferramenta"] == "emitir-reembolso" for t in line["turnos"] for c in t["chamadas"])
        for line in lines
    ]
    assert max(refunds) == 9
    assert all(3 <= len(line["turnos"]) <= 4 for line in lines)  # 2-3 rephrasings


def test_minima_debits_every_call(tmp_path: Path) -> None:
    records, summary = _prove("minima", tmp_path)
    assert summary["architecture"] == "minima"
    assert summary["gateway_debits"] == summary["refund_calls"] == 128
    assert summary["duplicate_debits"] > 0
    assert summary["interrupted_by_ceiling"] == 0
    assert len(records) == 132


def test_producao_debits_once_and_stops_at_the_fifth_attempt(tmp_path: Path) -> None:
    records, summary = _prove("producao", tmp_path)
    assert summary["duplicate_debits"] == 0
    assert summary["gateway_debits"] == 20
    teto = [r for r in records if r["resultado"] == "bloqueado_por_teto"]
    first_teto: dict[str, int] = {}
    for r in teto:
        first_teto.setdefault(r["conversaId"], r["tentativaNumero"])
    assert set(first_teto.values()) == {5}
    assert summary["interrupted_by_ceiling"] == len(first_teto) == 17
    executed = [
        r
        for r in records
        if r["resultado"] == "executado" and r["ferramenta"] == "emitir-reembolso"
    ]
    assert all(r["tentativaNumero"] == 1 for r in executed)


def test_bad_scenario_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    deep = tmp_path / ("d" * 90)  # a path longer than the terminal: still one line
    deep.mkdir()
    bad = deep / "bad.jsonl"
    bad.write_text('{"conversaId": "x", "turnos": "nope"}\n')
    code = main(
        [
            "prove",
            "--arquitetura",
            "producao",
            "--cenario",
            str(bad),
            "--saida",
            str(tmp_path / "o.json"),
        ]
    )
    assert code == 2
    assert f"{bad}:1" in capsys.readouterr().err
    assert not (tmp_path / "o.json").exists()
