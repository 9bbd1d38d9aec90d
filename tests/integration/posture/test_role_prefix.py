"""Two deployments on one PostgreSQL cluster (issue 16): each has its own tool roles
(``CADENCIA_ROLE_PREFIX``), so neither start re-passwords nor re-grants the other's.

On the shared test server (password authentication: the private cluster trusts every
login, so a reset password would go unnoticed there), with prefixes of this test only.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from backend.cli import main
from backend.erp.connections import ToolConnection
from backend.erp.grants import ROLE_CONSULTA, deployed_role, tool_roles
from backend.erp.roles import credential_fn
from backend.secrets.base import make_secret_store
from backend.settings import load_settings
from backend.store.db import open_database
from tests.conftest import _with_db


@pytest.fixture
def two_deployments(pg_admin_url: str) -> Iterator[list[tuple[str, str]]]:
    """Two fresh databases, each with a prefix of its own; roles dropped afterwards."""
    tag = uuid.uuid4().hex[:8]
    made = [(f"cadencia_r{tag}{i}", f"dep{tag}{i}_agente") for i in "ab"]
    with psycopg.connect(pg_admin_url, autocommit=True) as conn:
        for name, _ in made:
            conn.execute(f'CREATE DATABASE "{name}"')
    yield [(_with_db(pg_admin_url, name), prefix) for name, prefix in made]
    with psycopg.connect(pg_admin_url, autocommit=True) as conn:
        for name, _ in made:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        for _, prefix in made:
            for role in tool_roles(prefix):
                conn.execute(f"DROP ROLE IF EXISTS {role}")


def _migrate(url: str, data_dir: Path, prefix: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CADENCIA_ROLE_PREFIX", prefix)
    assert main(["db", "migrate", "--database", url, "--data-dir", str(data_dir)]) == 0


def test_two_deployments_with_their_own_prefix_both_keep_working(
    two_deployments: list[tuple[str, str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (url_a, prefix_a), (url_b, prefix_b) = two_deployments
    dir_a, dir_b = tmp_path / "a", tmp_path / "b"
    _migrate(url_a, dir_a, prefix_a, monkeypatch)
    _migrate(url_b, dir_b, prefix_b, monkeypatch)
    _migrate(url_a, dir_a, prefix_a, monkeypatch)  # A restarts after B set up its roles

    for url, prefix, data_dir in ((url_a, prefix_a, dir_a), (url_b, prefix_b, dir_b)):
        monkeypatch.setenv("CADENCIA_ROLE_PREFIX", prefix)
        settings = load_settings(data_dir=data_dir, database_url=url)
        db = open_database(url)
        conn = ToolConnection(
            db, ROLE_CONSULTA, credential_fn(settings, make_secret_store(settings), url)
        )
        try:
            with conn.transaction() as tx:
                tx.execute_sql("SELECT current_user AS u, count(*) AS n FROM pedidos")
                row = tx._cursor.fetchone()
            assert row["u"] == deployed_role(ROLE_CONSULTA, prefix)
        finally:
            conn.close()
            db.close()
    # Each deployment's roles are granted only in its own database.
    with psycopg.connect(url_b) as conn:
        assert conn.execute(
            "SELECT has_table_privilege(%s, 'pedidos', 'SELECT')",
            (deployed_role(ROLE_CONSULTA, prefix_a),),
        ).fetchone() == (False,)


def test_teardown_drops_only_its_own_deployments_roles(
    two_deployments: list[tuple[str, str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (url_a, prefix_a), (url_b, prefix_b) = two_deployments
    _migrate(url_a, tmp_path / "a", prefix_a, monkeypatch)
    _migrate(url_b, tmp_path / "b", prefix_b, monkeypatch)
    monkeypatch.setenv("CADENCIA_ROLE_PREFIX", prefix_a)
    args = ["teardown", "--database", url_a, "--data-dir", str(tmp_path / "a"), "--yes"]
    assert main(args) == 0
    with psycopg.connect(url_b) as conn:
        rows = conn.execute(
            "SELECT rolname FROM pg_roles WHERE rolname = ANY(%s) ORDER BY 1",
            ([*tool_roles(prefix_a), *tool_roles(prefix_b)],),
        ).fetchall()
    assert [r[0] for r in rows] == sorted(tool_roles(prefix_b))
