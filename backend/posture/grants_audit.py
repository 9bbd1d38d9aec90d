"""``audit grants``: diff the LIVE PostgreSQL privileges of the tool roles against the spec.

The snapshot is read from the catalogs (``aclexplode`` over ``pg_class.relacl`` and
``pg_attribute.attacl``, as ``\\dp`` does), not from ``information_schema``, which cannot
tell a table-level grant from one on every column (:func:`read_snapshot` says why). The
queries are ``audit_*`` in ``sql/postgres/admin_queries.sql``; the command line is
``backend.commands._audit_grants``. What counts as drift is listed on :func:`diff`; what
the cluster lets the tool roles reach beyond it (exposure, which ``db confine`` fixes) on
:func:`exposure`. Exit codes: :func:`exit_code`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel

from backend.erp.grants import DEFAULT_ROLE_PREFIX, ERP_TABLES, GRANTS, TOOL_ROLES, deployed_role
from backend.exceptions import ConfigError, StorageError
from backend.store.queries import load_queries

if TYPE_CHECKING:
    from backend.posture.confine import HbaView

ALLOWED_MEMBERSHIPS = frozenset({"rds_iam"})
"""The only role a tool role may belong to (RDS IAM authentication)."""

_ATTRIBUTES = {
    "rolsuper": "SUPERUSER",
    "rolcreaterole": "CREATEROLE",
    "rolcreatedb": "CREATEDB",
    "rolreplication": "REPLICATION",
    "rolbypassrls": "BYPASSRLS",
    "rolinherit": "INHERIT",  # created NOINHERIT: a membership granted later gives nothing
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
    prefix: str = DEFAULT_ROLE_PREFIX
    """The deployment's role prefix: the roles audited are ``<prefix>_consulta`` etc."""
    roles: dict[str, RoleInfo | None]
    memberships: list[dict[str, Any]]
    privileges: list[PrivilegeEntry]
    owned: list[dict[str, Any]]
    default_acls: list[dict[str, Any]]
    databases: list[dict[str, Any]] = []
    """Per role and connectable database: effective CONNECT/TEMPORARY, own grants."""
    functions: list[dict[str, Any]] = []
    """Functions of user schemas each tool role may effectively EXECUTE."""


class Drift(BaseModel):
    """One difference from the spec; ``message`` is what the operator reads."""

    kind: Literal["extra", "missing"]
    role: str
    message: str

    def line(self) -> str:
        """``EXTRA: …`` / ``MISSING: …``."""
        return f"{self.kind.upper()}: {self.message}"


class DriftSection(BaseModel):
    """Differences from the grants spec: ``fail`` on any."""

    status: Literal["pass", "fail"]
    findings: list[Drift]


class Exposure(BaseModel):
    """A tool role that can reach another database through PUBLIC (not a grant of its own)."""

    kind: Literal["exposed", "unverified"]
    role: str
    database: str
    message: str
    fix: str

    def line(self) -> str:
        """``EXPOSED: … (fix: cadencia db confine …)`` / ``UNVERIFIED: …``."""
        return f"{self.kind.upper()}: {self.message} (fix: {self.fix})"


class ExposureSection(BaseModel):
    """What the cluster lets the tool roles reach besides this database.

    ``fail``: some other database lets one in (PUBLIC's CONNECT, and a ``pg_hba.conf`` line
    that accepts it, or unread); ``unverified``: only ``pg_hba.conf`` could keep it out and
    this role cannot read it; ``skipped``: ``--this-database-only``.
    """

    status: Literal["pass", "fail", "unverified", "skipped"]
    findings: list[Exposure] = []
    hba: str
    """How ``pg_hba.conf`` was taken into account (read, or why not)."""
    fix: str


class GrantsReport(BaseModel):
    """The audit's result: ``verdict`` is ``pass`` only when both sections pass.

    ``drifts`` (the drift section's findings) is kept for readers of the earlier report.
    """

    verdict: Literal["pass", "fail", "unverified"]
    drifts: list[Drift]
    drift: DriftSection
    exposure: ExposureSection
    snapshot: Snapshot


EXIT_PASS, EXIT_DRIFT, EXIT_EXPOSURE, EXIT_UNVERIFIED = 0, 1, 3, 4
"""2 is left to the command line: the database could not be read (or not PostgreSQL)."""


def exit_code(report: GrantsReport) -> int:
    """0 pass; 1 drift (whatever the exposure); 3 exposure only; 4 exposure unverifiable."""
    if report.drift.status == "fail":
        return EXIT_DRIFT
    return {"fail": EXIT_EXPOSURE, "unverified": EXIT_UNVERIFIED}.get(
        report.exposure.status, EXIT_PASS
    )


