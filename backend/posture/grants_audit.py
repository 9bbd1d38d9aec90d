"""``audit grants``: diff the LIVE PostgreSQL privileges of the tool roles against the spec.

The snapshot is read from the catalogs, not from ``information_schema``: its
``column_privileges`` view also lists every column implied by a table-level grant, so
it cannot tell ``GRANT SELECT ON clientes`` from ``GRANT SELECT (id, nome, …) ON
clientes``. ``aclexplode`` over ``pg_class.relacl`` (table level) and
``pg_attribute.attacl`` (column level) keeps the two apart, as ``\\dp`` does.

Besides privileges on every relation, schema, function and the database, drift is:
a missing role, a role attribute (SUPERUSER, CREATEROLE, …), LOGIN missing, membership in
any role but ``rds_iam`` (``pg_write_all_data``, ``rds_superuser``, …), ownership of any
object, default privileges naming a tool role, and grants to PUBLIC on relations (every
role inherits those).
"""

from __future__ import annotations

import argparse
import json
from typing import Any, Literal

from pydantic import BaseModel

from backend.erp.grants import ERP_TABLES, GRANTS, TOOL_ROLES
from backend.exceptions import ConfigError, StorageError

ALLOWED_MEMBERSHIPS = frozenset({"rds_iam"})
"""The only role a tool role may belong to (RDS IAM authentication)."""

_ATTRIBUTES = {
    "rolsuper": "SUPERUSER",
    "rolcreaterole": "CREATEROLE",
    "rolcreatedb": "CREATEDB",
    "rolreplication": "REPLICATION",
    "rolbypassrls": "BYPASSRLS",
}
_KINDS = {
    "r": "table",
    "p": "table",
    "v": "view",
    "m": "materialized view",
    "S": "sequence",
    "f": "foreign table",
    "c": "type",
}
_DEFACL_KINDS = {"r": "tables", "S": "sequences", "f": "functions", "T": "types", "n": "schemas"}
_USER_SCHEMAS = (
    "n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%%'"
)

