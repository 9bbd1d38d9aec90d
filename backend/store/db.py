"""One small interface over SQLite (embedded default) and PostgreSQL (psycopg 3).

Callers run named queries from ``sql/`` inside :meth:`Database.transaction`; rows come
back as plain dicts with timestamps as ISO-8601 strings and JSON columns decoded, so
code above this module never sees which engine it talks to.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, nullcontext
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from backend.exceptions import ConfigError, StorageError
from backend.redact import redact_url
from backend.store.files import private_dir, secure_sqlite
from backend.store.queries import Dialect, load_queries

Row = dict[str, Any]


def _normalize(row: Mapping[str, Any]) -> Row:
    out: Row = {}
    for key, value in row.items():
        if isinstance(value, datetime):
            value = value.isoformat()
        elif isinstance(value, Decimal):
            value = str(value)
        out[key] = value
    return out


class Tx:
    """A transaction in progress: run named queries, get dict rows back."""

    def __init__(self, cursor: Any, queries: dict[str, str], dialect: Dialect) -> None:
        self._cursor = cursor
        self._queries = queries
        self.dialect = dialect
        self._before_commit: list[Callable[[Tx], None]] = []
        self.state: dict[str, Any] = {}
        """Scratch space of whoever works in this transaction (e.g. a projector's queue)."""

    def before_commit(self, hook: Callable[[Tx], None]) -> None:
        """Run ``hook(self)`` once, as this transaction's last work before its COMMIT (not
        at all if it rolls back). Hooks run in the order they were added."""
        self._before_commit.append(hook)

    def run_before_commit(self) -> None:
        """Run the :meth:`before_commit` hooks (the database does, right before COMMIT)."""
        while self._before_commit:
            self._before_commit.pop(0)(self)

    def execute(self, name: str, params: Mapping[str, Any] | None = None) -> int:
        """Run query ``name``; return the number of rows it changed."""
        self._run(self._queries[name], params)
        return int(self._cursor.rowcount or 0)

    def execute_sql(self, sql: str, params: Mapping[str, Any] | None = None) -> int:
        """Run literal SQL built by the caller from allow-listed identifiers only."""
        self._run(sql, params)
        return int(self._cursor.rowcount or 0)

    def one(self, name: str, params: Mapping[str, Any] | None = None) -> Row | None:
        """Run query ``name`` and return its first row, or None."""
        self._run(self._queries[name], params)
        row = self._cursor.fetchone()
        return _normalize(row) if row is not None else None

    def all(self, name: str, params: Mapping[str, Any] | None = None) -> list[Row]:
        """Run query ``name`` and return every row."""
        self._run(self._queries[name], params)
        return [_normalize(r) for r in self._cursor.fetchall()]

    def _run(self, sql: str, params: Mapping[str, Any] | None) -> None:
        self._cursor.execute(sql, dict(params or {}))


class Database:
    """A database reached through a URL; see :func:`open_database`."""

    dialect: Dialect
    url: str

    @contextmanager
    def transaction(self, *, write: bool = True) -> Iterator[Tx]:  # pragma: no cover - abstract
        """A transaction: commits when the block ends, rolls back if it raises.

        ``write=False`` promises the block only reads. The engine may then skip the
        transaction's own round trips (PostgreSQL runs each statement on its own, on a
        read-only session). On both engines a write slipped in fails instead of committing
        (SQLite: when the block ends, by its connection's change count). A read block sees
        each statement's own snapshot, as READ COMMITTED gives it inside a transaction
        anyway, and must not take locks or set anything for the transaction's duration.
        """
        raise NotImplementedError
        yield

    def close(self) -> None:
        """Release connections."""


def _sqlite_row(cursor: sqlite3.Cursor, row: tuple[Any, ...]) -> dict[str, Any]:
    return {d[0]: v for d, v in zip(cursor.description, row, strict=True)}


class SqliteDatabase(Database):
    """SQLite in WAL mode; one connection per thread, writes under ``BEGIN IMMEDIATE``."""

    dialect: Dialect = "sqlite"

    def __init__(self, path: Path, *, url: str) -> None:
        self.path = path
        self.url = url
        self._local = threading.local()
        self._all: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self._queries = load_queries("sqlite")
        if not path.parent.exists():
            private_dir(path.parent)
        secure_sqlite(path)  # created 0600 before SQLite first opens it (and its -wal/-shm)

    def connect(self, authorizer: Any = None) -> sqlite3.Connection:
        """A new connection with the project's pragmas (optionally under an authorizer)."""
        conn = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
        conn.row_factory = _sqlite_row
        conn.execute("PRAGMA journal_mode=WAL")
        # FULL: a claim must be on disk before the gateway is called, even across a power
        # loss (NORMAL in WAL mode may lose the last commits); the ledger is worth an fsync.
        conn.execute("PRAGMA synchronous=FULL")
        conn.execute("PRAGMA foreign_keys=ON")
        conn.execute("PRAGMA busy_timeout=30000")
        if authorizer is not None:
            conn.set_authorizer(authorizer)
        return conn

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self.connect()
            self._local.conn = conn
            with self._lock:
                self._all.append(conn)
        return conn

    @contextmanager
    def transaction(self, *, write: bool = True) -> Iterator[Tx]:
        with self.transaction_on(self._conn(), write=write) as tx:
            yield tx

    @contextmanager
    def transaction_on(
        self, conn: sqlite3.Connection, *, write: bool = True, what: str = "SQLite error"
    ) -> Iterator[Tx]:
        """A transaction on ``conn`` (one of this database's connections, e.g. a tool's).

        A read block (``write=False``) that changed a row fails and rolls back, as a write
        in PostgreSQL's read-only sessions does: nothing it wrote is committed.
        """
        cursor = conn.cursor()
        try:
            before = conn.total_changes
            cursor.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            tx = Tx(cursor, self._queries, "sqlite")
            yield tx
            tx.run_before_commit()
            if not write and conn.total_changes != before:
                raise StorageError(
                    f"{what}: cannot write in a read-only transaction "
                    "(transaction(write=False)); nothing was committed"
                )
            cursor.execute("COMMIT")
        except BaseException as exc:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            if isinstance(exc, sqlite3.Error):
                raise StorageError(f"{what}: {exc}") from exc
            raise
        finally:
            cursor.close()

    def close(self) -> None:
        with self._lock:
            for conn in self._all:
                conn.close()
            self._all.clear()
        self._local = threading.local()


class PostgresDatabase(Database):
    """PostgreSQL through psycopg connection pools; rows as dicts.

    Writes run in transactions on :attr:`pool`. Reads (``transaction(write=False)``) run on
    :attr:`read_pool`, whose sessions are in autocommit and ``default_transaction_read_only``:
    no ``BEGIN``/``COMMIT`` round trips (two of a one-query read's three), and a write
    statement in a read block fails with "read-only transaction" instead of committing
    on its own. Under READ COMMITTED each statement takes its own snapshot inside a
    transaction too, so a read block sees what it saw before.
    """

    dialect: Dialect = "postgres"

    def __init__(self, url: str, *, min_size: int = 1, max_size: int = 8) -> None:
        import psycopg
        from psycopg.rows import dict_row
        from psycopg_pool import ConnectionPool

        self.url = url
        try:
            self.pool = ConnectionPool(
                url,
                min_size=min_size,
                max_size=max_size,
                kwargs={"row_factory": dict_row, "autocommit": False},
                open=True,
                timeout=30,
            )
            self.pool.wait(timeout=30)
            self.read_pool = ConnectionPool(
                url,
                min_size=0,  # opened on the first read: a write-only user holds none
                max_size=max_size,
                kwargs={"row_factory": dict_row, "autocommit": True},
                configure=read_only_session,
                open=True,
                timeout=30,
            )
        except (psycopg.Error, Exception) as exc:  # PoolTimeout is not a psycopg.Error
            self._close_pools()
            raise StorageError(f"cannot connect to PostgreSQL at {redact_url(url)}: {exc}") from exc

    @contextmanager
    def transaction(self, *, write: bool = True) -> Iterator[Tx]:
        with pool_transaction(self.pool if write else self.read_pool, write=write) as tx:
            yield tx

    def close(self) -> None:
        self._close_pools()

    def _close_pools(self) -> None:
        for pool in (getattr(self, "pool", None), getattr(self, "read_pool", None)):
            if pool is not None:
                pool.close()


@contextmanager
def pool_transaction(pool: Any, *, write: bool, what: str = "PostgreSQL error") -> Iterator[Tx]:
    """A transaction on a connection of ``pool`` (the database's, or a tool role's).

    ``write=False`` expects a read pool (autocommit, :func:`read_only_session`): no
    ``BEGIN``/``COMMIT`` of its own. Errors become :class:`StorageError` (``what: error``).
    """
    import psycopg

    try:
        with (
            pool.connection() as conn,
            conn.transaction() if write else nullcontext(),
            conn.cursor() as cursor,
        ):
            tx = Tx(cursor, load_queries("postgres"), "postgres")
            yield tx
            tx.run_before_commit()
    except psycopg.Error as exc:
        raise StorageError(f"{what}: {exc}") from exc


def read_only_session(conn: Any) -> None:
    """Configure a read pool's session (psycopg_pool ``configure=``, on an autocommit
    connection): every statement in it is a read-only transaction of its own."""
    conn.execute("SET default_transaction_read_only = on")


def sqlite_path(url: str) -> Path:
    """The file path of a ``sqlite:///PATH`` URL."""
    parsed = urlparse(url)
    path = (parsed.netloc + parsed.path) if parsed.netloc else parsed.path
    if not path:
        raise ConfigError(f"sqlite URL has no file path: {url!r}")
    return Path(path).expanduser()


def open_database(url: str) -> Database:
    """Open the database named by ``url`` (``sqlite:///FILE`` or ``postgresql://...``)."""
    scheme = urlparse(url).scheme
    if scheme == "sqlite":
        return SqliteDatabase(sqlite_path(url), url=url)
    if scheme in ("postgresql", "postgres"):
        return PostgresDatabase(url)
    raise ConfigError(
        f"unsupported database URL scheme {scheme!r}: use sqlite:///FILE or postgresql://..."
    )


def dumps(value: Any) -> str:
    """JSON for storage: compact, UTF-8 kept, decimals as strings."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def loads(value: Any) -> Any:
    """Decode a JSON column (PostgreSQL hands JSONB back already decoded)."""
    if value is None or isinstance(value, (dict, list)):
        return value
    return json.loads(value)