def read_snapshot(conn: Any, prefix: str = DEFAULT_ROLE_PREFIX) -> Snapshot:
    """Read the tool roles' live privileges through a psycopg connection (``dict_row``).

    From the catalogs, not from ``information_schema``: its ``column_privileges`` view also
    lists every column implied by a table-level grant, so it cannot tell ``GRANT SELECT ON
    clientes`` from ``GRANT SELECT (id, nome, …) ON clientes``. ``aclexplode`` over
    ``pg_class.relacl`` (table level) and ``pg_attribute.attacl`` (column level) keeps the two
    apart, as ``\\dp`` does.
    """
    q = load_queries("postgres")
    names = [deployed_role(r, prefix) for r in TOOL_ROLES]
    params = {"roles": names}
    head = conn.execute(q["audit_head"]).fetchone()
    roles: dict[str, RoleInfo | None] = dict.fromkeys(names)
    for row in conn.execute(q["audit_roles"], params).fetchall():
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
        for r in conn.execute(q["audit_privileges"], params).fetchall()
    ]
    owned = [
        dict(r) | {"kind": _KINDS.get(r["kind"], r["kind"])}
        for r in conn.execute(q["audit_owned"], params)
    ]
    return Snapshot(
        database=head["db"],
        current_schema=head["schema"] or "public",
        prefix=prefix,
        roles=roles,
        memberships=[dict(r) for r in conn.execute(q["audit_memberships"], params).fetchall()],
        privileges=privileges,
        owned=owned,
        default_acls=[dict(r) for r in conn.execute(q["audit_default_acls"], params).fetchall()],
        databases=[dict(r) for r in conn.execute(q["audit_databases"], params).fetchall()],
        functions=[dict(r) for r in conn.execute(q["audit_functions"], params).fetchall()],
    )


def object_label(snapshot: Snapshot, schema: str | None, name: str, kind: str) -> str:
    """``pedidos`` for a table in the ERP schema, else ``sequence public.x``, ``schema s``…"""
    qualified = (
        name
        if schema in (None, snapshot.current_schema) or kind in ("schema", "function")
        else f"{schema}.{name}"
    )
    return qualified if kind == "table" else f"{kind} {qualified}"


def diff(snapshot: Snapshot, *, other_databases: bool = True) -> list[Drift]:
    """Every extra or missing privilege of every tool role (and of PUBLIC on relations).

    ``other_databases=False`` leaves out the tool roles' own grants in the cluster's other
    databases (``--this-database-only``, and ``db migrate``, which only repairs this
    database). What PUBLIC's CONNECT lets them reach there is :func:`exposure`, not drift.

    Besides privileges on every relation, schema, function and the database, drift is: a
    missing role, a role attribute (SUPERUSER, CREATEROLE, …), LOGIN missing, membership in
    any role but ``rds_iam`` (``pg_write_all_data``, ``rds_superuser``, …), ownership of any
    object, default privileges naming a tool role, and grants to PUBLIC on relations (every
    role inherits those).
    """
    drifts: list[Drift] = []
    erp = snapshot.current_schema
    for spec_role in TOOL_ROLES:
        drifts += _diff_role(snapshot, spec_role, erp)
        drifts += _diff_databases(
            snapshot, deployed_role(spec_role, snapshot.prefix), other_databases
        )
        drifts += _diff_functions(snapshot, deployed_role(spec_role, snapshot.prefix))
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
        if d["grantee"] == "PUBLIC" and d["owner"] not in snapshot.roles:
            drifts.append(Drift(kind="extra", role="PUBLIC", message=_default_acl_text(d)))
    return drifts


def _diff_databases(snapshot: Snapshot, role: str, other_databases: bool) -> list[Drift]:
    """CONNECT granted explicitly on the ERP database and nowhere else; TEMPORARY nowhere."""
    if snapshot.roles.get(role) is None:
        return []  # reported as a missing role already
    out: list[Drift] = []
    for d in (d for d in snapshot.databases if d["role"] == role):
        name = d["name"]
        if d["here"]:
            if not d["granted_connect"]:
                out.append(
                    Drift(
                        kind="missing",
                        role=role,
                        message=f"{role} lacks CONNECT on database {name}",
                    )
                )
            if d["can_temp"]:
                out.append(
                    Drift(
                        kind="extra",
                        role=role,
                        message=f"{role} can create temporary tables in database {name} "
                        "(TEMPORARY, its own or PUBLIC's)",
                    )
                )
        elif other_databases and d["granted_any"]:
            out.append(
                Drift(
                    kind="extra",
                    role=role,
                    message=f"{role} can CONNECT to database {name} by a grant of its own",
                )
            )
    return out


