"""``cadencia events archive`` / ``restore`` on a real backend, SQLite and PostgreSQL.

The world is a seeded history (``bench._fill``, the product's append path) plus a real
teto-de-voltas takeover and a real refund through the API (ledger rows, an open Inbox
item), then backdated: the archive must move exactly the old events live state no longer
reads, leave roster, Inbox, approvals and ledger as they were, and restore must bring the
log back identical.
"""

from __future__ import annotations

import contextlib
import gzip
import json
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

import bench._fill as filler
from backend.cli import main
from backend.erp.seed import upsert_pedidos
from backend.events import EventLog, EventType
from backend.settings import load_settings
from backend.store.db import Database, open_database
from backend.store.migrate import migrate
from tests.integration.api.conftest import ASKS, Live, live_backend

TODAY = datetime.now(UTC).date()
CUTOFF = (TODAY - timedelta(days=30)).isoformat()


def _backdate(db: Database, until_id: int, days: int = 60) -> None:
    with db.transaction() as tx:
        if tx.dialect == "sqlite":
            tx.execute_sql(
                "UPDATE events SET ts = strftime('%Y-%m-%dT%H:%M:%fZ', ts, :shift) "
                "WHERE id <= :until",
                {"shift": f"-{days} days", "until": until_id},
            )
        else:
            tx.execute_sql(
                "UPDATE events SET ts = ts - make_interval(days => %(days)s) WHERE id <= %(until)s",
                {"days": days, "until": until_id},
            )


def _events(log: EventLog, until: int) -> dict[int, dict[str, Any]]:
    out: dict[int, dict[str, Any]] = {}
    after = 0
    while batch := log.after(after, 1000):
        out.update({e.id: e.to_dict() for e in batch if e.id <= until})
        after = batch[-1].id
    return out


def _tables(url: str) -> dict[str, list[tuple[Any, ...]]]:
    """The ledger and the takeover/approval tables, read with the raw driver."""
    names = ("ledger_records", "ledger_counters", "interruptions", "approvals")
    if url.startswith("sqlite"):
        import sqlite3

        with contextlib.closing(sqlite3.connect(url.removeprefix("sqlite:///"))) as conn:
            return {t: conn.execute(f"SELECT * FROM {t} ORDER BY 1").fetchall() for t in names}
    import psycopg

    with psycopg.connect(url) as conn:
        return {t: conn.execute(f"SELECT * FROM {t} ORDER BY 1").fetchall() for t in names}


def _old(ts: str) -> bool:
    return datetime.fromisoformat(ts) < datetime.fromisoformat(f"{CUTOFF}T00:00:00+00:00")


@pytest.fixture(params=["sqlite", "postgres"])
def world(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[Live, str]]:
    url = (
        f"sqlite:///{tmp_path / 'retention.sqlite3'}"
        if request.param == "sqlite"
        else request.getfixturevalue("pg_url")
    )
    monkeypatch.setattr(filler, "BATCH", 300)  # several sessions in a small history
    filled = filler.fill(url, 1200, seed=7, progress=False)
    settings = load_settings(
        data_dir=tmp_path / "data",
        database_url=url,
        token="test-token-123",
        reconcile_interval_s=3600,
    )
    for live in live_backend(settings):
        upsert_pedidos(
            live.backend.db,
            [
                {"pedidoId": "4821", "valorPedido": "129.90", "clienteId": "c-1"},
                {"pedidoId": "7000", "valorPedido": "50.00", "clienteId": "c-2"},
            ],
        )
        for text in ASKS:  # the teto de voltas: an open takeover in the Inbox
            assert live.http.post(
                "/api/conversations/conv-teto/messages", json={"text": text, "cliente_id": "c-1"}
            ).is_success
        assert live.http.post(
            "/api/conversations/conv-refund/messages",
            json={"text": "Reembolso do pedido 7000", "cliente_id": "c-2"},
        ).is_success
        log = live.backend.events
        _backdate(log.db, log.last_id())
        # The newest bulk session stays open: one of its agents speaks today.
        log.append(
            EventType.AGENT_STATUS,
            {"status": "idle", "detail": ""},
            project_id=filled.project_id,
            session_id=filled.session_id,
            agent="po",
        )
        yield live, url


