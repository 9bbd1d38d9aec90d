"""Provider retries on the real wire formats: the loopback OpenAI server (429 with
``Retry-After``, 500, 400, hang, connection refused) and botocore's Stubber on the real
``bedrock-runtime`` model. Waits are recorded, not slept."""

from __future__ import annotations

import socket
import time
from email.utils import formatdate
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from backend.agents.providers.base import UserMessage
from backend.agents.providers.bedrock import BedrockProvider
from backend.agents.providers.exceptions import ProviderError, ProviderTimeoutError
from backend.agents.providers.factory import make_provider
from backend.agents.providers.openai import OpenAIProvider
from backend.agents.providers.retry import RetryingProvider, RetryPolicy, parse_retry_after
from backend.exceptions import ConfigError
from backend.settings import Settings
from tests.openai_server import FakeServer, serve, text

POLICY = RetryPolicy(retries=3, base_s=0.5, max_s=1.5, deadline_s=30)


class Waits:
    """An injected ``sleep`` that records instead of sleeping."""

    def __init__(self) -> None:
        self.seconds: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.seconds.append(seconds)


def _retrying(inner: Any, waits: Waits, policy: RetryPolicy = POLICY) -> RetryingProvider:
    return RetryingProvider(inner, policy, sleep=waits, rand=lambda: 1.0)


async def _ask(provider: Any) -> Any:
    return await provider.complete(system="s", messages=[UserMessage("oi")], tools=[])


@pytest.fixture
def server() -> Any:
    with serve() as s:
        yield s


def _openai(server: FakeServer, timeout: float = 5.0) -> OpenAIProvider:
    return OpenAIProvider("m", base_url=server.url, timeout=timeout)


async def test_429_with_retry_after_seconds_then_success_is_one_answer(server: FakeServer) -> None:
    server.fail(429, "Rate limit reached", retry_after="2")
    server.answer(text("olá", usage=(11, 4)))
    waits = Waits()
    turn = await _ask(_retrying(_openai(server), waits))
    assert (turn.text, turn.usage) == ("olá", {"input_tokens": 11, "output_tokens": 4})
    assert waits.seconds == [2.0]  # the server's Retry-After, not the backoff
    assert len(server.requests) == 2


async def test_retry_after_as_an_http_date_is_honoured(server: FakeServer) -> None:
    server.fail(503, "busy", retry_after=formatdate(time.time() + 1.0, usegmt=True))
    server.answer(text("ok"))
    waits = Waits()
    await _ask(_retrying(_openai(server), waits))
    assert len(waits.seconds) == 1
    assert 0.0 <= waits.seconds[0] <= 1.0


async def test_500s_back_off_exponentially_then_the_last_error_goes_up(server: FakeServer) -> None:
    for _ in range(4):
        server.fail(500, "upstream exploded")
    waits = Waits()
    with pytest.raises(ProviderError, match="HTTP 500: upstream exploded") as info:
        await _ask(_retrying(_openai(server), waits))
    assert waits.seconds == [0.5, 1.0, 1.5]  # base * 2**n capped at max_s (rand = 1.0)
    assert len(server.requests) == 4
    assert info.value.retryable
    assert info.value.context["attempts"] == 4


@pytest.mark.parametrize("status", [400, 401, 404, 409, 422])
async def test_a_4xx_other_than_429_is_never_retried(server: FakeServer, status: int) -> None:
    server.fail(status, "the request is wrong")
    waits = Waits()
    with pytest.raises(ProviderError, match=f"HTTP {status}") as info:
        await _ask(_retrying(_openai(server), waits))
    assert (waits.seconds, len(server.requests), info.value.retryable) == ([], 1, False)


async def test_a_retry_after_past_the_deadline_gives_up_at_once_and_says_when(
    server: FakeServer,
) -> None:
    server.fail(429, "slow down", retry_after="60")
    waits = Waits()
    policy = RetryPolicy(retries=3, base_s=0.5, max_s=1.5, deadline_s=10)
    with pytest.raises(ProviderError) as info:
        await _ask(_retrying(_openai(server), waits, policy))
    assert waits.seconds == []
    assert len(server.requests) == 1
    assert info.value.retry_after_s == 60.0  # the API's Retry-After will say so


async def test_a_hung_attempt_times_out_and_the_retry_answers(server: FakeServer) -> None:
    server.hang(2.0)
    server.answer(text("voltei"))
    waits = Waits()
    turn = await _ask(_retrying(_openai(server, timeout=0.2), waits))
    assert turn.text == "voltei"
    assert len(waits.seconds) == 1