def exposure(
    snapshot: Snapshot, hba: HbaView, groups: dict[str, frozenset[str]], fix: str
) -> ExposureSection:
    """Every other database a tool role can reach through PUBLIC that nothing keeps it out of.

    PUBLIC's CONNECT (PostgreSQL's default on every database) lets a tool role in unless
    ``pg_hba.conf`` rejects it first. With the file readable (``pg_hba_file_rules``, superusers)
    the lines are matched as the server does (:func:`backend.posture.confine.hba_admits`);
    without it such a database is ``unverified``, never a pass. A grant of the tool role's
    own elsewhere is drift (:func:`diff`), not exposure.
    """
    from backend.posture.confine import hba_admits

    findings: list[Exposure] = []
    for d in snapshot.databases:
        role, name = d["role"], d["name"]
        if d["here"] or d["granted_any"] or not d["can_connect"] or not snapshot.roles.get(role):
            continue
        if hba.rules is None or hba.problem:
            findings.append(
                Exposure(
                    kind="unverified",
                    role=role,
                    database=name,
                    message=f"{role} can CONNECT to database {name} through PUBLIC unless "
                    f"pg_hba.conf rejects it, and {hba.problem}",
                    fix=f"{fix}, or audit as a superuser",
                )
            )
            continue
        rule = hba_admits(hba.rules, role, name, groups.get(role, frozenset()))
        if rule is not None:
            findings.append(
                Exposure(
                    kind="exposed",
                    role=role,
                    database=name,
                    message=f"{role} can CONNECT to database {name} through PUBLIC "
                    f"(pg_hba.conf line {rule.line_number}: {rule.text()})",
                    fix=fix,
                )
            )
    status: Literal["pass", "fail", "unverified"] = (
        "fail"
        if any(f.kind == "exposed" for f in findings)
        else ("unverified" if findings else "pass")
    )
    how = f"not read: {hba.problem}" if hba.rules is None or hba.problem else "read"
    return ExposureSection(status=status, findings=findings, hba=how, fix=fix)


def _diff_functions(snapshot: Snapshot, role: str) -> list[Drift]:
    """A function of ours (or anyone's, in a user schema) a tool role may EXECUTE."""
    explicit = {
        (p.schema_name, p.object)
        for p in snapshot.privileges
        if p.grantee == role and p.kind == "function"
    }
    out: list[Drift] = []
    for f in snapshot.functions:
        if f["role"] != role or (f["schema"], f["name"]) in explicit:
            continue  # an explicit grant is reported with the other privileges
        definer = ", SECURITY DEFINER" if f["definer"] else ""
        out.append(
            Drift(
                kind="extra",
                role=role,
                message=f"{role} can EXECUTE function {f['name']} through PUBLIC{definer}",
            )
        )
    return out


def _default_acl_text(d: dict[str, Any]) -> str:
    scope = f" in schema {d['schema']}" if d["schema"] else ""
    kind = _DEFACL_KINDS.get(d["objtype"], d["objtype"])
    return (
        f"default privileges of {d['owner']}{scope} grant {d['privilege']} on new {kind} "
        f"to {d['grantee']}"
    )


def _diff_role(snapshot: Snapshot, spec_role: str, erp: str) -> list[Drift]:
    role = deployed_role(spec_role, snapshot.prefix)
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
    out += _diff_privileges(snapshot, spec_role, erp)
    return out


def _diff_privileges(snapshot: Snapshot, spec_role: str, erp: str) -> list[Drift]:
    role = deployed_role(spec_role, snapshot.prefix)
    spec = [g for g in GRANTS if g.role == spec_role]
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
    for _schema, table, priv in sorted(want_table - have_table):
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


def audit_grants(
    url: str, prefix: str = DEFAULT_ROLE_PREFIX, *, other_databases: bool = True
) -> GrantsReport:
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

    from backend.posture.confine import fix_command, read_hba

    fix = fix_command(url)
    try:
        with psycopg.connect(url, row_factory=dict_row) as conn:
            conn.read_only = True
            snapshot = read_snapshot(conn, prefix)
            if other_databases:
                hba = read_hba(conn)
                groups: dict[str, set[str]] = {}
                q = load_queries("postgres")
                for g in conn.execute(q["confine_groups"], {"roles": list(snapshot.roles)}):
                    groups.setdefault(g["member"], set()).add(g["grp"])
                found = exposure(snapshot, hba, {k: frozenset(v) for k, v in groups.items()}, fix)
    except psycopg.Error as exc:
        raise StorageError(f"cannot read privileges: {exc}") from exc
    if not other_databases:
        found = ExposureSection(status="skipped", hba="not read: --this-database-only", fix=fix)
    drifts = diff(snapshot, other_databases=other_databases)
    drift = DriftSection(status="fail" if drifts else "pass", findings=drifts)
    verdict: Literal["pass", "fail", "unverified"] = (
        "fail"
        if drifts or found.status == "fail"
        else ("unverified" if found.status == "unverified" else "pass")
    )
    return GrantsReport(
        verdict=verdict, drifts=drifts, drift=drift, exposure=found, snapshot=snapshot
    )
