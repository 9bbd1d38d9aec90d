"""``cadencia db migrate``: schema, ERP tables, the three tool login roles and their GRANTs.

Idempotent: a second run applies no migration and leaves roles and privileges exactly as
they were (the command compares a privilege snapshot taken before and after and says so).
Roles are cluster-wide, so on a database where another one already created them they are
reused; their grants in *this* database are rendered from the grants spec.
``cadencia db confine`` then keeps the tool roles out of the cluster's other databases
(:mod:`backend.posture.confine`).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from backend.commands._common import add_data_dir, add_database

if TYPE_CHECKING:
    from rich.console import Console

    from backend.posture.confine import ConfineReport
    from backend.posture.grants_audit import Drift, Snapshot
    from backend.settings import Settings
    from backend.store.db import PostgresDatabase


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``db`` and its ``migrate`` and ``confine`` sub-commands."""
    parser = sub.add_parser("db", help="database set-up (migrations, tool roles, grants)")
    dsub = parser.add_subparsers(dest="db_command", metavar="ACTION", required=True)
    m = dsub.add_parser(
        "migrate",
        help="apply migrations; on PostgreSQL also the tool login roles and their GRANTs",
        description="Apply pending migrations. On PostgreSQL also create the three tool login "
        "roles (passwords generated into the data dir's secret store, or none with "
        "--iam-auth) and apply the grants spec. Safe to run again: nothing changes.",
    )
    add_database(m)
    add_data_dir(m)
    m.add_argument(
        "--iam-auth",
        action="store_true",
        default=None,
        help="tool roles authenticate with RDS IAM tokens: no passwords; "
        "GRANT rds_iam when present",
    )
    m.set_defaults(handler=run_migrate)
    register_confine(dsub)