async def test_the_deadline_bounds_every_attempt_together(server: FakeServer) -> None:
    server.hang(3.0)
    policy = RetryPolicy(retries=5, base_s=0.01, max_s=0.01, deadline_s=0.3)
    started = time.monotonic()
    with pytest.raises(ProviderTimeoutError, match="deadline"):
        await _ask(RetryingProvider(_openai(server, timeout=10), policy))
    assert time.monotonic() - started < 1.5


async def test_connection_refused_is_retried_then_reported() -> None:
    with socket.socket() as sock:  # bound, never listening: refused, and no one else's
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        waits = Waits()
        inner = OpenAIProvider("m", base_url=f"http://127.0.0.1:{port}/v1", timeout=1)
        with pytest.raises(ProviderError, match="could not be reached") as info:
            await _ask(_retrying(inner, waits))
    assert len(waits.seconds) == 3
    assert info.value.retryable


def test_make_provider_wraps_openai_with_the_settings_policy(server: FakeServer) -> None:
    settings = Settings(
        _env_file=None,  # type: ignore[call-arg]
        provider_retries=2,
        provider_backoff_s=0.01,
        provider_backoff_max_s=0.02,
        provider_deadline_s=9,
    )
    provider = make_provider(f"openai:m@{server.url}", settings=settings)
    assert isinstance(provider, RetryingProvider)
    assert provider.policy == RetryPolicy(retries=2, base_s=0.01, max_s=0.02, deadline_s=9)


def test_parse_retry_after() -> None:
    assert parse_retry_after("3") == 3.0
    assert parse_retry_after("0.5") == 0.5
    assert parse_retry_after(None) is None
    assert parse_retry_after("soon") is None
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # in the past
    assert parse_retry_after(formatdate(1000.0 + 30, usegmt=True), now=1000.0) == 30.0


# -- Bedrock ---------------------------------------------------------------------------------

MODEL = "anthropic.claude-3-haiku-20240307-v1:0"
ANSWER = {
    "output": {"message": {"role": "assistant", "content": [{"text": "pronto"}]}},
    "stopReason": "end_turn",
    "usage": {"inputTokens": 120, "outputTokens": 40, "totalTokens": 160},
    "metrics": {"latencyMs": 300},
}


@pytest.fixture
def bedrock() -> Any:
    client = boto3.client(
        "bedrock-runtime",
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
    with Stubber(client) as stubber:
        yield client, stubber
        stubber.assert_no_pending_responses()


@pytest.mark.parametrize(
    ("code", "status"),
    [
        ("ThrottlingException", 429),
        ("ServiceUnavailableException", 503),
        ("ModelNotReadyException", 429),
        ("InternalServerException", 500),
    ],
)
async def test_bedrock_throttling_class_errors_are_retried(
    bedrock: tuple[Any, Stubber], code: str, status: int
) -> None:
    client, stubber = bedrock
    stubber.add_client_error("converse", service_error_code=code, http_status_code=status)
    stubber.add_response("converse", ANSWER)
    waits = Waits()
    turn = await _ask(_retrying(BedrockProvider(MODEL, client=client), waits))
    assert (turn.text, turn.usage) == ("pronto", {"input_tokens": 120, "output_tokens": 40})
    assert len(waits.seconds) == 1


async def test_bedrock_validation_errors_are_not_retried(bedrock: tuple[Any, Stubber]) -> None:
    client, stubber = bedrock
    stubber.add_client_error(
        "converse", service_error_code="ValidationException", http_status_code=400
    )
    waits = Waits()
    with pytest.raises(ProviderError, match="ValidationException") as info:
        await _ask(_retrying(BedrockProvider(MODEL, client=client), waits))
    assert (waits.seconds, info.value.retryable) == ([], False)


async def test_bedrock_retry_after_header_is_honoured(bedrock: tuple[Any, Stubber]) -> None:
    client, stubber = bedrock
    stubber.add_client_error(
        "converse",
        service_error_code="ThrottlingException",
        http_status_code=429,
        response_meta={"HTTPHeaders": {"retry-after": "4"}},
    )
    stubber.add_response("converse", ANSWER)
    waits = Waits()
    await _ask(_retrying(BedrockProvider(MODEL, client=client), waits))
    assert waits.seconds == [4.0]


@pytest.mark.parametrize("base_url", ["localhost:1/v1", "http://[::1/v1"])
async def test_a_base_url_that_is_not_http_is_our_config_not_a_retry(base_url: str) -> None:
    waits = Waits()
    with pytest.raises(ConfigError, match="not a usable http"):
        await _ask(_retrying(OpenAIProvider("m", base_url=base_url, timeout=1), waits))
    assert waits.seconds == []
