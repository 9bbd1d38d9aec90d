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
        description="Read the live privileges of the three tool roles (table and column ACLs, "
        "role attributes and memberships, ownership, default privileges, grants on any other "
        "object, grants to PUBLIC, CONNECT/TEMPORARY on every database, EXECUTE on functions) "
        "and diff them against the grants spec. Exit 1 on any drift.",
    )
    add_database(parser)
    add_data_dir(parser)
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument(
        "--this-database-only",
        action="store_true",
        help="leave out what the tool roles may do in the cluster's other databases (when "
        "pg_hba.conf already rejects them there: the audit cannot read it)",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """0 when the live privileges match the spec exactly, 1 on drift."""
    from backend.posture.grants_audit import audit_grants
    from backend.settings import load_settings

    settings = load_settings(data_dir=args.data_dir, database_url=args.database)
    url = settings.resolved_database_url()  # with CADENCIA_DATABASE_PASSWORD(_FILE) if set
    report = audit_grants(url, settings.role_prefix, other_databases=not args.this_database_only)
    if args.json:
        print(json.dumps(report.model_dump(mode="json"), indent=2, ensure_ascii=False))
    else:
        print_report(report)
    return 1 if report.verdict == "fail" else 0


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
    for text in lines:
        console.print(f"[bold red]{escape(text)}[/]")
    if report.verdict == "fail":
        console.print(
            f"[bold red]audit grants: FAIL[/] — {len(lines)} drift(s) from the grants spec "
            f"on {escape(snap.database)}"
        )
    else:
        console.print(
            f"[bold green]audit grants: pass[/] — {escape(snap.database)} "
            "matches the grants spec exactly"
        )