def _timeless(value: Any) -> Any:
    """``value`` without its ages (``age_s`` grows between two reads of the same item)."""
    if isinstance(value, dict):
        return {k: _timeless(v) for k, v in value.items() if k != "age_s"}
    if isinstance(value, list):
        return [_timeless(v) for v in value]
    return value


def _reads(live: Live) -> dict[str, Any]:
    paths = ("/api/roster", "/api/inbox", "/api/approvals", "/api/conversations/conv-teto")
    return {path: _timeless(live.http.get(path).json()) for path in paths}


def test_archive_moves_exactly_what_live_state_no_longer_reads_and_restore_puts_it_back(
    world: tuple[Live, str], tmp_path: Path
) -> None:
    live, url = world
    log: EventLog = live.backend.events
    runtime = live.backend.team.runtime
    top = log.last_id()
    before = _events(log, top)
    reads = _reads(live)
    assert [i["kind"] for i in reads["/api/inbox"]].count("interruption") == 1, reads["/api/inbox"]
    tables = _tables(url)
    sessions = {e["session_id"] for e in before.values() if e["session_id"]}
    open_session = next(e for e in before.values() if not _old(e["ts"]))["session_id"]
    memory = runtime.history(open_session, "po")
    assert memory[1] > 0, "the open session's agent has turns to remember"

    out = tmp_path / "old.jsonl.gz"
    assert (
        main(["events", "archive", "--before", CUTOFF, "--out", str(out), "--database", url]) == 0
    )

    with gzip.open(out, "rt", encoding="utf-8") as fh:
        archived = {line["id"]: line for line in map(json.loads, fh)}
    after = _events(log, top)
    assert len(archived) > len(before) / 2  # most of the history moved
    assert set(archived).isdisjoint(after)
    assert set(archived) | set(after) == set(before)
    assert all(_old(before[i]["ts"]) for i in archived)
    assert all(_old(e["ts"]) or i in after for i, e in before.items())  # recent stays
    # Open sessions keep their whole history: the takeover's conversation, the open day.
    assert {"conv-teto", open_session}.isdisjoint(e["session_id"] for e in archived.values())
    assert runtime.history(open_session, "po") == memory
    assert _reads(live) == reads
    assert _tables(url) == tables
    closed = sessions - {e["session_id"] for e in after.values()}
    assert closed, "some closed session was archived whole (its memory is what an archive forgets)"
    last = log.after(top, 10)
    assert [e.type for e in last] == [EventType.EVENTS_ARCHIVED]
    assert last[0].payload["archived"] == len(archived)
    assert last[0].payload["file"] == out.name

    assert main(["events", "restore", str(out), "--database", url]) == 0
    assert _events(log, top) == before
    assert _reads(live) == reads
    assert _tables(url) == tables
    assert main(["events", "restore", str(out), "--database", url]) == 0  # idempotent
    restored = [e for e in log.after(top, 10) if e.type == EventType.EVENTS_RESTORED]
    assert [e.payload["restored"] for e in restored] == [len(archived)]  # the 2nd restored 0
    assert _events(log, top) == before


# -- bad input: a clear error (exit 2), nothing changes ---------------------------------


@pytest.fixture
def small(tmp_path: Path) -> Iterator[tuple[str, EventLog]]:
    url = f"sqlite:///{tmp_path / 'small.sqlite3'}"
    db = open_database(url)
    migrate(db)
    log = EventLog(db)
    for n in range(5):
        log.append(EventType.BENCH_TICK, {"i": n, "t": 0.0})
    _backdate(db, log.last_id())
    yield url, log
    db.close()