_Q_ROLES = """
SELECT rolname, rolsuper, rolcreaterole, rolcreatedb, rolreplication, rolbypassrls, rolcanlogin
FROM pg_roles WHERE rolname = ANY(%(roles)s)"""
_Q_MEMBERSHIPS = """
SELECT m.rolname AS member, r.rolname AS role, a.admin_option
FROM pg_auth_members a JOIN pg_roles r ON r.oid = a.roleid JOIN pg_roles m ON m.oid = a.member
WHERE m.rolname = ANY(%(roles)s) ORDER BY 1, 2"""
_GRANTEE = "CASE WHEN e.grantee = 0 THEN 'PUBLIC' ELSE g.rolname END"
_Q_RELATIONS = f"""
SELECT {_GRANTEE} AS grantee, n.nspname AS schema, c.relname AS name, c.relkind::text AS kind,
       NULL::text AS column_name, e.privilege_type AS privilege, e.is_grantable AS grantable
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
CROSS JOIN LATERAL aclexplode(c.relacl) e LEFT JOIN pg_roles g ON g.oid = e.grantee
WHERE {_USER_SCHEMAS} AND (e.grantee = 0 OR g.rolname = ANY(%(roles)s))
UNION ALL
SELECT {_GRANTEE}, n.nspname, c.relname, c.relkind::text, a.attname::text,
       e.privilege_type, e.is_grantable
FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
CROSS JOIN LATERAL aclexplode(a.attacl) e LEFT JOIN pg_roles g ON g.oid = e.grantee
WHERE a.attnum > 0 AND NOT a.attisdropped AND {_USER_SCHEMAS}
  AND (e.grantee = 0 OR g.rolname = ANY(%(roles)s))
UNION ALL
SELECT {_GRANTEE}, n.nspname, n.nspname, 'schema', NULL, e.privilege_type, e.is_grantable
FROM pg_namespace n CROSS JOIN LATERAL aclexplode(n.nspacl) e LEFT JOIN pg_roles g ON g.oid = e.grantee
WHERE {_USER_SCHEMAS} AND (g.rolname = ANY(%(roles)s) OR (e.grantee = 0 AND e.privilege_type = 'CREATE'))
UNION ALL
SELECT g.rolname, n.nspname, p.oid::regprocedure::text, 'function', NULL,
       e.privilege_type, e.is_grantable
FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
CROSS JOIN LATERAL aclexplode(p.proacl) e JOIN pg_roles g ON g.oid = e.grantee
WHERE {_USER_SCHEMAS} AND g.rolname = ANY(%(roles)s)
UNION ALL
SELECT g.rolname, NULL, d.datname, 'database', NULL, e.privilege_type, e.is_grantable
FROM pg_database d CROSS JOIN LATERAL aclexplode(d.datacl) e JOIN pg_roles g ON g.oid = e.grantee
WHERE d.datname = current_database() AND g.rolname = ANY(%(roles)s)
  AND e.privilege_type NOT IN ('CONNECT', 'TEMPORARY')
ORDER BY 1, 2, 3, 5 NULLS FIRST, 6"""
_Q_OWNED = f"""
SELECT o.rolname AS owner, n.nspname AS schema, c.relname AS name, c.relkind::text AS kind
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace JOIN pg_roles o ON o.oid = c.relowner
WHERE o.rolname = ANY(%(roles)s) AND c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f', 'c')
UNION ALL
SELECT o.rolname, n.nspname, n.nspname, 'schema'
FROM pg_namespace n JOIN pg_roles o ON o.oid = n.nspowner WHERE o.rolname = ANY(%(roles)s)
UNION ALL
SELECT o.rolname, n.nspname, p.oid::regprocedure::text, 'function'
FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace JOIN pg_roles o ON o.oid = p.proowner
WHERE {_USER_SCHEMAS} AND o.rolname = ANY(%(roles)s)
UNION ALL
SELECT o.rolname, NULL, d.datname, 'database'
FROM pg_database d JOIN pg_roles o ON o.oid = d.datdba WHERE o.rolname = ANY(%(roles)s)
ORDER BY 1, 2, 3"""
_Q_DEFAULT_ACL = f"""
SELECT o.rolname AS owner, n.nspname AS schema, d.defaclobjtype::text AS objtype,
       {_GRANTEE} AS grantee, e.privilege_type AS privilege
FROM pg_default_acl d JOIN pg_roles o ON o.oid = d.defaclrole
LEFT JOIN pg_namespace n ON n.oid = d.defaclnamespace
CROSS JOIN LATERAL aclexplode(d.defaclacl) e LEFT JOIN pg_roles g ON g.oid = e.grantee
WHERE g.rolname = ANY(%(roles)s) OR o.rolname = ANY(%(roles)s)
   OR (e.grantee = 0 AND d.defaclobjtype IN ('r', 'S'))
ORDER BY 1, 2, 3, 4, 5"""


class RoleInfo(BaseModel):
    """A tool role's attributes as ``pg_roles`` reports them."""

    name: str
    login: bool
    attributes: list[str]


class PrivilegeEntry(BaseModel):
    """One ACL item: ``grantee`` holds ``privilege`` on an object (or one of its columns)."""

    grantee: str
    schema_name: str | None
    object: str
    kind: str
    column: str | None
    privilege: str
    grantable: bool


class Snapshot(BaseModel):
    """Everything the audit compares, read in one transaction."""

    database: str
    current_schema: str
    roles: dict[str, RoleInfo | None]
    memberships: list[dict[str, Any]]
    privileges: list[PrivilegeEntry]
    owned: list[dict[str, Any]]
    default_acls: list[dict[str, Any]]


class Drift(BaseModel):
    """One difference from the spec; ``message`` is what the operator reads."""

    kind: Literal["extra", "missing"]
    role: str
    message: str

    def line(self) -> str:
        """``EXTRA: …`` / ``MISSING: …``."""
        return f"{self.kind.upper()}: {self.message}"


class GrantsReport(BaseModel):
    """The audit's result: ``verdict`` is ``fail`` on any drift."""

    verdict: Literal["pass", "fail"]
    drifts: list[Drift]
    snapshot: Snapshot


