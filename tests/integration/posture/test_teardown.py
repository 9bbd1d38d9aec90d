"""``cadencia teardown`` on real PostgreSQL (a private cluster), SQLite and DynamoDB over HTTP.

Roles are cluster-wide: dropping the tool roles, or giving them a cluster-wide privilege,
on the shared test server would break whoever else is using it at the same moment, and
any other database holding grants to them would block ``DROP ROLE``. So these tests run
on a throwaway cluster of their own (Debian's postgresql-15 ``initdb``), where the only
databases are the tests' own.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from io import StringIO
from pathlib import Path
from typing import Any

import psycopg
import pytest

from backend.cli import main
from backend.erp.grants import ROLE_CADASTRO, ROLE_CONSULTA, TOOL_ROLES
from backend.posture import teardown as td
from backend.settings import load_settings
from tests.conftest import require

REPO = Path(__file__).resolve().parents[3]


def _pg_bin(name: str) -> str | None:
    found = shutil.which(name) or sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))[-1:]
    return found if isinstance(found, str) else (found[0] if found else None)


@pytest.fixture(scope="session")
def private_cluster() -> Iterator[str]:
    """Admin conninfo of a PostgreSQL cluster started for this test session only."""
    initdb, pg_ctl = _pg_bin("initdb"), _pg_bin("pg_ctl")
    require(
        initdb is not None and pg_ctl is not None, "PostgreSQL server binaries (initdb, pg_ctl)"
    )
    assert initdb is not None
    assert pg_ctl is not None
    root = tempfile.mkdtemp(prefix="cadencia-pg-")
    as_user: list[str] = []
    if os.geteuid() == 0:  # initdb refuses to run as root
        shutil.chown(root, user="postgres")
        as_user = ["runuser", "-u", "postgres", "--"]
    data, port = f"{root}/data", str(20000 + uuid.uuid4().int % 20000)
    subprocess.run(
        [*as_user, initdb, "-D", data, "-U", "postgres", "--auth=trust", "--no-sync"],
        check=True,
        capture_output=True,
    )
    subprocess.run(
        [
            *as_user,
            pg_ctl,
            "-D",
            data,
            "-l",
            f"{root}/log",
            "-w",
            "-o",
            f"-p {port} -k {root} -c listen_addresses='' -c fsync=off",
            "start",
        ],
        check=True,
        capture_output=True,
    )
    admin = f"host={root} port={port} user=postgres dbname=postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        # What `cadencia db confine` does on a cluster the deployment owns (README, "Least-
        # privilege posture"): no database but the ERP's lets the tool roles in.
        conn.execute("REVOKE CONNECT, TEMPORARY ON DATABASE postgres, template1 FROM PUBLIC")
    try:
        yield admin
    finally:
        subprocess.run(
            [*as_user, pg_ctl, "-D", data, "-m", "immediate", "stop"],
            check=False,
            capture_output=True,
        )
        shutil.rmtree(root, ignore_errors=True)


def _dsn(admin: str, dbname: str, user: str = "postgres") -> str:
    return psycopg.conninfo.make_conninfo(admin, dbname=dbname, user=user)


def _url(dsn: str) -> str:
    """A postgresql:// URL (what the CLI takes) for a socket conninfo."""
    p = psycopg.conninfo.conninfo_to_dict(dsn)
    return f"postgresql://{p['user']}@/{p['dbname']}?host={p['host']}&port={p['port']}"


def make_db(admin: str) -> str:
    name = f"cadencia_p_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return _url(_dsn(admin, name))


def dbname(url: str) -> str:
    return str(psycopg.conninfo.conninfo_to_dict(url)["dbname"])


def drop_db(admin: str, url: str) -> None:
    """Drop the test database, and the tool roles once no other database holds their grants."""
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{dbname(url)}" WITH (FORCE)')
        for role in TOOL_ROLES:
            # another test database may still use it; its own drop_db removes it then
            with contextlib.suppress(psycopg.errors.DependentObjectsStillExist):
                conn.execute(f"DROP ROLE IF EXISTS {role}")


@pytest.fixture
def private_db(private_cluster: str) -> Iterator[str]:
    """A fresh database (URL) on the private cluster; tool roles dropped afterwards."""
    url = make_db(private_cluster)
    yield url
    drop_db(private_cluster, url)


def migrate_cli(url: str, data_dir: Path, *extra: str) -> int:
    return main(["db", "migrate", "--database", url, "--data-dir", str(data_dir), *extra])


