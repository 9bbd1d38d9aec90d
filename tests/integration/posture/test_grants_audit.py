"""``cadencia audit grants`` against real PostgreSQL: clean after migrate, each drift named.

Drift inside one database (table, column, other-table grants, ownership, default
privileges, PUBLIC) runs on the shared test server's per-test database. Drift that is
cluster-wide (role membership, role attributes, a missing role) runs on the private
cluster from ``test_teardown``: on the shared server it would change what every other
test's tool roles may do.
"""

from __future__ import annotations

import json
from pathlib import Path

import psycopg
import pytest

from backend.cli import main
from backend.erp.grants import ROLE_CADASTRO, ROLE_CONSULTA, ROLE_REEMBOLSO
from backend.posture.grants_audit import audit_grants
from tests.integration.posture import test_teardown as _cluster

# The private-cluster fixtures (cluster-wide role changes must not touch the shared server).
private_cluster = _cluster.private_cluster
private_db = _cluster.private_db


ONLY_HERE = "--this-database-only"
"""On the shared test server every test's database is another one the tool roles may
reach; what they may do in other databases is audited on the private cluster below."""


def _migrate(url: str, data_dir: Path) -> None:
    assert main(["db", "migrate", "--database", url, "--data-dir", str(data_dir)]) == 0


def _audit(url: str, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, list[str]]:
    capsys.readouterr()
    code = main(["audit", "grants", "--database", url, *extra])
    lines = capsys.readouterr().out.splitlines()
    return code, [line for line in lines if line.startswith(("EXTRA:", "MISSING:"))]


