"""Token counts from both wire formats: reported, absent (unknown, not zero), or odd."""

from __future__ import annotations

from backend.agents.providers.bedrock import parse_converse_response
from backend.agents.providers.openai import parse_chat_response

CHOICE = {"message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}
OUTPUT = {"output": {"message": {"role": "assistant", "content": [{"text": "ok"}]}}}


def test_openai_usage_prompt_and_completion_tokens() -> None:
    body = {"choices": [CHOICE], "usage": {"prompt_tokens": 82, "completion_tokens": 17}}
    assert parse_chat_response(body).usage == {"input_tokens": 82, "output_tokens": 17}


def test_bedrock_usage_input_and_output_tokens() -> None:
    body = {**OUTPUT, "usage": {"inputTokens": 120, "outputTokens": 40, "totalTokens": 160}}
    assert parse_converse_response(body).usage == {"input_tokens": 120, "output_tokens": 40}


def test_no_usage_object_is_unknown_and_null_counts_do_not_fail_the_turn() -> None:
    assert parse_chat_response({"choices": [CHOICE]}).usage == {}
    assert parse_converse_response(OUTPUT).usage == {}
    odd = {"choices": [CHOICE], "usage": {"prompt_tokens": None, "completion_tokens": "7"}}
    turn = parse_chat_response(odd)
    assert (turn.text, turn.usage) == ("ok", {"input_tokens": 0, "output_tokens": 0})
