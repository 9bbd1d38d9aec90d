"""``cadencia db confine``: the tool roles reach this deployment's database and no other.

PostgreSQL gives PUBLIC CONNECT on every database, so a tool role can log in to ``postgres``,
``template1`` and every other database of the cluster. On a cluster the deployment owns,
:func:`confine` revokes PUBLIC's CONNECT there (granting it first, explicitly, to every
other login role that had it only through PUBLIC); on a shared one it changes nothing
cluster-wide and writes the ``pg_hba.conf`` lines that reject the tool roles elsewhere.
:func:`hba_admits` reads ``pg_hba_file_rules`` the way the server matches lines, for this
command and for ``audit grants``. SQL: ``sql/postgres/confine_queries.sql``.
"""

from __future__ import annotations

import re
import shlex
from typing import Any, Literal
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from pydantic import BaseModel

from backend.erp.grants import DEFAULT_ROLE_PREFIX, tool_roles
from backend.exceptions import ConfigError, StorageError
from backend.store.queries import composed, load_queries

Mode = Literal["owned", "shared"]
_PLAIN = re.compile(r"^[a-z_][a-z0-9_$]*$")
_HBA_KEYWORDS = frozenset({"all", "sameuser", "samerole", "samegroup", "replication"})
_DEBIAN_DATA = re.compile(r"^/var/lib/postgresql/(?P<ver>\d+)/(?P<cluster>[^/]+)/?$")


class ConfineError(StorageError):
    """PostgreSQL refused a read or a change; the transaction was rolled back."""


class HbaRule(BaseModel):
    """One line of ``pg_hba.conf`` as ``pg_hba_file_rules`` reads it."""

    line_number: int
    type: str | None
    database: list[str] = []
    user_name: list[str] = []
    address: str | None = None
    netmask: str | None = None
    auth_method: str | None = None
    error: str | None = None

    def text(self) -> str:
        """The line, re-assembled (``host all all 127.0.0.1/32 scram-sha-256``)."""
        parts = [self.type or "?", ",".join(self.database), ",".join(self.user_name)]
        if self.type != "local":
            parts.append(self.address or "")
        return " ".join([*parts, self.auth_method or ""]).strip()


class HbaView(BaseModel):
    """``pg_hba.conf`` when this connection may read it; ``problem`` says why not."""

    rules: list[HbaRule] | None = None
    problem: str | None = None
    hba_file: str | None = None
    data_directory: str | None = None
    cluster_name: str | None = None


def read_hba(conn: Any) -> HbaView:
    """Read ``pg_hba_file_rules`` and where the file lives, each where this role may.

    Every read runs in a savepoint (``conn`` is inside a transaction), so a refused one
    leaves the others and the caller's transaction usable.
    """
    import psycopg

    q = load_queries("postgres")
    view = HbaView()
    try:
        with conn.transaction():
            row = conn.execute(q["confine_settings"]).fetchone()
        view.hba_file, view.data_directory = row["hba_file"], row["data_directory"]
        view.cluster_name = row["cluster_name"] or None
    except psycopg.errors.InsufficientPrivilege:
        pass  # SHOW hba_file needs superuser or pg_read_all_settings
    try:
        with conn.transaction():
            rows = conn.execute(q["confine_hba_rules"]).fetchall()
    except psycopg.errors.InsufficientPrivilege:
        view.problem = "pg_hba.conf is not verifiable without superuser (pg_hba_file_rules)"
        return view
    view.rules = [HbaRule.model_validate(dict(r)) for r in rows]
    broken = [r for r in view.rules if r.error]
    if broken:
        view.problem = (
            f"pg_hba.conf line {broken[0].line_number} has an error ({broken[0].error}): "
            "the server keeps its previous rules, which cannot be read"
        )
        return view
    try:
        with conn.transaction():
            stale = conn.execute(q["confine_hba_stale"]).fetchone()["stale"]
    except psycopg.errors.InsufficientPrivilege:
        stale = False  # pg_stat_file refused: the rules are read as loaded
    if stale:
        view.problem = "pg_hba.conf changed after the server last loaded it (reload it)"
    return view


