"""The database itself refuses what a tool may not do (PostgreSQL grants, SQLite authorizer)."""

from __future__ import annotations

import pytest

from backend.erp.grants import ROLE_CADASTRO, ROLE_CONSULTA, ROLE_REEMBOLSO
from backend.exceptions import StorageError
from backend.guard.assembly import Guard

FORBIDDEN = [
    (ROLE_CONSULTA, "UPDATE pedidos SET status = 'x' WHERE id = '4821'"),
    (ROLE_CONSULTA, "DELETE FROM pedidos"),
    (ROLE_CONSULTA, "SELECT chave FROM ledger_records"),
    (ROLE_REEMBOLSO, "SELECT cliente_id FROM pedidos WHERE id = '4821'"),
    (ROLE_REEMBOLSO, "UPDATE pedidos SET valor_pedido = 0 WHERE id = '4821'"),
    (ROLE_REEMBOLSO, "SELECT nome FROM clientes"),
    (ROLE_CADASTRO, "UPDATE clientes SET nome = 'x' WHERE id = 'c-17'"),
    (ROLE_CADASTRO, "SELECT email FROM clientes WHERE id = 'c-17'"),
    (ROLE_CADASTRO, "UPDATE pedidos SET status = 'x' WHERE id = '4821'"),
    (ROLE_CADASTRO, "INSERT INTO clientes (id, nome) VALUES ('x', 'y')"),
]

ALLOWED = [
    (ROLE_CONSULTA, "SELECT * FROM pedidos WHERE id = '4821'"),
    (ROLE_CONSULTA, "SELECT nome FROM clientes WHERE id = 'c-17'"),
    (ROLE_REEMBOLSO, "SELECT id, valor_pedido FROM pedidos WHERE id = '4821'"),
    (
        ROLE_REEMBOLSO,
        "UPDATE pedidos SET status_reembolso = 'x', valor_reembolsado = 1 WHERE id = '4821'",
    ),
    (
        ROLE_CADASTRO,
        "UPDATE clientes SET endereco = 'Rua A', telefone = '1', email = 'e' WHERE id = 'c-17'",
    ),
]


def _run(guard: Guard, role: str, sql: str) -> None:
    conn = guard.toolbox._conns[role]
    with conn.transaction() as tx:
        tx.execute_sql(sql)


@pytest.mark.parametrize(("role", "sql"), FORBIDDEN)
def test_forbidden_statement_is_refused_by_the_database(guard: Guard, role: str, sql: str) -> None:
    with pytest.raises(StorageError) as err:
        _run(guard, role, sql)
    text = str(err.value).lower()
    assert any(w in text for w in ("permission denied", "not authorized", "prohibited"))


@pytest.mark.parametrize(("role", "sql"), ALLOWED)
def test_allowed_statement_runs(guard: Guard, role: str, sql: str) -> None:
    _run(guard, role, sql)


def test_postgres_tool_roles_log_in_as_themselves(pg_url: str, tmp_path) -> None:
    from tests.integration.guard.conftest import make_guard

    guard = make_guard(tmp_path / "data", pg_url)
    try:
        conn = guard.toolbox._conns[ROLE_REEMBOLSO]
        with conn.transaction() as tx:
            tx.execute_sql("SELECT current_user AS u")
            assert tx._cursor.fetchone()["u"] == ROLE_REEMBOLSO
    finally:
        guard.close()
        guard.db.close()


@pytest.mark.parametrize(
    ("role", "sql"), [(r, s) for r, s in ALLOWED if s.startswith("SELECT")], ids=str
)
def test_allowed_reads_run_in_a_read_block(guard: Guard, role: str, sql: str) -> None:
    with guard.toolbox._conns[role].transaction(write=False) as tx:
        tx.execute_sql(sql)
        assert tx._cursor.fetchone() is not None


def test_a_granted_update_is_refused_in_a_read_block(guard: Guard) -> None:
    conn = guard.toolbox._conns[ROLE_REEMBOLSO]
    update = "UPDATE pedidos SET status_reembolso = 'x', valor_reembolsado = 1 WHERE id = '4821'"
    with (
        pytest.raises(StorageError, match="read-only transaction"),
        conn.transaction(write=False) as tx,
    ):
        tx.execute_sql(update)  # granted to the role, refused in a read block
    with guard.db.transaction(write=False) as tx:
        tx.execute_sql("SELECT valor_reembolsado FROM pedidos WHERE id = '4821'")
        assert tx._cursor.fetchone()["valor_reembolsado"] is None
    # The role's connection still writes what it is granted, in a write block.
    with conn.transaction() as tx:
        assert tx.execute_sql(update) == 1


def test_postgres_tool_reads_run_on_their_own_read_only_session(pg_url: str, tmp_path) -> None:
    from tests.integration.guard.conftest import make_guard

    guard = make_guard(tmp_path / "data", pg_url)
    try:
        conn = guard.toolbox._conns[ROLE_REEMBOLSO]
        with conn.transaction(write=False) as tx:
            tx.execute_sql("SELECT current_user AS u")
            assert tx._cursor.fetchone()["u"] == ROLE_REEMBOLSO
            # No BEGIN of its own: a statement after a 20 ms one starts its own transaction.
            tx.execute_sql("SELECT pg_sleep(0.02)")
            assert tx.execute_sql("SELECT 1 WHERE now() = statement_timestamp()") == 1
        # A granted UPDATE in a read block: test_a_granted_update_is_refused_in_a_read_block.
    finally:
        guard.close()
        guard.db.close()
