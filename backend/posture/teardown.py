"""Tear the deployment down in the seed's order (``limpeza.sh``), then prove it is gone.

Stop the tools' logins, drop their roles, drop the ledger, then verify that no tool role,
grant or ledger is left (:func:`run_teardown` lists the steps). A role holding privileges
in another database blocks the plan before anything changes, unless ``all_databases``
asks to clean those too. The statements are named queries in
``sql/<dialect>/admin_queries.sql``.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlparse

from pydantic import BaseModel

from backend.erp.grants import DEFAULT_ROLE_PREFIX, tool_roles
from backend.exceptions import ConfigError
from backend.redact import redact_url
from backend.store.queries import composed, query

LEDGER_TABLES = ("ledger_records", "ledger_counters")
_PG = ("postgresql", "postgres")


def _roles(prefix: str) -> dict[str, list[str]]:
    """The deployment's tool roles (``CADENCIA_ROLE_PREFIX``) as a query parameter."""
    return {"roles": list(tool_roles(prefix))}


@dataclass
class LedgerTarget:
    """Where the ledger lives: SQL tables at ``url`` or one DynamoDB table via ``client``."""

    kind: Literal["sql", "dynamodb"]
    url: str
    table: str | None = None
    client: Any = None

    @property
    def label(self) -> str:
        """How the plan names it."""
        if self.kind == "dynamodb":
            return f"DynamoDB table {self.table}"
        return f"SQL tables {', '.join(LEDGER_TABLES)} in {redact_url(self.url)}"


class StepResult(BaseModel):
    """One numbered step and what happened."""

    step: int
    title: str
    status: Literal["planned", "done", "skipped", "failed"]
    details: list[str] = []


class TeardownPlan(BaseModel):
    """What teardown would touch, read before anything changes."""

    database: str
    postgres: bool
    roles_present: list[str]
    sessions: int
    other_databases: dict[str, list[str]]
    """database → tool roles still holding privileges or objects there."""
    ledger: str
    ledger_exists: bool