def state(url: str) -> dict[str, Any]:
    """Roles (with LOGIN), the ledger tables and how many ACL entries the roles hold here."""
    with psycopg.connect(url) as conn:
        roles = conn.execute(
            "SELECT rolname, rolcanlogin FROM pg_roles WHERE rolname = ANY(%s) ORDER BY 1",
            (list(TOOL_ROLES),),
        ).fetchall()
        tables = conn.execute(
            "SELECT t FROM unnest(%s::text[]) t WHERE to_regclass(t) IS NOT NULL ORDER BY 1",
            (list(td.LEDGER_TABLES),),
        ).fetchall()
        deps = conn.execute(
            "SELECT count(*) FROM pg_shdepend s JOIN pg_roles r ON r.oid = s.refobjid "
            "WHERE r.rolname = ANY(%s)",
            (list(TOOL_ROLES),),
        ).fetchone()
    return {"roles": roles, "ledger": [t[0] for t in tables], "deps": deps[0] if deps else 0}


def test_teardown_yes_leaves_nothing_and_ends_open_sessions(
    private_db: str, data_dir: Path, capsys
) -> None:
    assert migrate_cli(private_db, data_dir) == 0
    before = state(private_db)
    assert [r[0] for r in before["roles"]] == sorted(TOOL_ROLES)
    assert before["ledger"]
    assert before["deps"]
    tool_session = psycopg.connect(
        _url(private_db).replace("postgres@", f"{ROLE_CONSULTA}@"), autocommit=True
    )
    tool_session.execute("SELECT 1")
    capsys.readouterr()

    assert main(["teardown", "--database", private_db, "--yes"]) == 0

    out = capsys.readouterr().out
    assert state(private_db) == {"roles": [], "ledger": [], "deps": 0}
    assert f"ALTER ROLE {ROLE_CONSULTA} NOLOGIN" in out
    assert "terminated 1 open session(s)" in out
    assert f"DROP ROLE {ROLE_CADASTRO}" in out
    assert "teardown: done" in out
    with pytest.raises(psycopg.OperationalError):
        tool_session.execute("SELECT 1")
    ledger = td.LedgerTarget(kind="sql", url=private_db)
    assert td.verify_teardown(private_db, ledger) == []
    # The roles come back on demand (what every other test relies on).
    assert migrate_cli(private_db, data_dir) == 0
    assert len(state(private_db)["roles"]) == 3


def test_verification_catches_a_leftover_role_grant_and_ledger(
    private_db: str, data_dir: Path
) -> None:
    assert migrate_cli(private_db, data_dir) == 0
    with psycopg.connect(private_db, autocommit=True) as conn:
        conn.execute(f"GRANT SELECT ON ledger_records TO {ROLE_CADASTRO}")
    left = td.verify_teardown(private_db, td.LedgerTarget(kind="sql", url=private_db))
    assert f"role {ROLE_CADASTRO} still exists (can still log in)" in left
    assert any(line.startswith(f"role {ROLE_CADASTRO} still holds") for line in left)
    assert any("ledger table ledger_records still exists" in line for line in left)


def test_another_database_holding_grants_blocks_teardown_before_any_change(
    private_cluster: str, private_db: str, data_dir: Path, capsys
) -> None:
    other = make_db(private_cluster)
    other_name = dbname(other)
    try:
        assert migrate_cli(private_db, data_dir) == 0
        assert migrate_cli(other, data_dir) == 0
        before = state(private_db)
        capsys.readouterr()
        assert main(["teardown", "--database", private_db, "--yes"]) == 1
        out = capsys.readouterr().out
        assert other_name in out
        assert "nothing was changed" in out
        assert "refused" in out
        assert state(private_db) == before  # still LOGIN, ledger still there
        direct = td.run_teardown(private_db, td.LedgerTarget(kind="sql", url=private_db))
        assert not direct.ok
        assert [s.title for s in direct.steps] == ["preflight"]
        assert other_name in direct.steps[0].details[0]
        assert state(private_db) == before

        assert main(["teardown", "--database", private_db, "--yes", "--all-databases"]) == 0
        assert state(private_db)["roles"] == []
        assert state(other)["deps"] == 0
    finally:
        drop_db(private_cluster, other)


