"""Apply the numbered, append-only migrations in ``sql/<dialect>/migrations``."""

from __future__ import annotations

import sqlite3
from typing import Any, cast

from backend.clock import utcnow_iso
from backend.exceptions import MigrationError
from backend.store.db import Database, PostgresDatabase, SqliteDatabase
from backend.store.queries import load_queries, migration_files


def migrate(db: Database) -> list[int]:
    """Apply pending migrations; return the versions applied (empty when up to date)."""
    if isinstance(db, SqliteDatabase):
        return _migrate_sqlite(db)
    if isinstance(db, PostgresDatabase):
        return _migrate_postgres(db)
    raise MigrationError(f"no migrations for {type(db).__name__}")


def _migrate_sqlite(db: SqliteDatabase) -> list[int]:
    q = load_queries("sqlite")
    conn = db.connect()
    applied: list[int] = []
    try:
        conn.execute(q["migrations_begin"])
        conn.execute(q["migrations_table"])
        done = {r["version"] for r in conn.execute(q["migrations_applied"])}
        for version, name, sql in migration_files("sqlite"):
            if version in done:
                continue
            for statement in _split(sql):
                conn.execute(statement)
            conn.execute(
                q["migration_record"], {"version": version, "name": name, "now": utcnow_iso()}
            )
            applied.append(version)
        conn.execute("COMMIT")
    except sqlite3.Error as exc:
        conn.execute("ROLLBACK")
        raise MigrationError(f"SQLite migration failed: {exc}") from exc
    finally:
        conn.close()
    return applied


def _split(sql: str) -> list[str]:
    """Split a migration into statements (migrations contain no semicolons in literals)."""
    return [s.strip() for s in sql.split(";") if s.strip() and not _only_comments(s)]


def _only_comments(chunk: str) -> bool:
    return all(not line.strip() or line.strip().startswith("--") for line in chunk.splitlines())


def _migrate_postgres(db: PostgresDatabase) -> list[int]:
    import psycopg

    q = load_queries("postgres")
    applied: list[int] = []
    try:
        with db.pool.connection() as conn, conn.transaction():
            present = conn.execute(q["migrations_table_present"]).fetchone()
            if not cast(dict[str, Any], present)["present"]:
                conn.execute(q["migrations_first_lock"])
                conn.execute(q["migrations_table"])
            conn.execute(q["migrations_lock"])
            rows = conn.execute(q["migrations_applied"]).fetchall()
            done = {r["version"] for r in cast(list[dict[str, Any]], rows)}  # dict_row pool
            for version, name, sql in migration_files("postgres"):
                if version in done:
                    continue
                conn.execute(sql)
                conn.execute(
                    q["migration_record"], {"version": version, "name": name, "now": utcnow_iso()}
                )
                applied.append(version)
    except psycopg.Error as exc:
        raise MigrationError(f"PostgreSQL migration failed: {exc}") from exc
    return applied
