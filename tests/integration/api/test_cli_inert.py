"""What the CLI prints from the backend is inert: a model endpoint whose error carries
terminal escapes puts them in the roster's detail, and ``cadencia up --headless-seconds``
prints that line with the escapes shown, never sent to the terminal."""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.commands.up import _headless
from backend.settings import load_settings
from tests.integration.api.conftest import Live, live_backend
from tests.openai_server import serve

ESCAPES = "\x1b]0;pwned\x07\x1b[2J"


def test_headless_summary_prints_a_models_escape_sequences_inert(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CADENCIA_PROVIDER_RETRIES", "0")
    with serve() as server:
        server.fail(500, f"overloaded {ESCAPES}")
        settings = load_settings(
            data_dir=tmp_path / "data",
            database_url=f"sqlite:///{tmp_path / 'api.sqlite3'}",
            token="test-token-123",
            agent_models={"criativo": f"openai:m@{server.url}"},
        )
        live: Live
        for live in live_backend(settings):
            project = live.http.post("/api/projects", json={"name": "loja"}).json()
            session = live.http.post(f"/api/projects/{project['id']}/sessions", json={}).json()
            turn = f"/api/projects/{project['id']}/sessions/{session['id']}/agents/criativo/turns"
            assert live.http.post(turn, json={"text": "vamos"}).status_code == 502
            capsys.readouterr()
            assert _headless(live.url, live.token, 0) == 0
            printed = capsys.readouterr().out
    line = next(line for line in printed.splitlines() if "criativo" in line)
    assert "overloaded ␛]0;pwned␇␛[2J" in line
    assert "\x1b" not in printed
    assert "\x07" not in printed
