"""A model URL's credentials never leave the backend: with atendimento bound to an OpenAI
endpoint whose URL carries a password and an API key in its query, a failing provider's
502, the event log, the activity feed, the roster and the JSON log show the host only."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from backend import logs
from backend.settings import load_settings
from tests.integration.api.conftest import Live, live_backend
from tests.openai_server import serve

PASSWORD = "Pa55w0rdXYZ"
KEY = "sk-query-key-123"


@pytest.fixture
def json_log() -> Iterator[io.StringIO]:
    """The backend's JSON log (``backend.logs``), captured while the test runs."""
    root = logging.getLogger()
    saved = (root.handlers[:], root.level)
    captured = io.StringIO()
    logs.configure("INFO", stream=captured)
    try:
        yield captured
    finally:
        root.handlers[:], root.level = saved[0], saved[1]


def test_a_failing_model_url_shows_its_host_but_never_its_password_or_key(
    tmp_path: Path, json_log: io.StringIO, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CADENCIA_PROVIDER_RETRIES", "0")
    with serve() as server:
        host = server.url.removeprefix("http://").removesuffix("/v1")
        base = f"http://user:{PASSWORD}@{host}/v1?key={KEY}"
        for _ in range(3):
            server.fail(500, "upstream exploded")
        settings = load_settings(
            data_dir=tmp_path / "data",
            token="test-token-123",
            agent_models={"atendimento": f"openai:m@{base}"},
        )
        live: Live
        for live in live_backend(settings):
            answer = live.http.post(
                "/api/conversations/c-1/messages", json={"text": "oi", "cliente_id": "c-1"}
            )
            seen = {
                "502 body": answer.text,
                "events": live.http.get("/api/events").text,
                "activity": live.http.get("/api/activity").text,
                "roster": live.http.get("/api/roster").text,
            }
        seen["json log"] = json_log.getvalue()
    assert answer.status_code == 502, answer.text
    assert server.requests, "the provider was really called"
    assert server.requests[0]["path"].startswith("/v1/chat/completions?key=")
    for where, text in seen.items():
        assert PASSWORD not in text, where
        assert KEY not in text, where
    for where in ("502 body", "events", "roster"):
        assert host in seen[where], where
