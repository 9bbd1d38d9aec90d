"""``db migrate`` → ``db confine`` → ``audit grants`` on a PostgreSQL cluster of this module's own.

``db confine`` revokes PUBLIC's CONNECT on ``postgres`` and ``template1`` and the shared-mode
test rewrites ``pg_hba.conf``: on the shared test clusters that would change what every other
test may do. So the module starts a Debian postgresql-15 cluster of its own
(``scripts/start-postgres.sh``, a unique name and a free port) and drops it at the end; each
test puts the cluster back as stock (PUBLIC CONNECT, the original ``pg_hba.conf``).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

import psycopg
import pytest
from psycopg import sql

from backend.cli import main
from backend.erp.grants import ROLE_CONSULTA, TOOL_ROLES
from tests.ci import require

pytestmark = pytest.mark.postgres

REPO = Path(__file__).resolve().parents[3]
SYSTEM_DBS = ("postgres", "template1")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    """Admin URL (superuser ``cadencia_admin``) of a cluster started for this module."""
    require(
        os.geteuid() == 0 and shutil.which("pg_ctlcluster") is not None,
        "Debian's postgresql-15 as root (pg_ctlcluster, scripts/start-postgres.sh)",
    )
    name = f"confine_{uuid.uuid4().hex[:8]}"
    env = os.environ | {
        "CADENCIA_TEST_PG_CLUSTER": name,
        "CADENCIA_TEST_PG_PORT": str(_free_port()),
    }
    run = subprocess.run(
        ["bash", "--", str(REPO / "scripts" / "start-postgres.sh")],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    try:
        assert run.returncode == 0, run.stderr
        admin = _with_db(run.stdout.strip(), "postgres")
        _sql(admin, "DROP DATABASE cadencia_test")  # the script's; the tests make their own
        yield admin
    finally:
        subprocess.run(["pg_dropcluster", "--stop", "15", name], capture_output=True, check=False)


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One data dir for the module: the tool roles are cluster-wide, so are their passwords."""
    return tmp_path_factory.mktemp("confine-data")


def _with_db(url: str, name: str) -> str:
    return urlunsplit(urlsplit(url)._replace(path="/" + quote(name, safe="")))


def _sql(url: str, statement: str | sql.Composable) -> list[tuple[Any, ...]]:
    with psycopg.connect(url, autocommit=True) as conn:
        cur = conn.execute(statement.encode() if isinstance(statement, str) else statement)
        return cur.fetchall() if cur.description else []


def _acl(url: str) -> list[tuple[Any, ...]]:
    return _sql(url, "SELECT datname, datacl::text FROM pg_database ORDER BY 1")


@pytest.fixture
def stock(cluster: str) -> Iterator[str]:
    """The cluster as a fresh install leaves it; put back after the test."""
    hba = Path(_sql(cluster, "SHOW hba_file")[0][0])
    saved = hba.read_text()
    yield cluster
    hba.write_text(saved)
    _sql(cluster, "SELECT pg_reload_conf()")
    with psycopg.connect(cluster, autocommit=True) as conn:
        for (db,) in conn.execute(
            "SELECT datname FROM pg_database WHERE datname NOT IN "
            "('postgres', 'template0', 'template1')"
        ).fetchall():
            conn.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(db)))
        for (role,) in conn.execute(
            "SELECT rolname FROM pg_roles WHERE rolname LIKE 'cf\\_%'"
        ).fetchall():
            conn.execute(sql.SQL("DROP OWNED BY {0}; DROP ROLE {0}").format(sql.Identifier(role)))
        conn.execute("GRANT CONNECT, TEMPORARY ON DATABASE postgres, template1 TO PUBLIC")
        conn.execute(
            sql.SQL("REVOKE ALL ON DATABASE postgres, template1 FROM {}").format(
                sql.SQL(", ").join(sql.Identifier(r) for r in TOOL_ROLES)
            )
        )