def hba_admits(
    rules: list[HbaRule], role: str, database: str, groups: frozenset[str] = frozenset()
) -> HbaRule | None:
    """The first line that lets ``role`` into ``database`` over some connection, or None.

    Lines are matched in order, as the server does (first match wins). A ``reject`` line for
    ``local``, or for ``host`` with address ``all``, closes that kind of connection for the
    lines below it; a narrower reject (``hostssl``, one address range) closes nothing for
    certain, so a later accepting line still counts. ``groups`` are the roles ``role`` is a
    member of (``+group``, ``samerole``). No matching line at all means rejected.
    """
    closed: set[str] = set()
    for rule in rules:
        if rule.error or rule.type is None:
            continue
        kind = "local" if rule.type == "local" else "host"
        if kind in closed or not _db_matches(rule.database, database, role, groups):
            continue
        if not _user_matches(rule.user_name, role, groups):
            continue
        if rule.auth_method != "reject":
            return rule
        if rule.type == "local" or (rule.type == "host" and rule.address == "all"):
            closed.add(kind)
    return None


def _db_matches(names: list[str], database: str, role: str, groups: frozenset[str]) -> bool:
    for name in names:
        if name == "all" or name == database:
            return True
        if name == "sameuser" and database == role:
            return True
        if name in ("samerole", "samegroup") and database in groups:
            return True
    return False


def _user_matches(names: list[str], role: str, groups: frozenset[str]) -> bool:
    return any(n == "all" or n == role or (n.startswith("+") and n[1:] in groups) for n in names)


def hba_name(name: str) -> str:
    """``name`` as a ``pg_hba.conf`` field: double-quoted (``"`` doubled) unless plain."""
    if _PLAIN.match(name) and name not in _HBA_KEYWORDS:
        return name
    return '"' + name.replace('"', '""') + '"'