def test_a_drop_that_fails_mid_way_is_reported_and_verified(
    private_cluster: str, private_db: str, data_dir: Path, capsys, monkeypatch
) -> None:
    """A grant appearing elsewhere after the preflight: DROP ROLE fails, the step names the db."""
    other = make_db(private_cluster)
    other_name = dbname(other)
    real = td.plan_teardown
    # The preflight misses the other database; the drop and the verification see the truth.
    monkeypatch.setattr(
        td, "plan_teardown", lambda *a: real(*a).model_copy(update={"other_databases": {}})
    )
    try:
        assert migrate_cli(private_db, data_dir) == 0
        assert migrate_cli(other, data_dir) == 0
        capsys.readouterr()
        assert main(["teardown", "--database", private_db, "--yes"]) == 1
        out = capsys.readouterr().out
        assert "FAILED" in out
        assert f"database {other_name} still holds" in out
        assert "--all-databases" in out
        after = state(private_db)
        assert len(after["roles"]) == 3  # one transaction: no role half-dropped
        assert after["ledger"] == sorted(td.LEDGER_TABLES)  # nor the ledger dropped out of order
        assert "role cadencia_agente_consulta still exists (NOLOGIN)" in out
    finally:
        drop_db(private_cluster, other)


def test_dry_run_changes_nothing(private_db: str, data_dir: Path, capsys) -> None:
    assert migrate_cli(private_db, data_dir) == 0
    before = state(private_db)
    capsys.readouterr()
    assert main(["teardown", "--database", private_db, "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "teardown plan" in out
    assert "dry run" in out
    assert "DROP ROLE" in out
    assert state(private_db) == before


def test_without_yes_and_without_a_terminal_it_aborts(private_db: str, data_dir: Path) -> None:
    assert migrate_cli(private_db, data_dir) == 0
    before = state(private_db)
    proc = subprocess.run(
        [sys.executable, "-m", "backend.cli", "teardown", "--database", private_db],
        check=False,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "aborted" in proc.stdout
    assert "--yes" in proc.stdout
    assert state(private_db) == before


class _Tty(StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(("answer", "code"), [("\n", 1), ("n\n", 1), ("y\n", 0)])
def test_confirmation_defaults_to_no(
    private_db: str, data_dir: Path, answer: str, code: int
) -> None:
    from backend.cli import build_parser
    from backend.commands import teardown as cmd

    assert migrate_cli(private_db, data_dir) == 0
    args = build_parser().parse_args(["teardown", "--database", private_db])
    assert cmd.run(args, stdin=_Tty(answer)) == code
    assert (state(private_db)["roles"] == []) is (code == 0)


def test_sqlite_teardown_drops_the_ledger_tables(tmp_path: Path, data_dir: Path) -> None:
    url = f"sqlite:///{tmp_path / 'state.sqlite3'}"
    assert migrate_cli(url, data_dir) == 0
    ledger = td.LedgerTarget(kind="sql", url=url)
    assert len(td.ledger_leftovers(ledger)) == 2
    assert main(["teardown", "--database", url, "--yes"]) == 0
    assert td.ledger_leftovers(ledger) == []


def test_dynamodb_ledger_teardown_describe_not_found_is_success(
    moto_endpoint: str, tmp_path: Path, data_dir: Path, capsys
) -> None:
    from botocore.exceptions import ClientError

    from backend.ledger.dynamodb import create_table
    from backend.ledger.factory import dynamodb_client, parse_dynamodb_url

    table = f"cadencia-agente-execucoes-{uuid.uuid4().hex[:6]}"
    ledger_url = f"dynamodb://{table}?endpoint_url={moto_endpoint}&region=us-east-1"
    settings = load_settings(data_dir=data_dir)
    client = dynamodb_client(parse_dynamodb_url(ledger_url, settings)[1])
    assert create_table(client, table)
    db_url = f"sqlite:///{tmp_path / 'state.sqlite3'}"
    capsys.readouterr()

    assert main(["teardown", "--database", db_url, "--ledger", ledger_url, "--yes"]) == 0

    assert f"DeleteTable {table}" in capsys.readouterr().out
    with pytest.raises(ClientError) as err:
        client.describe_table(TableName=table)
    assert err.value.response["Error"]["Code"] == "ResourceNotFoundException"
    target = td.ledger_target(ledger_url, settings)
    assert td.ledger_leftovers(target) == []
    create_table(client, table)  # a table that is still there is a leftover
    assert td.ledger_leftovers(target) == [f"DynamoDB table {table} still exists (status ACTIVE)"]
    assert main(["teardown", "--database", db_url, "--ledger", ledger_url, "--dry-run"]) == 0
    assert td.ledger_leftovers(target)  # dry run left it alone
