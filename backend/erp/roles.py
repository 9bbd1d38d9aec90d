"""Create the three tool login roles on PostgreSQL and apply the grants spec.

Idempotent: roles that exist are kept (roles are cluster-wide, so another database may
already have made them); their password is (re)set only when this data dir's secret
store has none, and the stored one is used from then on. Grants are always re-applied
from ``sql/postgres/grants.sql`` (the rendering of :mod:`backend.erp.grants`, which starts
with ``REVOKE ALL``), so a drifted grant is repaired. The statements are named queries in
``sql/postgres/roles_queries.sql``.
"""

from __future__ import annotations

import secrets as _secrets
from typing import TYPE_CHECKING

from backend.erp.grants import TOOL_ROLES, committed_postgres_grants
from backend.exceptions import SecretError, StorageError
from backend.store.db import PostgresDatabase
from backend.store.queries import load_queries

if TYPE_CHECKING:
    from backend.erp.connections import CredentialFn
    from backend.secrets.base import SecretStore
    from backend.settings import Settings


def role_secret_id(role: str) -> str:
    """Where a tool role's password lives in the secret store."""
    return f"db/{role}"


def ensure_tool_roles(
    db: PostgresDatabase, store: SecretStore, *, iam_auth: bool = False
) -> list[str]:
    """Create missing roles, set credentials, apply grants. Returns the roles created."""
    import psycopg
    from psycopg import sql

    queries = load_queries("postgres")

    def identified(name: str, role: str, **literals: str) -> sql.Composed:
        """Query ``name`` with ``{role}`` as an identifier and other fields as literals."""
        return sql.SQL(queries[name]).format(
            role=sql.Identifier(role), **{k: sql.Literal(v) for k, v in literals.items()}
        )

    created: list[str] = []
    try:
        with db.pool.connection() as conn, conn.transaction():
            conn.execute(queries["roles_lock"])
            for role in TOOL_ROLES:
                exists = conn.execute(queries["role_exists"], {"role": role}).fetchone()
                if not exists:
                    conn.execute(identified("role_create", role))
                    created.append(role)
                if not iam_auth:
                    # Setting the stored password again is a no-op on a second run and
                    # repairs a role whose password another data dir changed.
                    try:
                        password = store.get(role_secret_id(role))
                    except SecretError:
                        password = _secrets.token_urlsafe(24)
                        store.put(role_secret_id(role), password)
                    conn.execute(identified("role_set_password", role, password=password))
                if iam_auth and conn.execute(queries["rds_iam_exists"]).fetchone():
                    conn.execute(identified("role_grant_rds_iam", role))
            conn.execute(committed_postgres_grants())
            here = conn.execute(queries["current_database"]).fetchone()
            database = here["db"] if isinstance(here, dict) else here[0]
            conn.execute(
                sql.SQL(queries["database_confine_public"]).format(db=sql.Identifier(database))
            )
            for role in TOOL_ROLES:
                conn.execute(
                    sql.SQL(queries["database_tool_connect"]).format(
                        db=sql.Identifier(database), role=sql.Identifier(role)
                    )
                )
    except psycopg.Error as exc:
        raise StorageError(f"could not create tool roles or apply grants: {exc}") from exc
    return created


def credential_fn(settings: Settings, store: SecretStore, db_url: str) -> CredentialFn:
    """How tool connections authenticate: stored passwords, or RDS IAM auth tokens."""
    if not settings.iam_auth:
        return lambda role: store.get(role_secret_id(role))
    import boto3
    from psycopg.conninfo import conninfo_to_dict

    params = conninfo_to_dict(db_url)
    client = boto3.client("rds", **settings.boto3_kwargs())

    def token(role: str) -> str:
        return str(
            client.generate_db_auth_token(
                DBHostname=params.get("host", "localhost"),
                Port=int(str(params.get("port") or 5432)),
                DBUsername=role,
                Region=settings.aws_region,
            )
        )

    return token