def register_confine(dsub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``db confine --database URL [--shared-cluster | --owned-cluster] …``."""
    c = dsub.add_parser(
        "confine",
        help="keep the tool roles out of every database of the cluster but this one",
        description="PostgreSQL gives PUBLIC CONNECT on every database, so the tool roles "
        "can log in to postgres, template1 and any other database. On a cluster this "
        "deployment owns, revoke PUBLIC's CONNECT on every other database (each login role "
        "that had CONNECT only through PUBLIC gets it explicitly first: nobody else loses "
        "access; superusers need none; databases this role cannot change are listed), in "
        "one transaction. On a shared cluster change nothing cluster-wide and print the "
        "pg_hba.conf lines that reject the tool roles elsewhere, and how to reload. "
        "Without a flag the cluster counts as owned only when the connecting role is a "
        "superuser or owns every other database and no other login role exists besides "
        "superusers and the tool roles; else as shared. Exit 0 done (or nothing to do); 1 "
        "PostgreSQL refused (nothing changed) or a database could not be confined; 2 usage "
        "(not PostgreSQL, tool roles missing: run db migrate first).",
    )
    add_database(c)
    add_data_dir(c)
    which = c.add_mutually_exclusive_group()
    which.add_argument(
        "--owned-cluster",
        dest="cluster",
        action="store_const",
        const="owned",
        default=None,
        help="the cluster is this deployment's: revoke PUBLIC's CONNECT elsewhere",
    )
    which.add_argument(
        "--shared-cluster",
        dest="cluster",
        action="store_const",
        const="shared",
        help="others use the cluster: print pg_hba.conf lines, change nothing cluster-wide",
    )
    c.add_argument(
        "--address",
        default=None,
        help="address (CIDR) the tool roles connect from, for the pg_hba.conf lines "
        "(default: this connection's client address, or the Unix socket)",
    )
    c.add_argument("--dry-run", action="store_true", help="print the SQL, change nothing")
    c.add_argument("--json", action="store_true", help="print the report as JSON")
    c.set_defaults(handler=run_confine)


def run_confine(args: argparse.Namespace) -> int:
    """Confine the tool roles; 0 done, 1 refused or incomplete (2: usage, from the CLI)."""
    import json

    from rich.console import Console
    from rich.markup import escape

    from backend.posture.confine import ConfineError, confine
    from backend.settings import load_settings

    settings = load_settings(data_dir=args.data_dir, database_url=args.database)
    console = Console(soft_wrap=True)
    try:
        report = confine(
            settings.resolved_database_url(),
            settings.role_prefix,
            mode=args.cluster,
            dry_run=args.dry_run,
            address=args.address,
            iam_auth=settings.iam_auth,
        )
    except ConfineError as exc:
        Console(stderr=True, soft_wrap=True).print(f"[bold red]error:[/] {escape(exc.message)}")
        return 1
    code = 1 if report.blocked else 0
    if args.json:
        print(json.dumps(report.model_dump(mode="json"), indent=2, ensure_ascii=False))
        return code
    console.print(f"[bold]mode[/]: {report.mode} cluster — {escape(report.reason)}")
    verb = "would run" if report.dry_run else "ran"
    if report.statements:
        console.print(f"[bold]changes[/] ({len(report.statements)}, {verb}, one transaction):")
        for st in report.statements:
            console.print(f"  [dim]-- {escape(st.why)}[/]")
            console.print(f"  {escape(st.sql)};")
    else:
        console.print("[bold]changes[/]: none")
    for b in report.blocked:
        console.print(f"[bold red]not confined[/] {escape(b)}")
    if report.mode == "shared":
        _print_hba(console, report)
    for note in report.notes:
        console.print(f"[dim]note: {escape(note)}[/]")
    return code


def _print_hba(console: Console, report: ConfineReport) -> None:
    """The pg_hba.conf lines, where they go, and how to reload."""
    from rich.markup import escape

    if report.hba_status == "applied":
        console.print(
            "[bold]pg_hba.conf[/]: already rejects the tool roles outside "
            f"{escape(report.database)} — nothing to add"
        )
        return
    state = {
        "missing": f"not applied yet: {report.hba_note}",
        "unverifiable": f"cannot be checked from here ({report.hba_note})",
    }.get(report.hba_status, "")
    console.print(
        f"[bold]pg_hba.conf[/] ({escape(report.hba_file or 'SHOW hba_file')}): add these "
        "lines in this order, ABOVE any broader line that "
        "could match the tool roles (`host all all …`, `local all all …`: the first "
        f"matching line wins); {escape(state)}"
    )
    for line in report.hba_lines:
        console.print(f"  {escape(line)}")
    console.print("[bold]then reload[/] (any one):")
    for cmd in report.reload:
        console.print(f"  {escape(cmd)}")


@dataclass
class MigrateOutcome:
    """What ``db migrate`` did; the PostgreSQL fields stay empty on SQLite."""

    dialect: str
    applied: list[int]
    roles_created: list[str] = field(default_factory=list)
    login_restored: list[str] = field(default_factory=list)
    rds_iam: bool | None = None
    changes: list[str] = field(default_factory=list)
    drifts: list[Drift] = field(default_factory=list)


def migrate_database(settings: Settings) -> MigrateOutcome:
    """Migrate ``settings``' database; on PostgreSQL also ensure roles and grants."""
    from backend.store.db import PostgresDatabase, open_database
    from backend.store.files import secure_data_dir
    from backend.store.migrate import migrate

    secure_data_dir(settings.data_dir)  # the tool roles' passwords are stored under it
    db = open_database(settings.resolved_database_url())
    try:
        applied = migrate(db)
        if not isinstance(db, PostgresDatabase):
            return MigrateOutcome(dialect=db.dialect, applied=applied)
        return _postgres_roles(db, settings, applied)
    finally:
        db.close()


def _postgres_roles(db: PostgresDatabase, settings: Settings, applied: list[int]) -> MigrateOutcome:
    from psycopg.rows import dict_row

    from backend.erp.grants import tool_roles
    from backend.erp.roles import ensure_tool_roles
    from backend.posture.grants_audit import diff, read_snapshot
    from backend.secrets.base import make_secret_store
    from backend.store.queries import composed, query

    with db.pool.connection() as conn:
        before = read_snapshot(conn, settings.role_prefix)
    created = ensure_tool_roles(
        db, make_secret_store(settings), iam_auth=settings.iam_auth, prefix=settings.role_prefix
    )
    restored: list[str] = []
    with db.pool.connection() as conn, conn.transaction():
        # ensure_tool_roles keeps existing roles as they are; a teardown interrupted after
        # its first step leaves them NOLOGIN, which the grants spec says they must not be.
        cur = conn.cursor(row_factory=dict_row)
        nologin = query("postgres", "roles_without_login")
        for row in cur.execute(
            nologin, {"roles": list(tool_roles(settings.role_prefix))}
        ).fetchall():
            conn.execute(composed("role_login", role=row["rolname"]))
            restored.append(row["rolname"])
        rds_iam = conn.execute(query("postgres", "rds_iam_exists")).fetchone() is not None
        after = read_snapshot(conn, settings.role_prefix)
    return MigrateOutcome(
        dialect="postgres",
        applied=applied,
        roles_created=created,
        login_restored=restored,
        rds_iam=rds_iam if settings.iam_auth else None,
        changes=snapshot_changes(before, after),
        drifts=diff(after, other_databases=False),  # migrate repairs only this database
    )


def snapshot_changes(before: Snapshot, after: Snapshot) -> list[str]:
    """Human lines for every role, attribute, membership or privilege that changed."""

    def roles(s: Snapshot) -> set[str]:
        return {
            f"role {n}"
            + (
                ""
                if i is None
                else (" LOGIN" if i.login else " NOLOGIN") + "".join(f" {a}" for a in i.attributes)
            )
            for n, i in s.roles.items()
            if i is not None
        }

    def privs(s: Snapshot) -> set[str]:
        return {
            f"{p.grantee} {p.privilege}{f'({p.column})' if p.column else ''} on {p.kind} "
            f"{p.schema_name + '.' if p.schema_name and p.kind != 'schema' else ''}{p.object}"
            + (" WITH GRANT OPTION" if p.grantable else "")
            for p in s.privileges
        } | {f"{m['member']} member of {m['role']}" for m in s.memberships}

    old, new = roles(before) | privs(before), roles(after) | privs(after)
    return [f"- {x}" for x in sorted(old - new)] + [f"+ {x}" for x in sorted(new - old)]


def run_migrate(args: argparse.Namespace) -> int:
    """Run the migration and print what was applied."""
    from rich.console import Console
    from rich.markup import escape

    from backend.erp.grants import GRANTS, tool_roles
    from backend.settings import load_settings

    settings = load_settings(
        data_dir=args.data_dir, database_url=args.database, iam_auth=args.iam_auth
    )
    console = Console(soft_wrap=True)
    out = migrate_database(settings)
    console.print(
        f"[bold]migrations[/]: applied {', '.join(map(str, out.applied))}"
        if out.applied
        else "[bold]migrations[/]: up to date (nothing applied)"
    )
    if out.dialect != "postgres":
        console.print(
            "[bold]tool roles[/]: none on SQLite — each tool's connection gets an authorizer "
            "built from the grants spec, which refuses anything the spec does not allow."
        )
        return 0
    for role in tool_roles(settings.role_prefix):
        state = "created" if role in out.roles_created else "exists (kept)"
        if role in out.login_restored:
            state += ", LOGIN restored"
        console.print(f"[bold]role[/] {role}: {state}")
    if settings.iam_auth:
        console.print(
            "[bold]auth[/]: RDS IAM tokens, no passwords; "
            + ("rds_iam granted" if out.rds_iam else "rds_iam role absent (not RDS): not granted")
        )
    else:
        where = (
            settings.data_dir / "secrets"
            if settings.secrets_backend == "file"
            else "Secrets Manager"
        )
        console.print(
            f"[bold]auth[/]: passwords in the secret store ({escape(str(where))}, ids db/<role>)"
        )
    console.print(
        f"[bold]grants[/]: {len(GRANTS)} statements from the grants spec applied after REVOKE ALL"
    )
    if out.changes:
        console.print(f"[bold]changes[/] ({len(out.changes)}):")
        for line in out.changes:
            console.print(f"  {escape(line)}", style="green" if line.startswith("+") else "red")
    else:
        console.print("[bold]changes[/]: none — roles and privileges were already as specified")
    for d in out.drifts:
        console.print(f"[bold yellow]not repaired by migrate[/] {escape(d.line())}")
    if out.drifts:
        console.print("[yellow]fix these by hand, then check with `cadencia audit grants`[/]")
    console.print(
        "[bold]next[/]: `cadencia db confine` keeps the tool roles out of the cluster's other "
        "databases (PostgreSQL lets PUBLIC connect to each); `cadencia audit grants` checks both"
    )
    return 0