def read_snapshot(conn: Any) -> Snapshot:
    """Read the tool roles' live privileges through a psycopg connection (``dict_row``)."""
    params = {"roles": list(TOOL_ROLES)}
    head = conn.execute("SELECT current_database() AS db, current_schema() AS schema").fetchone()
    roles: dict[str, RoleInfo | None] = dict.fromkeys(TOOL_ROLES)
    for row in conn.execute(_Q_ROLES, params).fetchall():
        attrs = [label for col, label in _ATTRIBUTES.items() if row[col]]
        roles[row["rolname"]] = RoleInfo(
            name=row["rolname"], login=row["rolcanlogin"], attributes=attrs
        )
    privileges = [
        PrivilegeEntry(
            grantee=r["grantee"],
            schema_name=r["schema"],
            object=r["name"],
            kind=_KINDS.get(r["kind"], r["kind"]),
            column=r["column_name"],
            privilege=r["privilege"],
            grantable=r["grantable"],
        )
        for r in conn.execute(_Q_RELATIONS, params).fetchall()
    ]
    owned = [
        dict(r) | {"kind": _KINDS.get(r["kind"], r["kind"])} for r in conn.execute(_Q_OWNED, params)
    ]
    return Snapshot(
        database=head["db"],
        current_schema=head["schema"] or "public",
        roles=roles,
        memberships=[dict(r) for r in conn.execute(_Q_MEMBERSHIPS, params).fetchall()],
        privileges=privileges,
        owned=owned,
        default_acls=[dict(r) for r in conn.execute(_Q_DEFAULT_ACL, params).fetchall()],
    )


def object_label(snapshot: Snapshot, schema: str | None, name: str, kind: str) -> str:
    """``pedidos`` for a table in the ERP schema, else ``sequence public.x``, ``schema s``…"""
    qualified = (
        name
        if schema in (None, snapshot.current_schema) or kind in ("schema", "function")
        else f"{schema}.{name}"
    )
    return qualified if kind == "table" else f"{kind} {qualified}"


def diff(snapshot: Snapshot) -> list[Drift]:
    """Every extra or missing privilege of every tool role (and of PUBLIC on relations)."""
    drifts: list[Drift] = []
    erp = snapshot.current_schema
    for role in TOOL_ROLES:
        drifts += _diff_role(snapshot, role, erp)
    for p in snapshot.privileges:
        if p.grantee == "PUBLIC":
            col = f"({p.column})" if p.column else ""
            where = object_label(snapshot, p.schema_name, p.object, p.kind)
            drifts.append(
                Drift(
                    kind="extra",
                    role="PUBLIC",
                    message=(
                        f"PUBLIC has {p.privilege}{col} on {where} (every tool role inherits it)"
                    ),
                )
            )
    for d in snapshot.default_acls:
        if d["grantee"] == "PUBLIC" and d["owner"] not in TOOL_ROLES:
            drifts.append(Drift(kind="extra", role="PUBLIC", message=_default_acl_text(d)))
    return drifts


def _default_acl_text(d: dict[str, Any]) -> str:
    scope = f" in schema {d['schema']}" if d["schema"] else ""
    kind = _DEFACL_KINDS.get(d["objtype"], d["objtype"])
    return (
        f"default privileges of {d['owner']}{scope} grant {d['privilege']} on new {kind} "
        f"to {d['grantee']}"
    )


def _diff_role(snapshot: Snapshot, role: str, erp: str) -> list[Drift]:
    info = snapshot.roles.get(role)
    if info is None:
        return [
            Drift(
                kind="missing",
                role=role,
                message=f"role {role} does not exist (run cadencia db migrate)",
            )
        ]
    out = [
        Drift(kind="extra", role=role, message=f"{role} has attribute {a}") for a in info.attributes
    ]
    if not info.login:
        out.append(Drift(kind="missing", role=role, message=f"{role} lacks LOGIN"))
    for m in snapshot.memberships:
        if m["member"] == role and m["role"] not in ALLOWED_MEMBERSHIPS:
            admin = " WITH ADMIN OPTION" if m["admin_option"] else ""
            out.append(
                Drift(kind="extra", role=role, message=f"{role} is a member of {m['role']}{admin}")
            )
    for o in snapshot.owned:
        if o["owner"] == role:
            name = (
                o["name"]
                if o["schema"] in (None, erp) or o["kind"] in ("schema", "function")
                else f"{o['schema']}.{o['name']}"
            )
            out.append(Drift(kind="extra", role=role, message=f"{role} owns {o['kind']} {name}"))
    for d in snapshot.default_acls:
        if d["grantee"] == role or d["owner"] == role:
            out.append(Drift(kind="extra", role=role, message=_default_acl_text(d)))
    out += _diff_privileges(snapshot, role, erp)
    return out


