"""Bedrock Converse provider against botocore's real bedrock-runtime service model.

``Stubber`` validates every request parameter and every canned response against the
service model shipped with botocore, so a wrong shape fails here as it would on AWS.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from backend.agents.providers import (
    ProviderError,
    ToolResultMessage,
    ToolSpec,
    UserMessage,
)
from backend.agents.providers.bedrock import BedrockProvider

MODEL = "anthropic.claude-3-5-sonnet-20240620-v1:0"
SCHEMA = {
    "type": "object",
    "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
    "required": ["path", "content"],
}
TOOLS = [ToolSpec("validate_infra_file", "Lint one infra file with hadolint.", SCHEMA)]
TOOL_CONFIG = {
    "tools": [
        {
            "toolSpec": {
                "name": "validate_infra_file",
                "description": "Lint one infra file with hadolint.",
                "inputSchema": {"json": SCHEMA},
            }
        }
    ]
}
TOOL_USE_RESPONSE: dict[str, Any] = {
    "output": {
        "message": {
            "role": "assistant",
            "content": [
                {"text": "Let me lint it."},
                {
                    "toolUse": {
                        "toolUseId": "tooluse_abc123",
                        "name": "validate_infra_file",
                        "input": {"path": "Dockerfile", "content": "FROM python:3.11-slim\n"},
                    }
                },
            ],
        }
    },
    "stopReason": "tool_use",
    "usage": {"inputTokens": 120, "outputTokens": 40, "totalTokens": 160},
    "metrics": {"latencyMs": 812},
}


@pytest.fixture
def stubbed() -> Iterator[tuple[Any, Stubber]]:
    client = boto3.client(
        "bedrock-runtime",
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
    with Stubber(client) as stubber:
        yield client, stubber
        stubber.assert_no_pending_responses()


async def test_tool_use_then_tool_result_round_trip(stubbed: tuple[Any, Stubber]) -> None:
    client, stubber = stubbed
    provider = BedrockProvider(MODEL, client=client, max_tokens=512)
    history = [UserMessage("Write the Dockerfile for api and validate it.")]
    stubber.add_response(
        "converse",
        TOOL_USE_RESPONSE,
        {
            "modelId": MODEL,
            "system": [{"text": "You are the Infra agent."}],
            "messages": [
                {
                    "role": "user",
                    "content": [{"text": "Write the Dockerfile for api and validate it."}],
                }
            ],
            "toolConfig": TOOL_CONFIG,
            "inferenceConfig": {"maxTokens": 512},
        },
    )
    turn = await provider.complete(system="You are the Infra agent.", messages=history, tools=TOOLS)
    assert turn.text == "Let me lint it."
    assert turn.stop_reason == "tool_use"
    assert turn.usage == {"input_tokens": 120, "output_tokens": 40}
    (call,) = turn.tool_calls
    assert (call.id, call.name, call.valid) == ("tooluse_abc123", "validate_infra_file", True)
    assert call.arguments == {"path": "Dockerfile", "content": "FROM python:3.11-slim\n"}

    history += [
        turn.as_message(),
        ToolResultMessage(call.id, call.name, '{"findings": []}'),
        ToolResultMessage(
            "tooluse_other", "validate_infra_file", "hadolint missing", is_error=True
        ),
    ]
    stubber.add_response(
        "converse",
        {
            "output": {"message": {"role": "assistant", "content": [{"text": "Clean."}]}},
            "stopReason": "end_turn",
            "usage": {"inputTokens": 200, "outputTokens": 3, "totalTokens": 203},
            "metrics": {"latencyMs": 300},
        },
        {
            "modelId": MODEL,
            "system": [{"text": "You are the Infra agent."}],
            "messages": [
                {
                    "role": "user",
                    "content": [{"text": "Write the Dockerfile for api and validate it."}],
                },
                TOOL_USE_RESPONSE["output"]["message"],
                {
                    "role": "user",
                    "content": [
                        {
                            "toolResult": {
                                "toolUseId": "tooluse_abc123",
                                "content": [{"text": '{"findings": []}'}],
                                "status": "success",
                            }
                        },
                        {
                            "toolResult": {
                                "toolUseId": "tooluse_other",
                                "content": [{"text": "hadolint missing"}],
                                "status": "error",
                            }
                        },
                    ],
                },
            ],
            "toolConfig": TOOL_CONFIG,
            "inferenceConfig": {"maxTokens": 512},
        },
    )
    final = await provider.complete(
        system="You are the Infra agent.", messages=history, tools=TOOLS
    )
    assert (final.text, final.tool_calls, final.stop_reason) == ("Clean.", (), "end_turn")


async def test_no_tools_means_no_tool_config(stubbed: tuple[Any, Stubber]) -> None:
    client, stubber = stubbed
    stubber.add_response(
        "converse",
        {
            "output": {"message": {"role": "assistant", "content": [{"text": "Hi"}]}},
            "stopReason": "max_tokens",
            "usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2},
            "metrics": {"latencyMs": 1},
        },
        {
            "modelId": MODEL,
            "messages": [{"role": "user", "content": [{"text": "hello"}]}],
            "inferenceConfig": {"maxTokens": 2048},
        },
    )
    turn = await BedrockProvider(MODEL, client=client).complete(
        system="", messages=[UserMessage("hello")], tools=[]
    )
    assert (turn.text, turn.stop_reason) == ("Hi", "max_tokens")


async def test_service_errors_become_provider_errors(stubbed: tuple[Any, Stubber]) -> None:
    client, stubber = stubbed
    stubber.add_client_error(
        "converse",
        service_error_code="ThrottlingException",
        service_message="Too many requests",
        http_status_code=429,
    )
    with pytest.raises(ProviderError, match="ThrottlingException: Too many requests") as info:
        await BedrockProvider(MODEL, client=client).complete(
            system="", messages=[UserMessage("x")], tools=TOOLS
        )
    assert info.value.context["aws_code"] == "ThrottlingException"


def test_a_wrong_request_shape_is_caught_by_the_service_model(
    stubbed: tuple[Any, Stubber],
) -> None:
    """Guard the test itself: the Stubber really validates against the model."""
    from botocore.exceptions import ParamValidationError

    client, stubber = stubbed
    stubber.add_response("converse", TOOL_USE_RESPONSE)
    with pytest.raises(ParamValidationError):
        client.converse(modelId=MODEL, messages=[{"role": "user", "content": [{"txt": "x"}]}])
    # The queued response is still there: the bad call never reached it.
    client.converse(modelId=MODEL, messages=[{"role": "user", "content": [{"text": "x"}]}])
    with pytest.raises(ParamValidationError):
        stubber.add_response("converse", {**TOOL_USE_RESPONSE, "stopReason": 7})