def shown_url(url: str) -> str:
    """``url`` without its password (userinfo or ``?password=``), to print in a command."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        user, _, host = netloc.rpartition("@")
        netloc = f"{user.partition(':')[0]}@{host}"
    query = urlencode([(k, v) for k, v in parse_qsl(parts.query) if k != "password"])
    return urlunsplit(parts._replace(netloc=netloc, query=query))


def fix_command(url: str) -> str:
    """The command that confines the tool roles of the deployment at ``url``."""
    return f"cadencia db confine --database {shlex.quote(shown_url(url))}"


class Statement(BaseModel):
    """One change: what it is for, and its SQL."""

    why: str
    sql: str


class ConfineReport(BaseModel):
    """What ``db confine`` decided, changed (or would change) and could not change."""

    database: str
    mode: Mode
    reason: str
    dry_run: bool
    applied: bool = False
    statements: list[Statement] = []
    blocked: list[str] = []
    """Databases it could not safely change, each with why (listed, never skipped)."""
    hba_lines: list[str] = []
    hba_status: Literal["applied", "missing", "unverifiable", "not-needed"] = "not-needed"
    hba_note: str | None = None
    hba_file: str | None = None
    """Where the lines go (``SHOW hba_file``), when this role may read it."""
    reload: list[str] = []
    notes: list[str] = []


def confine(
    url: str,
    prefix: str = DEFAULT_ROLE_PREFIX,
    *,
    mode: Mode | None = None,
    dry_run: bool = False,
    address: str | None = None,
    iam_auth: bool = False,
) -> ConfineReport:
    """Confine the tool roles of the deployment at ``url`` to its database.

    Args:
        url: the deployment's PostgreSQL URL (the admin role that ran ``db migrate``).
        prefix: the deployment's tool role prefix.
        mode: ``owned`` or ``shared``; None detects it (:func:`detect_mode`).
        dry_run: plan only; the statements are returned, not run.
        address: the address the tool roles connect from, for the ``pg_hba.conf`` lines
            (default: this connection's client address, or the socket).
        iam_auth: the tool roles use RDS IAM tokens (also detected from ``rds_iam``).

    Raises:
        ConfigError: not a PostgreSQL URL, or the tool roles do not exist yet.
        ConfineError: PostgreSQL refused a change; the transaction is rolled back.
    """
    if urlsplit(url).scheme not in ("postgresql", "postgres"):
        raise ConfigError(
            "db confine works on PostgreSQL: SQLite has no cluster and no other database "
            "(each tool connection gets an authorizer). Pass --database postgresql://…",
            url=shown_url(url),
        )
    if address is not None:
        address = _cidr(address)
    import psycopg
    from psycopg.rows import dict_row

    try:
        with psycopg.connect(url, row_factory=dict_row) as conn:
            # One transaction: the catalogs read, every change, one COMMIT (or none).
            report = _plan(conn, prefix, mode, dry_run, address, iam_auth)
            if dry_run:
                conn.rollback()
            elif report.statements:
                for st in report.statements:
                    conn.execute(st.sql.encode())
                conn.commit()
                report.applied = True
    except psycopg.Error as exc:
        raise ConfineError(f"nothing changed: PostgreSQL refused ({exc})".strip()) from exc
    return report


def _cidr(address: str) -> str:
    """``address`` as a CIDR for ``pg_hba.conf`` (``10.0.0.5`` → ``10.0.0.5/32``)."""
    import ipaddress

    try:
        return str(ipaddress.ip_network(address.strip(), strict=False))
    except ValueError as exc:
        raise ConfigError(f"--address must be an IP address or CIDR, not {address!r}") from exc


def detect_mode(
    me: str, superuser: bool, other_logins: list[str], dbs: list[Any]
) -> tuple[Mode, str]:
    """``owned`` only when nobody else can be using the cluster, else ``shared``.

    Owned: the connecting role may change every other database PUBLIC can reach (it is a
    superuser or their owner) and no login role exists besides superusers, itself and this
    deployment's tool roles. Anything else (another team's role, another deployment's tool
    roles, a database it does not own) is treated as shared: no cluster-wide change.
    """
    if other_logins:
        shown = ", ".join(other_logins[:5]) + (" …" if len(other_logins) > 5 else "")
        return "shared", (
            f"other login roles use this cluster ({shown}): treated as shared; "
            "--owned-cluster confines it anyway (they keep their access)"
        )
    foreign = [d["name"] for d in dbs if d["public_connect"] and not d["can_change"]]
    if foreign:
        return "shared", (f"{me} cannot change database(s) {', '.join(foreign)}: treated as shared")
    what = "a superuser" if superuser else "owner of every other database"
    return "owned", (
        f"{me} is {what} and the only login role besides superusers and the tool roles: "
        "treated as owned (--shared-cluster to leave the cluster as it is)"
    )


def _plan(
    conn: Any, prefix: str, mode: Mode | None, dry_run: bool, address: str | None, iam: bool
) -> ConfineReport:
    q = load_queries("postgres")
    roles = list(tool_roles(prefix))
    params = {"roles": roles}
    present = {r["rolname"] for r in conn.execute(q["roles_present"], params).fetchall()}
    missing = [r for r in roles if r not in present]
    if missing:
        raise ConfigError(
            f"tool role(s) {', '.join(missing)} do not exist: run cadencia db migrate first"
        )
    head = conn.execute(q["confine_head"]).fetchone()
    dbs = conn.execute(q["confine_databases"], params).fetchall()
    others = [r["rolname"] for r in conn.execute(q["confine_other_logins"], params).fetchall()]
    groups: dict[str, set[str]] = {}
    for g in conn.execute(q["confine_groups"], params).fetchall():
        groups.setdefault(g["member"], set()).add(g["grp"])
    iam = iam or any("rds_iam" in g for g in groups.values())
    if mode is None:
        mode, reason = detect_mode(head["me"], head["superuser"], others, dbs)
    else:
        reason = f"--{mode}-cluster"
    report = ConfineReport(database=head["db"], mode=mode, reason=reason, dry_run=dry_run)
    missing_erp = [r["rolname"] for r in conn.execute(q["confine_erp_missing"], params)]
    if missing_erp:
        _add(
            report,
            conn,
            "tool roles CONNECT to the ERP database",
            "confine_grant_connect",
            db=head["db"],
            roles=missing_erp,
        )
    if mode == "owned":
        _plan_owned(report, conn, dbs, roles)
    else:
        _plan_shared(report, conn, head, roles, groups, address, iam)
    return report


def _add(report: ConfineReport, conn: Any, why: str, name: str, **parts: Any) -> None:
    report.statements.append(Statement(why=why, sql=composed(name, **parts).as_string(conn)))


def _plan_owned(report: ConfineReport, conn: Any, dbs: list[Any], roles: list[str]) -> None:
    q = load_queries("postgres")
    for d in dbs:
        name = d["name"]
        if not (d["public_connect"] or d["tool_grants"]):
            continue
        if not d["can_change"]:
            report.blocked.append(
                f"{name}: owned by {d['owner']}, which {report.database}'s admin is not "
                "(its owner or a superuser must run this, or reject the tool roles in "
                "pg_hba.conf: --shared-cluster prints the lines)"
            )
            continue
        if d["tool_grants"]:
            _add(
                report,
                conn,
                f"tool roles' own grants on {name}",
                "confine_revoke_tools",
                db=name,
                roles=list(d["tool_grants"]),
            )
        if not d["public_connect"]:
            continue
        keep = [
            r["rolname"]
            for r in conn.execute(q["confine_keep_roles"], {"db": name, "roles": roles})
        ]
        if keep:
            _add(
                report,
                conn,
                f"keep CONNECT on {name} for the roles that had it via PUBLIC",
                "confine_grant_connect",
                db=name,
                roles=keep,
            )
        _add(
            report,
            conn,
            f"PUBLIC (so every tool role) loses CONNECT on {name}",
            "confine_revoke_public",
            db=name,
        )
    report.notes.append(
        "superusers need no CONNECT; CREATE DATABASE copies template1 without connecting "
        "to it (createdb connects to postgres, kept for every login role that had it). A "
        "database created later gets PostgreSQL's default ACL again: run this again "
        "(audit grants says when)"
    )


def _plan_shared(
    report: ConfineReport,
    conn: Any,
    head: Any,
    roles: list[str],
    groups: dict[str, set[str]],
    address: str | None,
    iam: bool,
) -> None:
    hba = read_hba(conn)
    q = load_queries("postgres")
    others = [d["name"] for d in conn.execute(q["confine_databases"], {"roles": roles})]
    who = ",".join(hba_name(r) for r in roles)
    method = "pam" if iam else "scram-sha-256"
    db = hba_name(head["db"])
    if address is None and not head["via_socket"]:
        address = head["client_addr"] + ("/128" if ":" in head["client_addr"] else "/32")
    allow = (
        f"local   {db}   {who}   {method}"
        if address is None
        else f"host    {db}   {who}   {address}   {method}"
    )
    report.hba_lines = [
        allow,
        f"host    all   {who}   all   reject",
        f"local   all   {who}   reject",
    ]
    if hba.rules is None or hba.problem:
        report.hba_status = "unverifiable"
        report.hba_note = hba.problem
    else:
        rules = hba.rules
        open_ = [
            (r, d, rule)
            for r in roles
            for d in others
            if (rule := hba_admits(rules, r, d, frozenset(groups.get(r, ()))))
        ]
        report.hba_status = "missing" if open_ else "applied"
        if open_:
            r, d, rule = open_[0]
            report.hba_note = (
                f"pg_hba.conf line {rule.line_number} ({rule.text()}) lets {r} into {d}"
            )
    report.reload = _reload_commands(hba)
    report.hba_file = hba.hba_file
    if iam:
        report.notes.append(
            "the tool roles authenticate with RDS IAM tokens (rds_iam): RDS matches them "
            "with its own rules (method pam) and pg_hba.conf cannot be edited on RDS; there, "
            "run --owned-cluster as the master user, which owns the other databases"
        )


def _reload_commands(hba: HbaView) -> list[str]:
    # printed, not run: what an operator runs as a superuser once pg_hba.conf is edited
    out = [load_queries("postgres")["confine_reload"].strip() + ";"]
    data = hba.data_directory
    found = _DEBIAN_DATA.match(data or "")
    if found:
        out.append(f"pg_ctlcluster {found['ver']} {shlex.quote(found['cluster'])} reload")
    out.append(f"pg_ctl reload -D {shlex.quote(data) if data else '<data_directory>'}")
    return out
