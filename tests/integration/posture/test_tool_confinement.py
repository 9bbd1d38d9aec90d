"""What the database itself refuses a tool role (issue 16): the event log's ordering lock,
temporary tables, other databases. Logged in with the password ``db migrate`` stored."""

from __future__ import annotations

import re
import threading
from pathlib import Path

import psycopg
import pytest

from backend.cli import main
from backend.erp.grants import ROLE_CONSULTA, ROLE_REEMBOLSO
from backend.events import EventLog, EventType
from backend.store.db import open_database
from tests.integration.posture import test_teardown as _cluster

# The private cluster: its own databases closed to PUBLIC (cluster-wide, not on the shared one).
private_cluster = _cluster.private_cluster
private_db = _cluster.private_db


def _migrate(url: str, data_dir: Path) -> None:
    assert main(["db", "migrate", "--database", url, "--data-dir", str(data_dir)]) == 0


def _as_tool(url: str, data_dir: Path, role: str, **kwargs: object) -> psycopg.Connection:
    password = (data_dir / "secrets" / f"db__{role}").read_text()
    return psycopg.connect(url, user=role, password=password, **kwargs)  # type: ignore[arg-type]


def test_a_tool_role_cannot_take_or_block_the_event_log_ordering(
    pg_url: str, data_dir: Path
) -> None:
    _migrate(pg_url, data_dir)
    with _as_tool(pg_url, data_dir, ROLE_CONSULTA) as tool:
        for statement in (
            "LOCK TABLE events_order IN ACCESS EXCLUSIVE MODE",
            "LOCK TABLE events IN SHARE MODE",
            "SELECT events_order_barrier()",
            "SELECT events_order_append()",
        ):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                tool.execute(statement)
            tool.rollback()
        # What it still can take (any role can take any advisory lock) no longer matters:
        # holding the old ordering key exclusively, appends and readers go on.
        tool.execute("SELECT pg_advisory_lock(738700002), pg_advisory_lock_shared(738700002)")
        db = open_database(pg_url)
        try:
            log = EventLog(db)
            with db.transaction() as tx:
                tx.execute_sql("SET LOCAL lock_timeout = '2s'")
                event = log.append_in(tx, EventType.BENCH_TICK, {"i": 1, "t": 0.0})
            assert [e.id for e in log.after(0)] == [event.id]
        finally:
            db.close()


def test_a_tool_role_cannot_create_a_temporary_table(pg_url: str, data_dir: Path) -> None:
    _migrate(pg_url, data_dir)
    with _as_tool(pg_url, data_dir, ROLE_REEMBOLSO) as tool:
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            tool.execute("CREATE TEMP TABLE stash (x int)")
        tool.rollback()
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            tool.execute("CREATE TABLE public.stash (x int)")


def test_a_tool_role_cannot_connect_to_another_database(private_db: str, data_dir: Path) -> None:
    """The private cluster's other databases are closed to PUBLIC, as the README tells the
    operator to do; the tool role's only CONNECT is on the ERP database."""
    _migrate(private_db, data_dir)
    with psycopg.connect(private_db, user=ROLE_CONSULTA) as conn:  # trust: no password
        assert conn.execute("SELECT current_user").fetchone() == (ROLE_CONSULTA,)
    other = private_db.replace(private_db.split("@/")[1].split("?")[0], "postgres")
    with pytest.raises(psycopg.OperationalError, match="permission denied for database"):
        psycopg.connect(other, user=ROLE_CONSULTA)


def test_a_tool_role_cannot_block_migrations_or_the_role_setup(pg_url: str, data_dir: Path) -> None:
    """The start migrates and sets up the tool roles under a lock; a tool credential holding
    the advisory keys those steps once waited on changes nothing (a second ``db migrate``
    finishes), and the table lock they take now is refused to it."""
    _migrate(pg_url, data_dir)
    with _as_tool(pg_url, data_dir, ROLE_CONSULTA, autocommit=True) as tool:
        tool.execute("SELECT pg_advisory_lock(738700001), pg_advisory_lock(738700003)")
        with pytest.raises(psycopg.errors.InsufficientPrivilege), tool.transaction():
            tool.execute("LOCK TABLE schema_migrations IN ACCESS SHARE MODE")
        codes: list[int] = []
        again = threading.Thread(target=lambda: codes.append(_migrate_code(pg_url, data_dir)))
        again.start()
        again.join(60)
        assert not again.is_alive(), "db migrate waited on a lock a tool role holds"
        assert codes == [0]


def _migrate_code(url: str, data_dir: Path) -> int:
    return main(["db", "migrate", "--database", url, "--data-dir", str(data_dir)])


def test_a_tool_role_can_neither_hear_nor_forge_the_event_notifications(
    pg_url: str, data_dir: Path
) -> None:
    """LISTEN/NOTIFY take no privilege, so the channel's name is the deployment's secret
    (migration 0018): a tool role cannot read it, cannot see it in another session's query,
    and hears nothing on the channel name it could guess; the serve processes still do."""
    _migrate(pg_url, data_dir)
    with psycopg.connect(pg_url, autocommit=True) as admin:
        row = admin.execute("SELECT name FROM events_channel").fetchone()
        assert row is not None
        channel = row[0]
        assert re.fullmatch(r"cadencia_events_[0-9a-f]{32}", channel)
        admin.execute(psycopg.sql.SQL("LISTEN {}").format(psycopg.sql.Identifier(channel)))
        with _as_tool(pg_url, data_dir, ROLE_CONSULTA, autocommit=True) as tool:
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                tool.execute("SELECT name FROM events_channel")
            seen = tool.execute("SELECT coalesce(query, '') FROM pg_stat_activity").fetchall()
            assert not [q for (q,) in seen if channel in q], "the listener's query leaked"
            tool.execute("LISTEN cadencia_events")  # the channel's old, guessable name
            db = open_database(pg_url)
            try:
                EventLog(db).append(EventType.BENCH_TICK, {"i": 1, "t": 0.0})
            finally:
                db.close()
            heard = list(admin.notifies(timeout=5.0, stop_after=1))
            assert [(n.channel, n.payload) for n in heard] == [(channel, "")]
            assert list(tool.notifies(timeout=0.5)) == []