def _sql(url: str, statement: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(statement)


def test_after_migrate_the_audit_passes_and_prints_each_role(
    pg_url: str, data_dir: Path, capsys
) -> None:
    _migrate(pg_url, data_dir)
    capsys.readouterr()
    assert main(["audit", "grants", "--database", pg_url, ONLY_HERE]) == 0
    out = capsys.readouterr().out
    assert "audit grants: pass" in out
    for role in (ROLE_CONSULTA, ROLE_REEMBOLSO, ROLE_CADASTRO):
        assert f"{role} — LOGIN" in out
    assert "SELECT (id, valor_pedido)" in out  # the \dp-like column privileges

    assert main(["audit", "grants", "--database", pg_url, "--json", ONLY_HERE]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["verdict"] == "pass"
    assert report["drifts"] == []
    assert report["drift"] == {"status": "pass", "findings": []}
    assert report["exposure"]["status"] == "skipped"  # --this-database-only


DRIFTS = [
    (
        f"GRANT UPDATE ON pedidos TO {ROLE_CONSULTA}",
        f"EXTRA: {ROLE_CONSULTA} has UPDATE on pedidos",
    ),
    (
        f"GRANT SELECT (nome) ON clientes TO {ROLE_CADASTRO}",
        f"EXTRA: {ROLE_CADASTRO} has SELECT(nome) on clientes",
    ),
    (
        f"GRANT UPDATE (valor_pedido) ON pedidos TO {ROLE_REEMBOLSO}",
        f"EXTRA: {ROLE_REEMBOLSO} has UPDATE(valor_pedido) on pedidos",
    ),
    (
        f"REVOKE SELECT (id) ON clientes FROM {ROLE_CADASTRO}",
        f"MISSING: {ROLE_CADASTRO} lacks SELECT(id) on clientes",
    ),
    (
        f"REVOKE SELECT ON pedidos FROM {ROLE_CONSULTA}",
        f"MISSING: {ROLE_CONSULTA} lacks SELECT on pedidos",
    ),
    (
        f"GRANT SELECT ON ledger_records TO {ROLE_CONSULTA}",
        f"EXTRA: {ROLE_CONSULTA} has SELECT on ledger_records",
    ),
    (
        f"GRANT SELECT (chave) ON ledger_records TO {ROLE_REEMBOLSO}",
        f"EXTRA: {ROLE_REEMBOLSO} has SELECT(chave) on ledger_records",
    ),
    (
        f"GRANT USAGE ON SEQUENCE events_id_seq TO {ROLE_CONSULTA}",
        f"EXTRA: {ROLE_CONSULTA} has USAGE on sequence events_id_seq",
    ),
    (
        f"GRANT CREATE ON SCHEMA public TO {ROLE_CADASTRO}",
        f"EXTRA: {ROLE_CADASTRO} has CREATE on schema public",
    ),
    (f"ALTER TABLE events OWNER TO {ROLE_CONSULTA}", f"EXTRA: {ROLE_CONSULTA} owns table events"),
    (
        f"ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT ON TABLES TO {ROLE_CONSULTA}",
        f"grant SELECT on new tables to {ROLE_CONSULTA}",
    ),
    (
        f"GRANT SELECT ON pedidos TO {ROLE_CONSULTA} WITH GRANT OPTION",
        f"EXTRA: {ROLE_CONSULTA} has SELECT on pedidos WITH GRANT OPTION",
    ),
    (
        "GRANT SELECT ON clientes TO PUBLIC",
        "EXTRA: PUBLIC has SELECT on clientes (every tool role inherits it)",
    ),
]


@pytest.mark.parametrize(("statement", "expected"), DRIFTS, ids=[d[0] for d in DRIFTS])
def test_each_kind_of_drift_fails_the_audit_naming_it(
    pg_url: str, data_dir: Path, capsys, statement: str, expected: str
) -> None:
    _migrate(pg_url, data_dir)
    _sql(pg_url, statement)
    code, drifts = _audit(pg_url, capsys, ONLY_HERE)
    assert code == 1
    assert any(expected in line for line in drifts), drifts
    # Nothing else is blamed (ownership of a table also moves its serial's sequence).
    assert all("events_id_seq" in line or expected in line for line in drifts), drifts


def test_table_grant_implied_columns_are_not_reported_as_column_grants(
    pg_url: str, data_dir: Path
) -> None:
    """information_schema.column_privileges would list every column of a table grant."""
    _migrate(pg_url, data_dir)
    _sql(pg_url, f"GRANT SELECT ON clientes TO {ROLE_CADASTRO}")
    report = audit_grants(pg_url, other_databases=False)
    assert [d.line() for d in report.drifts] == [f"EXTRA: {ROLE_CADASTRO} has SELECT on clientes"]


def test_migrate_repairs_spec_table_drift(pg_url: str, data_dir: Path) -> None:
    _migrate(pg_url, data_dir)
    _sql(pg_url, f"GRANT DELETE ON pedidos TO {ROLE_CONSULTA}")
    assert audit_grants(pg_url, other_databases=False).verdict == "fail"
    _migrate(pg_url, data_dir)
    assert audit_grants(pg_url, other_databases=False).verdict == "pass"


def test_sqlite_has_nothing_live_to_audit(tmp_path: Path, capsys) -> None:
    assert main(["audit", "grants", "--database", f"sqlite:///{tmp_path / 's.db'}"]) == 2
    assert "authorizer" in capsys.readouterr().err


CLUSTER_DRIFTS = [
    (
        f"GRANT pg_write_all_data TO {ROLE_REEMBOLSO}",
        f"EXTRA: {ROLE_REEMBOLSO} is a member of pg_write_all_data",
    ),
    (
        f"GRANT pg_read_all_data TO {ROLE_CADASTRO}",
        f"EXTRA: {ROLE_CADASTRO} is a member of pg_read_all_data",
    ),
    (f"ALTER ROLE {ROLE_CONSULTA} CREATEDB", f"EXTRA: {ROLE_CONSULTA} has attribute CREATEDB"),
    (f"ALTER ROLE {ROLE_CONSULTA} BYPASSRLS", f"EXTRA: {ROLE_CONSULTA} has attribute BYPASSRLS"),
    (f"ALTER ROLE {ROLE_CADASTRO} NOLOGIN", f"MISSING: {ROLE_CADASTRO} lacks LOGIN"),
    (
        f"DROP OWNED BY {ROLE_CADASTRO}; DROP ROLE {ROLE_CADASTRO}",
        f"MISSING: role {ROLE_CADASTRO} does not exist (run cadencia db migrate)",
    ),
]


@pytest.mark.parametrize(
    ("statement", "expected"), CLUSTER_DRIFTS, ids=[d[0] for d in CLUSTER_DRIFTS]
)
def test_cluster_wide_drift_fails_the_audit_naming_it(
    private_db: str, data_dir: Path, capsys, statement: str, expected: str
) -> None:
    _migrate(private_db, data_dir)
    assert _audit(private_db, capsys) == (0, [])
    _sql(private_db, statement)
    assert _audit(private_db, capsys) == (1, [expected])


def test_rds_iam_membership_is_allowed(private_db: str, data_dir: Path, capsys) -> None:
    _sql(
        private_db,
        "DO $$BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'rds_iam') "
        "THEN CREATE ROLE rds_iam; END IF; END$$",
    )
    assert (
        main(["db", "migrate", "--database", private_db, "--data-dir", str(data_dir), "--iam-auth"])
        == 0
    )
    assert "rds_iam granted" in capsys.readouterr().out
    with psycopg.connect(private_db) as conn:
        members = conn.execute(
            "SELECT m.rolname FROM pg_auth_members a JOIN pg_roles m ON m.oid = a.member "
            "JOIN pg_roles r ON r.oid = a.roleid WHERE r.rolname = 'rds_iam' ORDER BY 1"
        ).fetchall()
    assert [m[0] for m in members] == sorted((ROLE_CADASTRO, ROLE_CONSULTA, ROLE_REEMBOLSO))
    assert _audit(private_db, capsys) == (0, [])


def _on_this_database(statement: str) -> str:
    """``statement`` with ``{db}`` as this database's name (DDL takes no parameters)."""
    return (
        f"DO $$BEGIN EXECUTE format('{statement.replace('{db}', '%I')}', current_database()); END$$"
    )


DATABASE_DRIFTS = [
    (f"ALTER ROLE {ROLE_CONSULTA} INHERIT", [f"EXTRA: {ROLE_CONSULTA} has attribute INHERIT"]),
    (
        f"ALTER ROLE {ROLE_CADASTRO} CREATEROLE",
        [f"EXTRA: {ROLE_CADASTRO} has attribute CREATEROLE"],
    ),
    (
        _on_this_database("GRANT TEMPORARY ON DATABASE {db} TO PUBLIC"),
        [
            f"EXTRA: {r} can create temporary tables in database"
            for r in (ROLE_CONSULTA, ROLE_REEMBOLSO, ROLE_CADASTRO)
        ],
    ),
    (
        _on_this_database(f"REVOKE CONNECT ON DATABASE {{db}} FROM {ROLE_CADASTRO}"),
        [f"MISSING: {ROLE_CADASTRO} lacks CONNECT on database"],
    ),
    (
        f"GRANT CONNECT ON DATABASE postgres TO {ROLE_REEMBOLSO}",
        [f"EXTRA: {ROLE_REEMBOLSO} can CONNECT to database postgres by a grant of its own"],
    ),
    (
        "GRANT EXECUTE ON FUNCTION events_order_barrier() TO PUBLIC",
        [
            f"EXTRA: {r} can EXECUTE function events_order_barrier() through PUBLIC"
            for r in (ROLE_CONSULTA, ROLE_REEMBOLSO, ROLE_CADASTRO)
        ],
    ),
]


@pytest.mark.parametrize(
    ("statement", "expected"), DATABASE_DRIFTS, ids=[d[0][:60] for d in DATABASE_DRIFTS]
)
def test_database_function_and_attribute_drift_fails_the_audit_naming_it(
    private_cluster: str,
    private_db: str,
    data_dir: Path,
    capsys,
    statement: str,
    expected: list[str],
) -> None:
    _migrate(private_db, data_dir)
    assert _audit(private_db, capsys) == (0, [])
    _sql(private_db, statement)
    try:
        code, drifts = _audit(private_db, capsys)
        assert code == 1
        assert len(drifts) == len(expected), drifts
        for want, line in zip(expected, drifts, strict=True):
            assert line.startswith(want), drifts
    finally:  # the cluster's own databases are shared by every test on it
        _sql(
            private_cluster, "REVOKE CONNECT, TEMPORARY ON DATABASE postgres, template1 FROM PUBLIC"
        )
        _sql(private_cluster, f"REVOKE ALL ON DATABASE postgres FROM {ROLE_REEMBOLSO}")


def test_connect_through_public_elsewhere_is_exposure_not_drift(
    private_cluster: str, private_db: str, data_dir: Path, capsys
) -> None:
    """PUBLIC's CONNECT on another database: exit 3, each role named with the fix."""
    _migrate(private_db, data_dir)
    _sql(private_cluster, "GRANT CONNECT ON DATABASE template1 TO PUBLIC")
    try:
        capsys.readouterr()
        code = main(["audit", "grants", "--database", private_db])
        lines = capsys.readouterr().out.splitlines()
        exposed = [line for line in lines if line.startswith("EXPOSED:")]
        assert code == 3
        assert [line for line in lines if line.startswith(("EXTRA:", "MISSING:"))] == []
        assert [e.split(" (pg_hba.conf")[0] for e in exposed] == [
            f"EXPOSED: {r} can CONNECT to database template1 through PUBLIC"
            for r in sorted((ROLE_CONSULTA, ROLE_REEMBOLSO, ROLE_CADASTRO))
        ]
        assert all("(fix: cadencia db confine --database " in e for e in exposed)
        assert main(["audit", "grants", "--database", private_db, ONLY_HERE]) == 0
        assert _audit(private_db, capsys, "--json")[0] == 3
    finally:
        _sql(private_cluster, "REVOKE CONNECT, TEMPORARY ON DATABASE template1 FROM PUBLIC")