def _erp(admin: str, name: str) -> str:
    _sql(admin, sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    return _with_db(admin, name)


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(list(argv))
    return code, capsys.readouterr().out


def _migrate(url: str, data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _cli(capsys, "db", "migrate", "--database", url, "--data-dir", str(data_dir))[0] == 0


def _audit(url: str, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str]:
    return _cli(capsys, "audit", "grants", "--database", url, *extra)


def _confine(url: str, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str]:
    return _cli(capsys, "db", "confine", "--database", url, *extra)


def _login(url: str, data_dir: Path, role: str, dbname: str) -> str:
    """``ok``, or the server's reason for refusing ``role`` on ``dbname`` (over TCP)."""
    password = (data_dir / "secrets" / f"db__{role}").read_text()
    parts = urlsplit(url)
    try:
        with psycopg.connect(
            host=parts.hostname, port=parts.port, dbname=dbname, user=role, password=password
        ):
            return "ok"
    except psycopg.OperationalError as exc:
        return str(exc)


NAMES = ["erp_plain", 'erp "quoted"; DROP DATABASE postgres; --']


@pytest.mark.parametrize("name", NAMES, ids=["plain", "quote"])
def test_migrate_then_confine_then_audit_passes(
    stock: str, data_dir: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    url = _erp(stock, name)
    _migrate(url, data_dir, capsys)

    code, out = _audit(url, capsys)
    assert code == 3, out  # exposure only: no drift from the spec
    for db in SYSTEM_DBS:
        assert f"EXPOSED: {ROLE_CONSULTA} can CONNECT to database {db} through PUBLIC" in out
    assert "fix: cadencia db confine --database postgresql://cadencia_admin@" in out
    assert "cadencia-test" not in out  # the fix never prints the password
    code, out = _audit(url, capsys, "--json")
    report = json.loads(out)
    assert (report["drift"]["status"], report["exposure"]["status"]) == ("pass", "fail")
    assert _login(url, data_dir, ROLE_CONSULTA, "postgres") == "ok"

    before = _acl(stock)
    code, out = _confine(url, capsys, "--dry-run")
    assert code == 0
    assert 'REVOKE CONNECT ON DATABASE "postgres" FROM PUBLIC;' in out
    assert _acl(stock) == before  # a dry run changes nothing

    code, out = _confine(url, capsys)
    assert code == 0, out
    assert "mode: owned cluster" in out  # a superuser, no other login role: detected
    assert "changes (2, ran" in out
    assert _acl(stock) != before

    code, out = _audit(url, capsys)
    assert code == 0, out
    assert "audit grants: pass" in out
    assert "permission denied for database" in _login(url, data_dir, ROLE_CONSULTA, "postgres")
    assert _login(url, data_dir, ROLE_CONSULTA, name) == "ok"
    assert _sql(_with_db(stock, "postgres"), "SELECT current_user") == [("cadencia_admin",)]

    confined = _acl(stock)
    code, out = _confine(url, capsys)
    assert (code, _acl(stock)) == (0, confined)
    assert "changes: none" in out  # idempotent


def test_drift_and_exposure_have_different_exit_codes(
    stock: str, data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = _erp(stock, "erp_drift")
    _migrate(url, data_dir, capsys)
    _sql(url, f"GRANT UPDATE ON pedidos TO {ROLE_CONSULTA}")

    code, out = _audit(url, capsys, "--json")
    report = json.loads(out)
    assert code == 1  # drift, whatever the exposure
    assert (report["drift"]["status"], report["exposure"]["status"]) == ("fail", "fail")
    assert [d["message"] for d in report["drift"]["findings"]] == [
        f"{ROLE_CONSULTA} has UPDATE on pedidos"
    ]

    assert _confine(url, capsys)[0] == 0
    code, out = _audit(url, capsys)
    assert code == 1
    assert "cluster exposure: pass" in out
    assert f"EXTRA: {ROLE_CONSULTA} has UPDATE on pedidos" in out
    _sql(url, f"REVOKE UPDATE ON pedidos FROM {ROLE_CONSULTA}")
    assert _audit(url, capsys)[0] == 0

    _sql(stock, f"GRANT CONNECT ON DATABASE postgres TO {ROLE_CONSULTA}")
    code, out = _audit(url, capsys)  # its own grant elsewhere is drift, not exposure
    assert code == 1
    assert f"EXTRA: {ROLE_CONSULTA} can CONNECT to database postgres by a grant of its own" in out
    assert _audit(url, capsys, "--this-database-only")[0] == 0
    assert _confine(url, capsys)[0] == 0  # confining also takes that grant back
    assert _audit(url, capsys)[0] == 0


def test_other_roles_keep_their_access_and_a_shared_cluster_is_not_guessed(
    stock: str, data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = _erp(stock, "erp_others")
    _migrate(url, data_dir, capsys)
    _sql(stock, "CREATE ROLE cf_team LOGIN CREATEDB PASSWORD 'team-pw'")
    before = _acl(stock)

    code, out = _confine(url, capsys)  # another team's role: treated as shared
    assert code == 0
    assert "mode: shared cluster — other login roles use this cluster (cf_team)" in out
    assert _acl(stock) == before

    code, out = _confine(url, capsys, "--owned-cluster")
    assert code == 0, out
    assert 'GRANT CONNECT ON DATABASE "postgres" TO "cf_team";' in out
    team = urlsplit(stock)._replace(
        netloc=f"cf_team:team-pw@{urlsplit(stock).netloc.split('@')[1]}"
    )
    with psycopg.connect(_with_db(urlunsplit(team), "postgres"), autocommit=True) as conn:
        conn.execute("CREATE DATABASE cf_team_db")  # createdb: postgres kept, template1 copied
    assert "permission denied" in _login(url, data_dir, ROLE_CONSULTA, "postgres")

    code, out = _audit(url, capsys)  # the team's new database has the default ACL again
    assert code == 3
    assert f"EXPOSED: {ROLE_CONSULTA} can CONNECT to database cf_team_db" in out
    assert _confine(url, capsys, "--owned-cluster")[0] == 0
    assert _audit(url, capsys)[0] == 0
    assert "changes: none" in _confine(url, capsys, "--owned-cluster")[1]


def _hba_lines(out: str) -> list[str]:
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("pg_hba.conf"))
    return [line.strip() for line in lines[start + 1 : start + 4]]


@pytest.mark.parametrize("name", NAMES, ids=["plain", "quote"])
def test_shared_cluster_prints_pg_hba_lines_that_confine_the_roles(
    stock: str, data_dir: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    url = _erp(stock, name)
    _migrate(url, data_dir, capsys)
    before = _acl(stock)

    code, out = _confine(url, capsys, "--shared-cluster")
    assert code == 0
    assert _acl(stock) == before  # nothing changed cluster-wide
    assert "ABOVE any broader line" in out
    assert "SELECT pg_reload_conf();" in out
    assert "pg_ctlcluster 15 confine_" in out
    lines = _hba_lines(out)
    roles = ",".join(TOOL_ROLES)
    assert lines[1].split() == ["host", "all", roles, "all", "reject"]
    assert lines[2].split() == ["local", "all", roles, "reject"]
    assert lines[0].startswith("host")
    assert lines[0].endswith("127.0.0.1/32   scram-sha-256")

    hba = Path(_sql(stock, "SHOW hba_file")[0][0])
    hba.write_text("\n".join(lines) + "\n" + hba.read_text())  # above every stock line
    _sql(stock, "SELECT pg_reload_conf()")
    deadline = time.monotonic() + 10
    while "pg_hba.conf rejects" not in _login(url, data_dir, ROLE_CONSULTA, "postgres"):
        assert time.monotonic() < deadline, "the reload never took effect"
        time.sleep(0.2)
    assert "pg_hba.conf rejects" in _login(url, data_dir, ROLE_CONSULTA, "template1")
    assert _login(url, data_dir, ROLE_CONSULTA, name) == "ok"

    code, out = _audit(url, capsys)  # a superuser reads pg_hba_file_rules
    assert code == 0, out
    code, out = _confine(url, capsys, "--shared-cluster")
    assert "already rejects the tool roles" in out
    assert "changes: none" in out


def test_without_superuser_the_exposure_is_unverified_not_passed(
    stock: str, data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = _erp(stock, "erp_unverified")
    _migrate(url, data_dir, capsys)
    _sql(stock, "CREATE ROLE cf_auditor LOGIN PASSWORD 'aud-pw'")
    parts = urlsplit(url)
    auditor = urlunsplit(parts._replace(netloc=f"cf_auditor:aud-pw@{parts.netloc.split('@')[1]}"))

    code, out = _audit(auditor, capsys)
    assert code == 4, out
    assert "not verifiable without superuser" in out
    assert "UNVERIFIED:" in out
    assert "audit grants: not verified" in out
    assert json.loads(_audit(auditor, capsys, "--json")[1])["exposure"]["status"] == "unverified"

    assert _confine(url, capsys, "--owned-cluster")[0] == 0
    assert _audit(auditor, capsys)[0] == 0  # PUBLIC has no CONNECT left: nothing to verify


def test_usage_errors_change_nothing(
    stock: str,
    data_dir: Path,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert main(["db", "confine", "--database", f"sqlite:///{tmp_path / 'x.db'}"]) == 2
    assert "PostgreSQL" in capsys.readouterr().err
    with pytest.raises(SystemExit) as both:
        main(["db", "confine", "--database", stock, "--owned-cluster", "--shared-cluster"])
    assert both.value.code == 2
    before = _acl(stock)
    monkeypatch.setenv("CADENCIA_ROLE_PREFIX", "cf_nobody")
    assert main(["db", "confine", "--database", stock, "--owned-cluster"]) == 2
    assert "run cadencia db migrate first" in capsys.readouterr().err
    assert _acl(stock) == before


def test_a_database_it_cannot_change_is_listed_not_skipped(
    stock: str, data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A non-superuser admin owns the ERP database, not ``postgres`` or ``template1``."""
    url = _erp(stock, "erp_blocked")
    _migrate(url, data_dir, capsys)
    _sql(stock, "CREATE ROLE cf_ops LOGIN PASSWORD 'ops-pw'")
    _sql(stock, "ALTER DATABASE erp_blocked OWNER TO cf_ops")
    parts = urlsplit(url)
    ops = urlunsplit(parts._replace(netloc=f"cf_ops:ops-pw@{parts.netloc.split('@')[1]}"))
    before = _acl(stock)

    code, out = _confine(ops, capsys)  # not guessed as owned: it cannot change them
    assert code == 0
    assert "mode: shared cluster — cf_ops cannot change database(s) postgres, template1" in out
    assert "cannot be checked from here (pg_hba.conf is not verifiable without superuser" in out

    code, out = _confine(ops, capsys, "--owned-cluster")
    assert code == 1
    for db in SYSTEM_DBS:
        assert f"not confined {db}: owned by " in out
    assert _acl(stock) == before
    assert _audit(ops, capsys)[0] == 4  # still reachable; only pg_hba.conf could say more


def test_rds_iam_roles_get_the_rds_note_and_method(
    stock: str,
    data_dir: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url = _erp(stock, "erp_iam")
    _migrate(url, data_dir, capsys)
    code, out = _confine(url, capsys, "--shared-cluster")
    assert "scram-sha-256" in out
    assert "RDS" not in out
    monkeypatch.setenv("CADENCIA_IAM_AUTH", "true")  # what `db migrate --iam-auth` deployed
    code, out = _confine(url, capsys, "--shared-cluster")
    assert code == 0
    lines = _hba_lines(out)
    assert lines[0].endswith("   pam")
    assert "scram-sha-256" not in out
    assert "RDS matches them with its own rules (method pam)" in out


def test_a_refused_change_rolls_every_change_back(
    stock: str,
    data_dir: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``template1``'s row is locked by another session: ``postgres`` must stay as it was."""
    url = _erp(stock, "erp_refused")
    _migrate(url, data_dir, capsys)
    before = _acl(stock)
    monkeypatch.setenv("PGOPTIONS", "-c lock_timeout=300")  # libpq passes it to the server
    with psycopg.connect(stock) as blocker:  # an open transaction holding template1's row
        blocker.execute("GRANT CONNECT ON DATABASE template1 TO PUBLIC")
        capsys.readouterr()
        code = main(["db", "confine", "--database", url, "--owned-cluster"])
        err = capsys.readouterr().err
        blocker.rollback()
    assert code == 1
    assert "nothing changed: PostgreSQL refused" in err
    assert "lock timeout" in err
    assert _acl(stock) == before  # the REVOKE on postgres, run first, was rolled back too
    monkeypatch.delenv("PGOPTIONS")
    assert _confine(url, capsys, "--owned-cluster")[0] == 0
    assert _audit(url, capsys)[0] == 0
