"""The grants spec is the single source of truth for SQL, SQLite and the audit."""

from __future__ import annotations

import sqlite3
from importlib import resources

from backend.erp.grants import (
    ROLE_CADASTRO,
    ROLE_CONSULTA,
    ROLE_REEMBOLSO,
    expected_privileges,
    render_postgres_grants,
    sqlite_authorizer,
)


def test_committed_postgres_grants_match_the_spec() -> None:
    committed = resources.files("sql").joinpath("postgres", "grants.sql").read_text()
    assert committed == render_postgres_grants()


def test_cadastro_can_read_the_id_its_where_clause_needs() -> None:
    assert ("clientes", "SELECT", "id") in expected_privileges(ROLE_CADASTRO)
    assert ("clientes", "SELECT", "nome") not in expected_privileges(ROLE_CADASTRO)


def test_reembolso_columns() -> None:
    privs = expected_privileges(ROLE_REEMBOLSO)
    assert {c for t, p, c in privs if p == "UPDATE"} == {"status_reembolso", "valor_reembolsado"}
    assert {c for t, p, c in privs if p == "SELECT"} == {"id", "valor_pedido"}


def test_authorizer_denies_unlisted_actions() -> None:
    auth = sqlite_authorizer(ROLE_CONSULTA)
    assert auth(sqlite3.SQLITE_READ, "pedidos", "status", "main", None) == sqlite3.SQLITE_OK
    assert auth(sqlite3.SQLITE_UPDATE, "pedidos", "status", "main", None) == sqlite3.SQLITE_DENY
    assert auth(sqlite3.SQLITE_READ, "ledger_records", "chave", "main", None) == sqlite3.SQLITE_DENY
    assert auth(sqlite3.SQLITE_PRAGMA, "journal_mode", None, None, None) == sqlite3.SQLITE_DENY
    assert auth(sqlite3.SQLITE_ATTACH, "/tmp/x", None, None, None) == sqlite3.SQLITE_DENY
