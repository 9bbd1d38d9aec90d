"""``cadencia db migrate`` on real PostgreSQL and SQLite: roles, grants, idempotence."""

from __future__ import annotations

import sqlite3
import uuid
from pathlib import Path
from typing import Any

import psycopg
import pytest

from backend.cli import main
from backend.erp.grants import ROLE_CONSULTA, ROLE_REEMBOLSO, TOOL_ROLES
from backend.posture.grants_audit import audit_grants, read_snapshot
from tests.integration.posture import test_teardown as _cluster

# The private-cluster fixtures (cluster-wide role changes must not touch the shared server).
private_cluster = _cluster.private_cluster
private_db = _cluster.private_db


def _migrate(url: str, data_dir: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> str:
    capsys.readouterr()
    assert main(["db", "migrate", "--database", url, "--data-dir", str(data_dir), *extra]) == 0
    return capsys.readouterr().out


def _live(url: str) -> dict[str, Any]:
    """Privilege snapshot + role list with every attribute + applied migrations."""
    from psycopg.rows import dict_row

    with psycopg.connect(url, row_factory=dict_row) as conn:
        snapshot = read_snapshot(conn).model_dump()
        roles = conn.execute(
            "SELECT rolname, rolsuper, rolinherit, rolcreaterole, rolcreatedb, rolcanlogin, "
            "rolreplication, rolbypassrls, rolconnlimit, rolvaliduntil FROM pg_roles "
            "WHERE rolname LIKE 'cadencia%%' ORDER BY 1"
        ).fetchall()
        versions = conn.execute("SELECT version, name FROM schema_migrations ORDER BY 1").fetchall()
    return {"snapshot": snapshot, "roles": roles, "migrations": versions}


def test_migrate_creates_roles_and_grants_and_a_second_run_changes_nothing(
    pg_url: str, data_dir: Path, capsys
) -> None:
    first = _migrate(pg_url, data_dir, capsys)
    assert "migrations: applied 1" in first
    assert audit_grants(pg_url, other_databases=False).verdict == "pass"
    for role in TOOL_ROLES:
        assert (data_dir / "secrets" / f"db__{role}").exists()  # its password, mode 0600
    before = _live(pg_url)

    second = _migrate(pg_url, data_dir, capsys)

    assert _live(pg_url) == before
    assert "migrations: up to date" in second
    assert "changes: none" in second
    assert "not repaired" not in second
    for role in TOOL_ROLES:
        assert f"role {role}: exists (kept)" in second


def test_tool_roles_log_in_with_the_stored_password(pg_url: str, data_dir: Path, capsys) -> None:
    _migrate(pg_url, data_dir, capsys)
    password = (data_dir / "secrets" / f"db__{ROLE_REEMBOLSO}").read_text()
    with psycopg.connect(pg_url, user=ROLE_REEMBOLSO, password=password) as conn:
        assert conn.execute("SELECT current_user").fetchone() == (ROLE_REEMBOLSO,)
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("SELECT nome FROM clientes")


def test_migrate_works_where_the_roles_already_exist(
    pg_admin_url: str, pg_url: str, data_dir: Path, capsys
) -> None:
    """Roles are cluster-wide: a second database reuses them and gets its own grants."""
    _migrate(pg_url, data_dir, capsys)
    name = f"cadencia_t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(pg_admin_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    other = pg_url.rsplit("/", 1)[0] + f"/{name}"
    try:
        out = _migrate(other, data_dir, capsys)
        assert f"role {ROLE_CONSULTA}: exists (kept)" in out
        assert audit_grants(other, other_databases=False).verdict == "pass"
        assert audit_grants(pg_url, other_databases=False).verdict == "pass"
    finally:
        with psycopg.connect(pg_admin_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_migrate_repairs_erp_grants_and_names_what_it_cannot_repair(
    pg_url: str, data_dir: Path, capsys
) -> None:
    _migrate(pg_url, data_dir, capsys)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f"GRANT UPDATE ON pedidos TO {ROLE_CONSULTA}")
        conn.execute(f"GRANT SELECT ON ledger_records TO {ROLE_REEMBOLSO}")
    out = _migrate(pg_url, data_dir, capsys)
    assert f"- {ROLE_CONSULTA} UPDATE on table public.pedidos" in out
    assert f"not repaired by migrate EXTRA: {ROLE_REEMBOLSO} has SELECT on ledger_records" in out
    assert [d.line() for d in audit_grants(pg_url, other_databases=False).drifts] == [
        f"EXTRA: {ROLE_REEMBOLSO} has SELECT on ledger_records"
    ]


def test_migrate_gives_login_back_to_a_disabled_role(
    private_db: str, data_dir: Path, capsys
) -> None:
    _migrate(private_db, data_dir, capsys)
    with psycopg.connect(private_db, autocommit=True) as conn:
        conn.execute(f"ALTER ROLE {ROLE_CONSULTA} NOLOGIN")
    out = _migrate(private_db, data_dir, capsys)
    assert f"role {ROLE_CONSULTA}: exists (kept), LOGIN restored" in out
    assert audit_grants(private_db).verdict == "pass"


def test_iam_auth_sets_no_password_and_skips_rds_iam_off_rds(
    private_db: str, data_dir: Path, capsys
) -> None:
    with psycopg.connect(private_db) as conn:
        has_rds_iam = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = 'rds_iam'").fetchone()
    out = _migrate(private_db, data_dir, capsys, "--iam-auth")
    assert "RDS IAM tokens, no passwords" in out
    assert ("rds_iam granted" if has_rds_iam else "rds_iam role absent") in out
    assert not (data_dir / "secrets").exists()
    with psycopg.connect(private_db) as conn:
        row = conn.execute(
            "SELECT rolpassword FROM pg_authid WHERE rolname = %s", (ROLE_CONSULTA,)
        ).fetchone()
    assert row == (None,)


def test_sqlite_migrate_applies_schema_and_explains_the_authorizer(
    tmp_path: Path, data_dir: Path, capsys
) -> None:
    db = tmp_path / "state.sqlite3"
    out = _migrate(f"sqlite:///{db}", data_dir, capsys)
    assert "authorizer" in out
    assert "migrations: applied 1" in out
    with sqlite3.connect(db) as conn:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"pedidos", "clientes", "ledger_records"} <= tables
    assert "up to date" in _migrate(f"sqlite:///{db}", data_dir, capsys)
