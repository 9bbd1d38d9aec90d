"""Per-tool ERP connections: each tool reaches the ERP as its own role, nothing more.

On PostgreSQL a tool logs in as its login role (``cadencia_agente_*``) with its own
credentials, so the database itself refuses what the grants spec does not allow. On
SQLite the same spec becomes an authorizer on the tool's own connection.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from backend.erp.grants import sqlite_authorizer
from backend.exceptions import StorageError
from backend.store.db import (
    Database,
    PostgresDatabase,
    SqliteDatabase,
    Tx,
    pool_transaction,
    read_only_session,
)

CredentialFn = Callable[[str], str]
"""Returns the password (or IAM token) of a tool role; called only when a tool connects."""


class ToolConnection:
    """A connection to the ERP as one tool role."""

    def __init__(self, db: Database, role: str, credential: CredentialFn | None) -> None:
        self.role = role
        self._db = db
        self._lock = threading.Lock()
        self._sqlite: Any = None
        self._pool: Any = None
        self._read_pool: Any = None
        self._credential = credential

    @contextmanager
    def transaction(self, *, write: bool = True) -> Iterator[Tx]:
        """One transaction as this role; ``write=False`` for a read, which then takes no
        write lock on SQLite and, on PostgreSQL, runs with no ``BEGIN``/``COMMIT`` of its
        own on a read-only session (see :meth:`Database.transaction`)."""
        if isinstance(self._db, SqliteDatabase):
            with self._lock:
                if self._sqlite is None:
                    self._sqlite = self._db.connect(authorizer=sqlite_authorizer(self.role))
                with self._db.transaction_on(
                    self._sqlite, write=write, what=f"ERP refused {self.role}"
                ) as tx:
                    yield tx
            return
        if isinstance(self._db, PostgresDatabase):
            with pool_transaction(
                self._pg_pool(read=not write), write=write, what=f"ERP refused {self.role}"
            ) as tx:
                yield tx
            return
        raise StorageError(f"no ERP connection for {type(self._db).__name__}")

    def _pg_pool(self, *, read: bool) -> Any:
        """This role's write pool, or its read pool (autocommit, read-only sessions)."""
        from psycopg.conninfo import conninfo_to_dict, make_conninfo
        from psycopg.rows import dict_row
        from psycopg_pool import ConnectionPool

        with self._lock:
            pool = self._read_pool if read else self._pool
            if pool is not None:
                return pool
            if self._credential is None:
                raise StorageError(f"no credentials for ERP role {self.role}")
            params = conninfo_to_dict(self._db.url)
            # The deployment's name for this spec role (CADENCIA_ROLE_PREFIX).
            login = getattr(self._credential, "login", None)
            params["user"] = login(self.role) if callable(login) else self.role
            params.pop("password", None)
            pool = ConnectionPool(
                make_conninfo("", **params),
                min_size=1,
                max_size=4,
                kwargs={"row_factory": dict_row, "autocommit": read},
                configure=read_only_session if read else None,
                connection_class=_role_connection_class(self._credential, self.role),
                max_lifetime=600,  # shorter than an RDS IAM token's 15 minutes
                open=True,
                timeout=15,
            )
            if read:
                self._read_pool = pool
            else:
                self._pool = pool
            return pool

    def close(self) -> None:
        """Close whatever this role opened."""
        with self._lock:
            if self._sqlite is not None:
                self._sqlite.close()
                self._sqlite = None
            for pool in (self._pool, self._read_pool):
                if pool is not None:
                    pool.close()
            self._pool = self._read_pool = None


def _role_connection_class(credential: CredentialFn, role: str) -> type:
    """A psycopg Connection class that asks for the role's credential on every connect.

    Fresh per connection so an RDS IAM auth token (valid 15 minutes) is never reused stale.
    """
    import psycopg

    class RoleConnection(psycopg.Connection):  # type: ignore[type-arg]
        @classmethod
        def connect(cls, conninfo: str = "", **kwargs: Any) -> Any:  # type: ignore[override]
            kwargs["password"] = credential(role)
            return super().connect(conninfo, **kwargs)

    return RoleConnection