def _diff_privileges(snapshot: Snapshot, role: str, erp: str) -> list[Drift]:
    spec = [g for g in GRANTS if g.role == role]
    want_table = {(erp, g.table, g.privilege) for g in spec if g.columns is None}
    want_cols = {(erp, g.table, g.privilege, c) for g in spec if g.columns for c in g.columns}
    mine = [p for p in snapshot.privileges if p.grantee == role]
    have_table = {
        (p.schema_name, p.object, p.privilege)
        for p in mine
        if p.column is None and p.kind == "table"
    }
    have_cols = {
        (p.schema_name, p.object, p.privilege, p.column) for p in mine if p.column is not None
    }
    out: list[Drift] = []
    for p in mine:
        col = f"({p.column})" if p.column else ""
        where = object_label(snapshot, p.schema_name, p.object, p.kind)
        key: tuple[Any, ...] = (
            (p.schema_name, p.object, p.privilege)
            if p.column is None
            else (p.schema_name, p.object, p.privilege, p.column)
        )
        expected = key in (want_table if p.column is None else want_cols) and p.kind == "table"
        if not expected:
            out.append(
                Drift(kind="extra", role=role, message=f"{role} has {p.privilege}{col} on {where}")
            )
        elif p.grantable:
            out.append(
                Drift(
                    kind="extra",
                    role=role,
                    message=(f"{role} has {p.privilege}{col} on {where} WITH GRANT OPTION"),
                )
            )
    for schema, table, priv in sorted(want_table - have_table):
        out.append(Drift(kind="missing", role=role, message=f"{role} lacks {priv} on {table}"))
    for schema, table, priv, column in sorted(want_cols - have_cols, key=_spec_order):
        if (
            schema,
            table,
            priv,
        ) not in have_table:  # a table-level grant (reported as extra) covers it
            out.append(
                Drift(
                    kind="missing", role=role, message=f"{role} lacks {priv}({column}) on {table}"
                )
            )
    return out


def _spec_order(item: tuple[str, str, str, str]) -> tuple[str, str, int]:
    _, table, priv, column = item
    return table, priv, ERP_TABLES[table].index(column)


def audit_grants(url: str) -> GrantsReport:
    """Connect to the PostgreSQL at ``url`` (read-only) and audit the tool roles."""
    from urllib.parse import urlparse

    if urlparse(url).scheme not in ("postgresql", "postgres"):
        raise ConfigError(
            "audit grants reads live PostgreSQL privileges; SQLite has none to drift (each "
            "tool connection gets an authorizer built from the grants spec). Pass "
            "--database postgresql://…",
            url=url,
        )
    import psycopg
    from psycopg.rows import dict_row

    try:
        with psycopg.connect(url, row_factory=dict_row) as conn:
            conn.read_only = True
            snapshot = read_snapshot(conn)
    except psycopg.Error as exc:
        raise StorageError(f"cannot read privileges: {exc}") from exc
    drifts = diff(snapshot)
    return GrantsReport(verdict="fail" if drifts else "pass", drifts=drifts, snapshot=snapshot)


# -- command line (registered by backend.commands.audit) -----------------------------------


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``audit grants --database URL [--json]``."""
    from backend.commands._common import add_data_dir, add_database

    parser = subparsers.add_parser(
        "grants",
        help="diff the live PostgreSQL privileges of the tool roles against the grants spec",
        description="Read the live privileges of the three tool roles (table and column ACLs, "
        "role attributes and memberships, ownership, default privileges, grants on any other "
        "object, grants to PUBLIC) and diff them against the grants spec. Exit 1 on any drift.",
    )
    add_database(parser)
    add_data_dir(parser)
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """0 when the live privileges match the spec exactly, 1 on drift."""
    from backend.settings import load_settings

    url = args.database or load_settings(data_dir=args.data_dir).resolved_database_url()
    report = audit_grants(url)
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
    for role in (*TOOL_ROLES, "PUBLIC"):
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
            f"[bold red]audit grants: FAIL[/] — {len(lines)} drift(s) from the grants spec on {escape(snap.database)}"
        )
    else:
        console.print(
            f"[bold green]audit grants: pass[/] — {escape(snap.database)} matches the grants spec exactly"
        )
