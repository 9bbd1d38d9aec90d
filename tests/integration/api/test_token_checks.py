"""Operator tokens checked as an attacker would probe them, over the real API: a revoked
token's open event stream ends within one ping, and a refusal costs the same key
derivation whether the token's id exists or not."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

import backend.api.routes_read
from backend.cli import main
from backend.operators import tokens
from backend.settings import load_settings
from tests.integration.api.conftest import Live, live_backend

PING_S = 0.3


@pytest.fixture
def live(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Live]:
    """A backend on SQLite whose stream pings (and re-checks its token) every 0.3 s."""
    monkeypatch.setattr(backend.api.routes_read, "PING_S", PING_S)
    settings = load_settings(
        data_dir=tmp_path / "data",
        database_url=f"sqlite:///{tmp_path / 'api.sqlite3'}",
        token="test-token-123",
    )
    yield from live_backend(settings)


def _cli(live: Live, *args: str) -> list[str]:
    database = f"--database={live.settings.database_url}"
    return ["operators", *args, "--data-dir", str(live.settings.data_dir), database]


def _add(live: Live, name: str, capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    assert main(_cli(live, "add", name, "--role", "viewer")) == 0
    return capsys.readouterr().out.strip()


class _Stream(threading.Thread):
    """Reads ``/api/events/stream`` with ``token`` until the server ends it."""

    def __init__(self, live: Live, token: str) -> None:
        super().__init__(daemon=True)
        self.url, self.token = live.url, token
        self.opened = threading.Event()
        self.status = 0
        self.error: httpx.HTTPError | None = None

    def run(self) -> None:
        headers = {"Authorization": f"Bearer {self.token}"}
        timeout = httpx.Timeout(30, read=None)
        try:
            with (
                httpx.Client(base_url=self.url, headers=headers, timeout=timeout) as http,
                http.stream("GET", "/api/events/stream") as answer,
            ):
                self.status = answer.status_code
                self.opened.set()
                for _ in answer.iter_bytes():
                    pass
        except httpx.HTTPError as exc:  # the server stopping under a stream still open
            self.error = exc


def test_a_revoked_tokens_open_stream_ends_within_a_ping(
    live: Live, capsys: pytest.CaptureFixture[str]
) -> None:
    ana = _add(live, "ana", capsys)
    revoked, admin = _Stream(live, ana), _Stream(live, live.token)
    for stream in (revoked, admin):
        stream.start()
        assert stream.opened.wait(10)
        assert stream.status == 200
    revoked.join(PING_S * 3)
    assert revoked.is_alive(), "a live token's stream stays open"

    assert main(_cli(live, "revoke", "ana")) == 0

    revoked.join(10)  # one ping is 0.3 s: generous for a loaded machine, never passes early
    assert not revoked.is_alive(), "the revoked token's stream is still open"
    assert revoked.error is None  # a clean end of stream, not a dropped connection
    assert admin.is_alive(), "the bootstrap token's stream stays open"
    assert (
        httpx.get(f"{live.url}/api/me", headers={"Authorization": f"Bearer {ana}"}).status_code
        == 401
    )


def test_unknown_and_wrong_token_ids_cost_the_same_key_derivation(
    live: Live, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    ana = _add(live, "ana", capsys)
    ident, secret = tokens.split(ana) or ("", "")
    calls: list[str] = []
    real = tokens.hash_secret

    def counted(secret: str, salt: str) -> str:
        calls.append(salt)
        return real(secret, salt)

    monkeypatch.setattr(tokens, "hash_secret", counted)
    wrong_secret = f"cad_{ident}.{'x' * len(secret)}"
    unknown_id = f"cad_{'0' * 12}.{secret}"
    revoked_id = f"cad_{ident}.{secret}"
    cost: dict[str, int] = {}
    for what, token in (("wrong secret", wrong_secret), ("unknown id", unknown_id)):
        before = len(calls)
        answer = httpx.get(f"{live.url}/api/me", headers={"Authorization": f"Bearer {token}"})
        assert answer.status_code == 401, what
        cost[what] = len(calls) - before
    assert main(_cli(live, "revoke", "ana")) == 0
    before = len(calls)
    answer = httpx.get(f"{live.url}/api/me", headers={"Authorization": f"Bearer {revoked_id}"})
    assert answer.status_code == 401
    cost["revoked id"] = len(calls) - before
    assert cost == {"wrong secret": 1, "unknown id": 1, "revoked id": 1}
