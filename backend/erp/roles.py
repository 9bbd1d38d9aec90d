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
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from backend.erp.grants import (
    DEFAULT_ROLE_PREFIX,
    committed_postgres_grants,
    deployed_role,
    render_postgres_grants,
    tool_roles,
)
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
    db: PostgresDatabase,
    store: SecretStore,
    *,
    iam_auth: bool = False,
    prefix: str = DEFAULT_ROLE_PREFIX,
) -> list[str]:
    """Create missing roles, set credentials, apply grants. Returns the roles created.

    Only the roles of this deployment's ``prefix`` (``CADENCIA_ROLE_PREFIX``): another
    deployment on the same cluster, with its own prefix, keeps its roles and passwords.
    """
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
            for role in tool_roles(prefix):
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
            conn.execute(
                committed_postgres_grants()
                if prefix == DEFAULT_ROLE_PREFIX
                else render_postgres_grants(prefix)
            )
            here: Any = conn.execute(queries["current_database"]).fetchone()  # dict_row pool
            database = str(here["db"])
            conn.execute(
                sql.SQL(queries["database_confine_public"]).format(db=sql.Identifier(database))
            )
            for role in tool_roles(prefix):
                conn.execute(
                    sql.SQL(queries["database_tool_connect"]).format(
                        db=sql.Identifier(database), role=sql.Identifier(role)
                    )
                )
    except psycopg.Error as exc:
        raise StorageError(f"could not create tool roles or apply grants: {exc}") from exc
    return created


class RoleCredential:
    """A tool connection's login: the deployment's role name for a spec role, and its
    password (or IAM token) through ``secret(login)``."""

    def __init__(self, secret: Callable[[str], str], prefix: str) -> None:
        self._secret = secret
        self.prefix = prefix

    def login(self, role: str) -> str:
        """The PostgreSQL role a spec role logs in as in this deployment."""
        return deployed_role(role, self.prefix)

    def __call__(self, role: str) -> str:
        return self._secret(self.login(role))


def credential_fn(settings: Settings, store: SecretStore, db_url: str) -> CredentialFn:
    """How tool connections authenticate: stored passwords, or RDS IAM auth tokens."""
    if not settings.iam_auth:
        return RoleCredential(lambda login: store.get(role_secret_id(login)), settings.role_prefix)
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

    return RoleCredential(token, settings.role_prefix)
