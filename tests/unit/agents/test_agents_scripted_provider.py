"""The scripted provider replays turns, validates its script, and ends with a text turn."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from backend.agents.providers import (
    ModelTurn,
    ScriptedProvider,
    ScriptError,
    ToolSpec,
    UserMessage,
    load_script,
)

SCRIPT = {
    "final_text": "nothing more to do",
    "agents": {
        "infra": [
            {
                "text": "Validating first.",
                "tool_calls": [
                    {"name": "validate_infra_file", "arguments": {"path": "Dockerfile"}}
                ],
            },
            {"tool_calls": [{"name": "propose_infra_pr", "arguments": "{not json", "id": "x1"}]},
            {"text": "PR proposed."},
        ],
        "criativo": [{"text": "Hello"}],
    },
}
TOOLS = [ToolSpec("validate_infra_file", "lint", {"type": "object"})]


async def _turn(provider: ScriptedProvider) -> ModelTurn:
    return await provider.complete(system="s", messages=[UserMessage("go")], tools=TOOLS)


async def test_replays_turns_in_order_then_final_text() -> None:
    provider = ScriptedProvider.for_agent(SCRIPT, "infra")
    first = await _turn(provider)
    assert first.text == "Validating first."
    assert first.stop_reason == "tool_use"
    assert [(c.id, c.name, c.arguments) for c in first.tool_calls] == [
        ("infra-t0-c0", "validate_infra_file", {"path": "Dockerfile"})
    ]
    second = await _turn(provider)
    assert second.tool_calls[0].id == "x1"
    third = await _turn(provider)
    assert (third.text, third.tool_calls, third.stop_reason) == ("PR proposed.", (), "end_turn")
    assert provider.exhausted
    final = await _turn(provider)
    assert (final.text, final.tool_calls) == ("nothing more to do", ())
    assert len(provider.requests) == 4
    assert provider.requests[0][2] == TOOLS


async def test_string_arguments_that_are_not_json_become_an_invalid_call() -> None:
    provider = ScriptedProvider.for_agent(SCRIPT, "infra", start_at=1)
    turn = await _turn(provider)
    call = turn.tool_calls[0]
    assert not call.valid
    assert call.arguments == {}
    assert "not valid JSON" in (call.error or "")
    assert call.raw_arguments == "{not json"


async def test_agents_get_their_own_script_and_unknown_agents_only_the_final_text() -> None:
    assert (await _turn(ScriptedProvider.for_agent(SCRIPT, "criativo"))).text == "Hello"
    other = ScriptedProvider.for_agent(SCRIPT, "po")
    assert (await _turn(other)).text == "nothing more to do"


async def test_bare_list_is_a_script_for_every_agent() -> None:
    provider = ScriptedProvider.for_agent([{"text": "only"}], "po")
    assert (await _turn(provider)).text == "only"


def test_script_loads_from_a_file(tmp_path: Path) -> None:
    path = tmp_path / "demo.json"
    path.write_text(json.dumps(SCRIPT), encoding="utf-8")
    assert len(load_script(path).agents["infra"]) == 3


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("{bad json", "not valid JSON"),
        ({"agents": {"infra": [{"txt": "typo"}]}}, "agents.infra.0.txt"),
        ({"agents": {"infra": [{"tool_calls": [{"arguments": {}}]}]}}, "tool_calls.0.name"),
        ({"agents": {"infra": "not a list"}}, "agents.infra"),
    ],
)
def test_malformed_scripts_raise_a_clear_error(source: object, message: str) -> None:
    with pytest.raises(ScriptError) as info:
        load_script(source)  # type: ignore[arg-type]
    assert message in str(info.value)


def test_missing_script_file_is_a_script_error(tmp_path: Path) -> None:
    with pytest.raises(ScriptError, match="cannot read script"):
        load_script(tmp_path / "absent.json")
