"""``cadencia audit grants``: the command line over :mod:`backend.posture.grants_audit`.

Registered by :mod:`backend.commands.audit` (the leading underscore keeps the command
discovery in ``backend.cli`` from taking it for a top-level command).
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from backend.commands._common import add_data_dir, add_database

if TYPE_CHECKING:
    from backend.posture.grants_audit import GrantsReport


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``audit grants --database URL [--json]``."""
    parser = subparsers.add_parser(
        "grants",
        help="diff the live PostgreSQL privileges of the tool roles against the grants spec",
        description="Two sections. Drift: the live privileges of the three tool roles (table "
        "and column ACLs, role attributes and memberships, ownership, default privileges, "
        "grants on any other object, grants to PUBLIC, CONNECT/TEMPORARY on every database, "
        "EXECUTE on functions) against the grants spec. Exposure: the other databases of the "
        "cluster a tool role can reach through PUBLIC's CONNECT that pg_hba.conf does not "
        "reject (read from pg_hba_file_rules when this role may: superusers); `cadencia db "
        "confine` fixes it. Exit 0: both pass; 1: drift (with or without exposure); 2: the "
        "database cannot be read; 3: no drift, exposure; 4: no drift, exposure not "
        "verifiable (PUBLIC may connect elsewhere and pg_hba.conf is unreadable).",
    )
    add_database(parser)
    add_data_dir(parser)
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument(
        "--this-database-only",
        action="store_true",
        help="leave out the cluster's other databases: exposure is 'skipped' and the tool "
        "roles' own grants elsewhere are not drift (e.g. pg_hba.conf rejects them there and "
        "this role cannot read it)",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """0 pass, 1 drift, 3 exposure only, 4 exposure unverifiable (see ``exit_code``)."""
    from backend.posture.grants_audit import audit_grants, exit_code
    from backend.settings import load_settings

    settings = load_settings(data_dir=args.data_dir, database_url=args.database)
    url = settings.resolved_database_url()  # with CADENCIA_DATABASE_PASSWORD(_FILE) if set
    report = audit_grants(url, settings.role_prefix, other_databases=not args.this_database_only)
    if args.json:
        print(json.dumps(report.model_dump(mode="json"), indent=2, ensure_ascii=False))
    else:
        print_report(report)
    return exit_code(report)


def print_report(report: GrantsReport) -> None:
    """One ``\\dp``-like table per role, then every drift on its own line."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = Console(soft_wrap=True)
    snap = report.snapshot
    for role in (*snap.roles, "PUBLIC"):
        entries = [p for p in snap.privileges if p.grantee == role]
        info = snap.roles.get(role)
        if role == "PUBLIC" and not entries:  # PUBLIC only matters when it holds something
            continue
        title = (
            f"{role}"
            if role == "PUBLIC"
            else f"{role} — "
            + (
                "absent"
                if info is None
                else ("LOGIN" if info.login else "NOLOGIN")
                + "".join(f" {a}" for a in info.attributes)
            )
        )
        table = Table(title=escape(title), title_justify="left")
        for head in ("Object", "Type", "Privileges", "Column privileges"):
            table.add_column(head)
        owned = [o for o in snap.owned if o["owner"] == role]
        for o in owned:
            table.add_row(escape(str(o["name"])), o["kind"], "OWNER (all privileges)", "")
        objects = sorted({(p.schema_name or "", p.object, p.kind) for p in entries})
        for schema, name, kind in objects:
            here = [
                p
                for p in entries
                if (p.schema_name or "", p.object, p.kind) == (schema, name, kind)
            ]
            table_privs = ", ".join(
                p.privilege + ("*" if p.grantable else "") for p in here if p.column is None
            )
            cols: dict[str, list[str]] = {}
            for p in here:
                if p.column is not None:
                    cols.setdefault(p.privilege, []).append(p.column)
            col_text = "\n".join(f"{k} ({', '.join(v)})" for k, v in cols.items())
            label = (
                name
                if kind in ("schema", "function", "database") or schema in ("", snap.current_schema)
                else f"{schema}.{name}"
            )
            table.add_row(escape(label), kind, table_privs, escape(col_text))
        console.print(table)
    lines = [d.line() for d in report.drifts]
    drift = report.drift.status
    console.print(
        "\n[bold]drift from the grants spec[/]: "
        + ("[green]pass[/]" if drift == "pass" else f"[bold red]FAIL[/] ({len(lines)})")
    )
    for text in lines:
        console.print(f"[bold red]{escape(text)}[/]")
    exp = report.exposure
    shown = {"pass": "[green]pass[/]", "fail": "[bold red]FAIL[/]", "skipped": "skipped"}
    console.print(
        f"[bold]cluster exposure[/]: {shown.get(exp.status, '[bold yellow]not verified[/]')} "
        f"(pg_hba.conf {escape(exp.hba)})"
    )
    for f in exp.findings:
        style = "bold red" if f.kind == "exposed" else "bold yellow"
        console.print(f"[{style}]{escape(f.line())}[/]")
    db = escape(snap.database)
    if drift == "fail":
        console.print(
            f"[bold red]audit grants: FAIL[/] — {len(lines)} drift(s) from the grants spec "
            f"on {db}" + ("; the cluster exposes the tool roles too" if exp.findings else "")
        )
    elif exp.status == "fail":
        console.print(
            f"[bold red]audit grants: FAIL[/] — no drift on {db}, but the tool roles can "
            f"reach other databases: run {escape(exp.fix)}"
        )
    elif exp.status == "unverified":
        console.print(
            f"[bold yellow]audit grants: not verified[/] — no drift on {db}; whether "
            "pg_hba.conf keeps the tool roles out of the other databases is unknown "
            f"({escape(exp.fix)} revokes PUBLIC's CONNECT instead, or audit as a superuser)"
        )
    else:
        rest = (
            " (other databases not checked: --this-database-only)"
            if exp.status == "skipped"
            else " and the tool roles reach no other database"
        )
        console.print(
            f"[bold green]audit grants: pass[/] — {db} matches the grants spec exactly{rest}"
        )
