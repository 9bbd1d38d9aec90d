"""The grants spec: the one source of truth for what each tool may touch in the ERP.

It renders the PostgreSQL ``GRANT`` statements (``sql/postgres/grants.sql`` is its
committed rendering, checked by a test), builds the SQLite per-tool authorizer, and is
what ``cadencia audit grants`` diffs the live database against.

The seed's grants, corrected: ``cadencia_agente_cadastro`` also needs ``SELECT (id)`` on
``clientes`` because PostgreSQL requires SELECT on every column a WHERE clause reads.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from typing import Literal

Privilege = Literal["SELECT", "UPDATE", "INSERT", "DELETE"]

ERP_TABLES: dict[str, tuple[str, ...]] = {
    "pedidos": (
        "id",
        "cliente_id",
        "status",
        "valor_pedido",
        "status_reembolso",
        "valor_reembolsado",
        "criado_em",
    ),
    "clientes": ("id", "nome", "endereco", "telefone", "email"),
}

DEFAULT_ROLE_PREFIX = "cadencia_agente"
"""Tool role names are ``<prefix>_<tool>``. The names below (and the spec) use the default;
a deployment's ``CADENCIA_ROLE_PREFIX`` renames them on PostgreSQL (:func:`deployed_role`)
so two deployments on one cluster never share, re-password or re-grant each other's
roles."""
ROLE_CONSULTA = "cadencia_agente_consulta"
ROLE_REEMBOLSO = "cadencia_agente_reembolso"
ROLE_CADASTRO = "cadencia_agente_cadastro"
TOOL_ROLES: tuple[str, ...] = (ROLE_CONSULTA, ROLE_REEMBOLSO, ROLE_CADASTRO)
"""Which tool runs as which role is its spec's ``role`` (:mod:`backend.tools.registry`)."""


@dataclass(frozen=True)
class Grant:
    """One privilege of one role on one table; ``columns=None`` means the whole table."""

    role: str
    table: str
    privilege: Privilege
    columns: tuple[str, ...] | None = None

    def covers(self, table: str, privilege: str, column: str | None) -> bool:
        """Whether this grant allows ``privilege`` on ``table.column``."""
        if self.table != table or self.privilege != privilege:
            return False
        return self.columns is None or column is None or column in self.columns


GRANTS: tuple[Grant, ...] = (
    Grant(ROLE_CONSULTA, "pedidos", "SELECT"),
    Grant(ROLE_CONSULTA, "clientes", "SELECT"),
    Grant(ROLE_REEMBOLSO, "pedidos", "SELECT", ("id", "valor_pedido")),
    Grant(ROLE_REEMBOLSO, "pedidos", "UPDATE", ("status_reembolso", "valor_reembolsado")),
    Grant(ROLE_CADASTRO, "clientes", "SELECT", ("id",)),
    Grant(ROLE_CADASTRO, "clientes", "UPDATE", ("endereco", "telefone", "email")),
)


def deployed_role(role: str, prefix: str = DEFAULT_ROLE_PREFIX) -> str:
    """The PostgreSQL name of spec role ``role`` in a deployment with ``prefix``."""
    if not role.startswith(DEFAULT_ROLE_PREFIX + "_"):
        raise ValueError(f"not a tool role of the spec: {role!r}")
    return prefix + role[len(DEFAULT_ROLE_PREFIX) :]


def tool_roles(prefix: str = DEFAULT_ROLE_PREFIX) -> tuple[str, ...]:
    """The deployment's tool role names, in spec order."""
    return tuple(deployed_role(r, prefix) for r in TOOL_ROLES)


def grants_for(role: str) -> tuple[Grant, ...]:
    """The grants of one role, in spec order."""
    return tuple(g for g in GRANTS if g.role == role)


def expected_privileges(role: str) -> set[tuple[str, str, str]]:
    """Column-level expansion ``{(table, privilege, column)}`` of a role's grants."""
    out: set[tuple[str, str, str]] = set()
    for g in grants_for(role):
        for column in g.columns or ERP_TABLES[g.table]:
            out.add((g.table, g.privilege, column))
    return out


def render_postgres_grants(prefix: str = DEFAULT_ROLE_PREFIX) -> str:
    """The GRANT statements for every tool role, as committed in ``sql/postgres/grants.sql``
    (the default prefix; another prefix renames the roles, see :func:`deployed_role`)."""
    lines = [
        "-- Rendered from backend/erp/grants.py; do not edit by hand.",
        "-- tests/unit/test_grants.py fails if this file and the spec disagree.",
    ]
    for spec_role in TOOL_ROLES:
        role = deployed_role(spec_role, prefix)
        lines.append(f"REVOKE ALL ON pedidos, clientes FROM {role};")
        for g in grants_for(spec_role):
            cols = f" ({', '.join(g.columns)})" if g.columns else ""
            lines.append(f"GRANT {g.privilege}{cols} ON {g.table} TO {role};")
    return "\n".join(lines) + "\n"


def committed_postgres_grants() -> str:
    """``sql/postgres/grants.sql``: what ``db migrate`` runs (a test keeps it rendered)."""
    return resources.files("sql").joinpath("postgres", "grants.sql").read_text(encoding="utf-8")


AuthorizerFn = Callable[[int, str | None, str | None, str | None, str | None], int]


def sqlite_authorizer(role: str) -> AuthorizerFn:
    """Build the ``set_authorizer`` callback that enforces ``role``'s grants on SQLite.

    Anything not explicitly allowed is denied: other tables, PRAGMA, ATTACH, schema
    changes, INSERT/DELETE, and reads of columns the role has no SELECT on. SQLite
    reports the columns a WHERE clause reads as ``SQLITE_READ`` just like PostgreSQL
    requires SELECT on them, so both engines refuse the same statements.
    """
    grants = grants_for(role)
    allowed_always = {
        sqlite3.SQLITE_SELECT,
        sqlite3.SQLITE_TRANSACTION,
        sqlite3.SQLITE_FUNCTION,
        sqlite3.SQLITE_SAVEPOINT,
    }

    def allowed(table: str, privilege: str, column: str | None) -> bool:
        return any(g.covers(table, privilege, column) for g in grants)

    def authorize(
        action: int, arg1: str | None, arg2: str | None, db: str | None, trigger: str | None
    ) -> int:
        if action in allowed_always:
            return sqlite3.SQLITE_OK
        if action == sqlite3.SQLITE_READ and arg1 is not None:
            if arg1 == "sqlite_master" or arg1 == "sqlite_schema":
                return sqlite3.SQLITE_OK  # the schema must be readable to prepare statements
            return (
                sqlite3.SQLITE_OK if allowed(arg1, "SELECT", arg2 or None) else sqlite3.SQLITE_DENY
            )
        if action == sqlite3.SQLITE_UPDATE and arg1 is not None:
            return sqlite3.SQLITE_OK if allowed(arg1, "UPDATE", arg2) else sqlite3.SQLITE_DENY
        if action == sqlite3.SQLITE_INSERT and arg1 is not None:
            return sqlite3.SQLITE_OK if allowed(arg1, "INSERT", None) else sqlite3.SQLITE_DENY
        if action == sqlite3.SQLITE_DELETE and arg1 is not None:
            return sqlite3.SQLITE_OK if allowed(arg1, "DELETE", None) else sqlite3.SQLITE_DENY
        return sqlite3.SQLITE_DENY

    return authorize
