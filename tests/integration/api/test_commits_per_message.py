"""A customer message costs at most two commits on the real backend (SQLite, synchronous=FULL,
so each write commit is an fsync): the message as received, then the turn's events, usage
row and reply. A guarded decision adds its own commit, never more than one per decision.

Commits are counted on every connection of the backend's database with SQLite's trace
callback: a ``COMMIT`` whose transaction changed rows is a write commit. The delivery
job's commits (its claim and outcome, and the closing of the reply's delivery row once the
channel answered, all off the request path) are told apart by their statements and left
out; the job itself is enqueued inside the reply's own commit, which is counted.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from backend.erp.seed import upsert_pedidos
from backend.settings import load_settings
from backend.store.db import SqliteDatabase
from tests.integration.api.conftest import Live, live_backend


class WriteCommits:
    """Write transactions committed on ``db``'s connections (new and existing ones)."""

    def __init__(self, db: SqliteDatabase) -> None:
        self.committed: list[list[str]] = []
        self._lock = threading.Lock()
        self._open: dict[int, list[str]] = {}
        self._changes: dict[int, int] = {}
        original = db.connect

        def connect(authorizer: Any = None) -> Any:
            conn = original(authorizer)
            self.watch(conn)
            return conn

        db.connect = connect  # type: ignore[method-assign]
        for conn in list(db._all):
            self.watch(conn)

    def watch(self, conn: Any) -> None:
        key = id(conn)
        self._changes[key] = conn.total_changes

        def trace(statement: str) -> None:
            head = statement.strip().split(None, 1)[0].upper() if statement.strip() else ""
            with self._lock:
                if head == "BEGIN":
                    self._open[key] = []
                elif head in ("COMMIT", "ROLLBACK"):
                    statements = self._open.pop(key, [])
                    changed = conn.total_changes != self._changes[key]
                    self._changes[key] = conn.total_changes
                    if head == "COMMIT" and changed:
                        self.committed.append(statements)
                else:
                    self._open.setdefault(key, []).append(" ".join(statement.split()))

        conn.set_trace_callback(trace)

    def request_path(self) -> list[list[str]]:
        """Committed write transactions, without the delivery job's."""
        off_path = ("UPDATE message_deliveries", "UPDATE jobs", "DELETE FROM jobs")
        with self._lock:
            return [t for t in self.committed if not all(any(o in s for o in off_path) for s in t)]

    def summary(self) -> list[str]:
        """Each request-path commit by the first words of its statements (for failures)."""
        return [" | ".join(" ".join(s.split()[:3]) for s in t) for t in self.request_path()]

    def reset(self) -> None:
        with self._lock:
            self.committed.clear()


@pytest.fixture
def counted(tmp_path: Path) -> Iterator[tuple[Live, WriteCommits]]:
    settings = load_settings(
        data_dir=tmp_path / "data",
        database_url=f"sqlite:///{tmp_path / 'commits.sqlite3'}",
        token="test-token-123",
    )
    for live in live_backend(settings):
        db = live.backend.db
        assert isinstance(db, SqliteDatabase)
        yield live, WriteCommits(db)


def _say(live: Live, commits: WriteCommits, conversa: str, text: str) -> dict[str, Any]:
    # The customer's channel posts with a channel token (an operator's post would add the
    # audit trail's commit, which is not the customer's path).
    _, channel = live.backend.operators.add(f"canal-{uuid.uuid4().hex[:8]}", "channel")
    commits.reset()
    reply = httpx.post(
        f"{live.url}/api/conversations/{conversa}/messages",
        json={"text": text, "cliente_id": "c-1"},
        headers={"Authorization": f"Bearer {channel}"},
        timeout=30,
    )
    assert reply.status_code == 200, reply.text
    # The reply's delivery closes on the worker's own commit, after the response: wait for
    # it so it cannot land inside the next message's count.
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        messages = live.http.get(f"/api/conversations/{conversa}").json()["messages"]
        if all((m.get("delivery") or {}).get("status") != "pending" for m in messages):
            break
        time.sleep(0.01)
    return dict(reply.json())


def test_a_plain_message_costs_two_commits(counted: tuple[Live, WriteCommits]) -> None:
    live, commits = counted
    body = _say(live, commits, "conv-c1", "Olá, tudo bem?")
    assert body["reply"] == "Pode me informar o número do pedido?"
    assert len(commits.request_path()) <= 2, "\n".join(commits.summary())


def test_a_blocked_attempt_adds_only_its_decision(counted: tuple[Live, WriteCommits]) -> None:
    live, commits = counted
    upsert_pedidos(
        live.backend.db, [{"pedidoId": "4821", "valorPedido": "129.90", "clienteId": "c-1"}]
    )
    first = _say(live, commits, "conv-c2", "Quero o reembolso do pedido 4821")
    assert [a["resultado"] for a in first["attempts"]] == ["executado", "executado"]
    # The guard's own commits: consultar's reservation and its record, the refund's claim
    # before the gateway, the tool's ERP update (its own role's connection) and the
    # completion; plus the message's two.
    assert len(commits.request_path()) <= 2 + 5, "\n".join(commits.summary())

    again = _say(live, commits, "conv-c2", "Já caiu o reembolso?")
    assert [a["resultado"] for a in again["attempts"]] == ["bloqueado_por_idempotencia"]
    assert len(commits.request_path()) <= 2 + 1, "\n".join(commits.summary())


class _Answers:
    """A provider that answers at once, reporting tokens."""

    name = "answers"

    async def complete(self, *, system: str, messages: list[Any], tools: list[Any]) -> Any:
        from backend.agents.providers.base import ModelTurn

        return ModelTurn(text="uma ideia", usage={"input_tokens": 5, "output_tokens": 2})


async def test_a_team_turn_commits_its_start_and_its_end(sqlite_db: SqliteDatabase) -> None:
    from backend.agents.runtime import AgentRuntime, TurnContext
    from backend.agents.usage import UsageBook
    from backend.events import EventLog, EventType

    events = EventLog(sqlite_db)
    runtime = AgentRuntime(
        events=events,
        providers=lambda _a, _c: _Answers(),
        tools={},
        usage=UsageBook(sqlite_db).record,
    )
    commits = WriteCommits(sqlite_db)
    await runtime.run_turn(TurnContext("p1", "s1", "criativo"), "ideias?")
    # agent.status working (visible while the model thinks), then agent.turn + usage + idle.
    assert len(commits.request_path()) == 2, "\n".join(commits.summary())
    assert [e.type for e in events.after(0)] == [
        EventType.AGENT_STATUS,
        EventType.AGENT_TURN,
        EventType.AGENT_STATUS,
    ]
    assert UsageBook(sqlite_db).used("criativo") == 7