@dataclass
class TeardownResult:
    """Steps run (in order) and what verification found left behind."""

    steps: list[StepResult] = field(default_factory=list)
    leftovers: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True only if every step ran and nothing is left."""
        return not self.leftovers and all(s.status != "failed" for s in self.steps)


def _pg(url: str) -> Any:
    import psycopg
    from psycopg.rows import dict_row

    return psycopg.connect(url, autocommit=True, row_factory=dict_row)


def _with_dbname(url: str, dbname: str) -> str:
    from psycopg.conninfo import make_conninfo

    return make_conninfo(url, dbname=dbname)


def other_databases(conn: Any, prefix: str = DEFAULT_ROLE_PREFIX) -> dict[str, list[str]]:
    """Databases other than the current one where a tool role holds privileges or objects."""
    out: dict[str, list[str]] = {}
    rows = conn.execute(query("postgres", "roles_in_other_databases"), _roles(prefix)).fetchall()
    for row in rows:
        out.setdefault(row["datname"], []).append(row["rolname"])
    return out


def plan_teardown(
    db_url: str, ledger: LedgerTarget, prefix: str = DEFAULT_ROLE_PREFIX
) -> TeardownPlan:
    """Read the current state; changes nothing."""
    postgres = urlparse(db_url).scheme in _PG
    roles: list[str] = []
    sessions = 0
    others: dict[str, list[str]] = {}
    if postgres:
        with _pg(db_url) as conn:
            rows = conn.execute(query("postgres", "roles_present"), _roles(prefix))
            roles = sorted(r["rolname"] for r in rows.fetchall())
            sessions = conn.execute(query("postgres", "role_sessions"), _roles(prefix))
            sessions = sessions.fetchone()["n"]
            others = other_databases(conn, prefix)
    return TeardownPlan(
        database=redact_url(db_url),
        postgres=postgres,
        roles_present=[r for r in tool_roles(prefix) if r in roles],
        sessions=sessions,
        other_databases=others,
        ledger=ledger.label,
        ledger_exists=bool(ledger_leftovers(ledger)),
    )


def stop_tools(db_url: str, roles: list[str]) -> StepResult:
    """Step 1: no new logins for the tool roles, and their open sessions terminated."""
    step = StepResult(step=1, title="stop using the tools", status="done")
    with _pg(db_url) as conn:
        for role in roles:
            conn.execute(composed("role_nologin", role=role))
            step.details.append(query("postgres", "role_nologin").format(role=role))
        terminate = query("postgres", "role_sessions_terminate")
        sessions = query("postgres", "role_sessions")
        killed = conn.execute(terminate, {"roles": roles}).fetchone()["n"]
        # pg_terminate_backend only signals; wait (briefly) until the sessions are gone.
        deadline = time.monotonic() + 5
        while killed and time.monotonic() < deadline:
            left = conn.execute(sessions, {"roles": roles}).fetchone()["n"]
            if not left:
                break
            time.sleep(0.05)
    step.details.append(f"terminated {killed} open session(s)")
    return step


def drop_roles(db_url: str, roles: list[str], other_dbs: list[str]) -> StepResult:
    """Step 2: revoke everything the roles hold (here and in ``other_dbs``), then drop them."""
    import psycopg

    step = StepResult(step=2, title="revoke and drop the tool roles", status="done")
    owned = composed("roles_drop_owned", roles=roles)
    try:
        for name in other_dbs:
            with _pg(_with_dbname(db_url, name)) as conn:
                conn.execute(owned)
            step.details.append(f"{name}: REASSIGN OWNED + DROP OWNED")
        with _pg(db_url) as conn, conn.transaction():
            conn.execute(owned)
            step.details.append("REASSIGN OWNED BY … TO CURRENT_USER; DROP OWNED BY …")
            for role in roles:
                conn.execute(composed("role_drop", role=role))
                step.details.append(query("postgres", "role_drop").format(role=role))
    except psycopg.Error as exc:
        step.status = "failed"
        step.details.append("failed: " + " ".join(str(exc).split()))
        with _pg(db_url) as conn:
            for name, holders in other_databases(conn).items():
                step.details.append(
                    f"database {name} still holds privileges or objects of {', '.join(holders)}: "
                    f"run teardown with --all-databases, or DROP OWNED BY those roles in {name}"
                )
    return step


def drop_ledger(ledger: LedgerTarget) -> StepResult:
    """Step 3: the ledger table(s), whichever backend holds them."""
    from backend.exceptions import LedgerError

    step = StepResult(step=3, title=f"drop the ledger ({ledger.label})", status="done")
    try:
        if ledger.kind == "dynamodb":
            from backend.ledger.dynamodb import drop_table

            assert ledger.table is not None
            existed = drop_table(ledger.client, ledger.table)
            if existed:
                ledger.client.get_waiter("table_not_exists").wait(
                    TableName=ledger.table, WaiterConfig={"Delay": 1, "MaxAttempts": 120}
                )
            step.details.append(f"DeleteTable {ledger.table}" if existed else "table did not exist")
        else:
            if urlparse(ledger.url).scheme in _PG:
                statements = [query("postgres", "ledger_drop_tables")]
                with _pg(ledger.url) as conn:
                    conn.execute(statements[0])
            else:
                names = ("ledger_drop_records", "ledger_drop_counters")
                statements = [query("sqlite", n) for n in names]
                _sqlite_exec(ledger.url, statements)
            step.details += statements
    except (LedgerError, Exception) as exc:
        step.status = "failed"
        step.details.append(f"failed: {exc}")
    return step


def _sqlite_exec(url: str, statements: list[str]) -> list[Any]:
    from backend.store.db import sqlite_path

    conn = sqlite3.connect(sqlite_path(url))
    try:
        rows: list[Any] = []
        for s in statements:
            rows += conn.execute(s).fetchall()
        conn.commit()
        return rows
    finally:
        conn.close()


def ledger_leftovers(ledger: LedgerTarget) -> list[str]:
    """What of the ledger still exists (empty when it is gone)."""
    if ledger.kind == "dynamodb":
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            desc = ledger.client.describe_table(TableName=ledger.table)
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") == "ResourceNotFoundException":
                return []  # the success case: the table is gone
            return [f"cannot verify DynamoDB table {ledger.table}: {exc}"]
        except BotoCoreError as exc:
            return [f"cannot verify DynamoDB table {ledger.table}: {exc}"]
        status = desc.get("Table", {}).get("TableStatus", "?")
        return [f"DynamoDB table {ledger.table} still exists (status {status})"]
    if urlparse(ledger.url).scheme in _PG:
        with _pg(ledger.url) as conn:
            rows = conn.execute(
                query("postgres", "ledger_tables_present"), {"tables": list(LEDGER_TABLES)}
            ).fetchall()
        found = [r["t"] for r in rows]
    else:
        from backend.store.db import sqlite_path

        if not sqlite_path(ledger.url).exists():
            return []
        conn = sqlite3.connect(sqlite_path(ledger.url))
        try:
            present = query("sqlite", "ledger_tables_present")
            tables = {"tables": json.dumps(LEDGER_TABLES)}
            found = [r[0] for r in conn.execute(present, tables)]
        finally:
            conn.close()
    return [f"ledger table {t} still exists in {redact_url(ledger.url)}" for t in found]


def verify_teardown(
    db_url: str, ledger: LedgerTarget, prefix: str = DEFAULT_ROLE_PREFIX
) -> list[str]:
    """Step 4: every tool role, grant or ledger table still present (empty = clean)."""
    left: list[str] = []
    if urlparse(db_url).scheme in _PG:
        with _pg(db_url) as conn:
            rows = conn.execute(query("postgres", "roles_left"), _roles(prefix)).fetchall()
            others = other_databases(conn, prefix)
        for r in rows:
            login = "can still log in" if r["rolcanlogin"] else "NOLOGIN"
            left.append(f"role {r['rolname']} still exists ({login})")
            if r["here"]:
                left.append(
                    f"role {r['rolname']} still holds {r['here']} grant(s) or object(s) "
                    "in this database"
                )
        for name, holders in others.items():
            left.append(f"database {name} still holds grants or objects of {', '.join(holders)}")
    return left + ledger_leftovers(ledger)


def run_teardown(
    db_url: str,
    ledger: LedgerTarget,
    *,
    all_databases: bool = False,
    on_step: Callable[[StepResult], None] = lambda _s: None,
    prefix: str = DEFAULT_ROLE_PREFIX,
) -> TeardownResult:
    """Steps 1–4 in order; stops before changing anything when other databases block it.

    1. stop using the tools: ``ALTER ROLE … NOLOGIN`` and terminate their sessions;
    2. revoke and drop the three roles: ``REASSIGN OWNED`` / ``DROP OWNED`` / ``DROP ROLE``;
    3. drop the ledger: the DynamoDB table, or the SQL tables ``ledger_records`` and
       ``ledger_counters``;
    4. verify: any tool role, grant or ledger left is a failure. For DynamoDB the check is
       ``DescribeTable``, and ``ResourceNotFoundException`` is the success case (the seed's
       ``scan … Count`` returning 0 would mean the table is still there).

    Roles are cluster-wide but ``DROP OWNED`` only reaches the current database: a role
    holding privileges in another database cannot be dropped. The plan finds those databases
    (``pg_shdepend``) before anything changes, and teardown refuses to start, naming them,
    unless ``all_databases`` asks it to clean them too.
    """
    result = TeardownResult()

    def record(step: StepResult) -> None:
        result.steps.append(step)
        on_step(step)

    plan = plan_teardown(db_url, ledger, prefix)
    if plan.other_databases and not all_databases:
        names = ", ".join(sorted(plan.other_databases))
        message = (
            f"the tool roles also hold privileges or objects in: {names}; DROP ROLE would fail. "
            "Nothing was changed. Re-run with --all-databases to revoke them there too, or run "
            "`DROP OWNED BY <role>` in each of those databases first."
        )
        record(StepResult(step=0, title="preflight", status="failed", details=[message]))
        return result
    if plan.postgres and plan.roles_present:
        record(stop_tools(db_url, plan.roles_present))
        dropped = drop_roles(db_url, plan.roles_present, sorted(plan.other_databases))
        if dropped.status == "failed":
            dropped.details.append(
                "the roles are NOLOGIN now; `cadencia db migrate` gives them LOGIN back "
                "if you keep them"
            )
        record(dropped)
    else:
        why = "no tool roles exist" if plan.postgres else "SQLite has no login roles"
        record(StepResult(step=1, title="stop using the tools", status="skipped", details=[why]))
        record(
            StepResult(
                step=2, title="revoke and drop the tool roles", status="skipped", details=[why]
            )
        )
    if any(s.status == "failed" for s in result.steps):
        # The seed's order matters: the ledger goes only after the roles are gone, so a
        # re-run after fixing the cause finds everything where the failed run left it.
        record(
            StepResult(
                step=3,
                title=f"drop the ledger ({ledger.label})",
                status="skipped",
                details=["an earlier step failed"],
            )
        )
    else:
        record(drop_ledger(ledger))
    result.leftovers = verify_teardown(db_url, ledger, prefix)
    record(
        StepResult(
            step=4,
            title="verify nothing is left",
            status="failed" if result.leftovers else "done",
            details=result.leftovers or ["no tool role, grant or ledger table remains"],
        )
    )
    return result


def ledger_target(ledger_url: str, settings: Any) -> LedgerTarget:
    """Resolve a ledger URL (``sqlite://``, ``postgresql://``, ``dynamodb://``) for teardown."""
    scheme = urlparse(ledger_url).scheme
    if scheme in (*_PG, "sqlite"):
        return LedgerTarget(kind="sql", url=ledger_url)
    if scheme == "dynamodb":
        from backend.ledger.factory import dynamodb_client, parse_dynamodb_url

        table, kwargs = parse_dynamodb_url(ledger_url, settings)
        return LedgerTarget(
            kind="dynamodb", url=ledger_url, table=table, client=dynamodb_client(kwargs)
        )
    raise ConfigError(f"unsupported ledger URL scheme {scheme!r}", url=ledger_url)