def _state(log: EventLog, folder: Path) -> tuple[dict[int, dict[str, Any]], list[str]]:
    return _events(log, 10**9), sorted(p.name for p in folder.iterdir())


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--before", "2026-13-01"], "must be a date YYYY-MM-DD"),
        (["--before", "01/11/2026"], "must be a date YYYY-MM-DD"),
        (["--before", "2026-1-1"], "must be a date YYYY-MM-DD"),
        (["--before", (TODAY + timedelta(days=1)).isoformat()], "is in the future"),
        (["--out", "{dir}/existing.jsonl.gz"], "already exists"),
        (["--out", "{dir}/old.json"], "must name a *.jsonl.gz file"),
        (["--out", "{dir}/missing/../old.jsonl.gz"], "does not exist"),
    ],
)
def test_archive_refuses_bad_input(
    small: tuple[str, EventLog],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    message: str,
) -> None:
    url, log = small
    (tmp_path / "existing.jsonl.gz").write_bytes(b"precious")
    state = _state(log, tmp_path)
    args = {"--before": CUTOFF, "--out": str(tmp_path / "old.jsonl.gz")}
    args.update(dict(zip(argv[::2], argv[1::2], strict=True)))
    flat = [x for k, v in args.items() for x in (k, v.format(dir=tmp_path))]
    assert main(["events", "archive", *flat, "--database", url]) == 2
    assert message in " ".join(capsys.readouterr().err.split())
    assert _state(log, tmp_path) == state
    assert (tmp_path / "existing.jsonl.gz").read_bytes() == b"precious"


def _archive_of(lines: list[bytes]) -> bytes:
    # mtime=0: the same bytes in every process (pytest-xdist workers collect the same ids)
    return gzip.compress(b"".join(line + b"\n" for line in lines), mtime=0)


GOOD = json.dumps(
    {
        "id": 1,
        "type": "bench.tick",
        "ts": "2026-01-01T00:00:00.000Z",
        "project_id": None,
        "session_id": None,
        "agent": None,
        "payload": {"i": 0, "t": 0.0},
    }
).encode()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "no archive at"),
        ("dir", "is not a regular file"),
        (
            _archive_of([GOOD, GOOD.replace(b'"id": 1', b'"id": 2')])[:-12],
            "not a complete gzip archive",
        ),
        (b"plain text, not gzip", "not a complete gzip archive"),
        (_archive_of([GOOD.replace(b'"id": 1', b'"id": 2'), b"{not json"]), "line 2: not JSON"),
        (
            _archive_of([GOOD, GOOD.replace(b'"type": "bench.tick"', b'"type": 5')]),
            "line 2: not an archived event",
        ),
        (_archive_of([GOOD.replace(b'"id": 1', b'"id": 9'), GOOD]), "line 2: id 1 after id 9"),
        (
            _archive_of([GOOD.replace(b'"ts": "2026-01-01T00:00:00.000Z"', b'"ts": "yesterday"')]),
            "line 1: not an archived event",
        ),
    ],
)
def test_restore_refuses_bad_archives_and_writes_nothing(
    small: tuple[str, EventLog],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    content: bytes | str | None,
    message: str,
) -> None:
    url, log = small
    with log.db.transaction() as tx:  # ids 1..2 free, so a half-restore would show
        tx.execute_sql("DELETE FROM events WHERE id <= 2")
    path = tmp_path / "in.jsonl.gz"
    if content == "dir":
        path.mkdir()
    elif isinstance(content, bytes):
        path.write_bytes(content)
    state = _state(log, tmp_path)
    assert main(["events", "restore", str(path), "--database", url]) == 2
    assert message in " ".join(capsys.readouterr().err.split())
    assert _state(log, tmp_path) == state


def test_parse_before_accepts_today_and_the_past() -> None:
    from backend.events.archive import parse_before

    assert parse_before("2026-02-28", today=date(2026, 3, 1)) == date(2026, 2, 28)
    assert parse_before("2026-03-01", today=date(2026, 3, 1)) == date(2026, 3, 1)
