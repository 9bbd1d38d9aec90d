"""Reading policy JSON files and guessing tools from names."""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.exceptions import PathError, ValidationError
from backend.posture.iam_sources import load_policy_file, strip_json_comments
from backend.posture.iam_tools import parse_tool, tool_from_text

SEED = Path(__file__).parents[2] / "fixtures" / "iam" / "amplo-para-conseguir-agir.json"


def test_comments_are_stripped_but_not_inside_strings() -> None:
    text = '{"a": "http://x/*y*/", // note\n "b": 1 /* block */}'
    assert strip_json_comments(text) == '{"a": "http://x/*y*/", \n "b": 1 }'


def test_seed_policy_with_comments_parses_as_a_shared_role() -> None:
    source = load_policy_file(SEED)
    (statement,) = source.statements()
    assert statement.sid == "AmploParaConseguirAgir"
    assert statement.resources == ("*",)
    assert source.tool is None


def test_get_role_policy_output_names_the_role_and_tool(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    path.write_text(
        '{"RoleName": "cadencia-agente-reembolso-role", "PolicyName": "x",'
        ' "PolicyDocument": {"Statement": []}}'
    )
    source = load_policy_file(path)
    assert (source.role, source.tool, source.name) == (
        "cadencia-agente-reembolso-role",
        "emitir-reembolso",
        "x",
    )


def test_unreadable_inputs_raise(tmp_path: Path) -> None:
    with pytest.raises(PathError):
        load_policy_file(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ValidationError):
        load_policy_file(bad)
    empty = tmp_path / "empty.json"
    empty.write_text('{"Version": "2012-10-17"}')
    with pytest.raises(ValidationError):
        load_policy_file(empty)


def test_tool_names() -> None:
    assert parse_tool("consulta") == "consultar-status-pedido"
    assert parse_tool("emitir-reembolso") == "emitir-reembolso"
    with pytest.raises(ValidationError):
        parse_tool("pagamento")
    assert tool_from_text("cadencia-agente-cadastro-role") == "atualizar-cadastro"
    assert tool_from_text("cadencia-agente-execucao") is None
    assert tool_from_text("consulta", "reembolso") is None  # shared role
