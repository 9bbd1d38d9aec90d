-- The tool login roles (backend/erp/roles.py). Role names are identifiers, not values:
-- {role} is filled with psycopg.sql.Identifier, {password} with psycopg.sql.Literal
-- (ALTER ROLE takes no bind parameters).

-- name: roles_lock
-- Two processes migrating at once must not both try CREATE ROLE. The migrations table's
-- lock (see admin_queries.sql: a table lock no tool role can take or block); the table
-- exists, the migrations ran first.
LOCK TABLE schema_migrations IN EXCLUSIVE MODE

-- name: role_exists
SELECT 1 FROM pg_roles WHERE rolname = %(role)s

-- name: role_create
CREATE ROLE {role} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT

-- name: role_set_password
ALTER ROLE {role} PASSWORD {password}

-- name: rds_iam_exists
SELECT 1 FROM pg_roles WHERE rolname = 'rds_iam'

-- name: role_grant_rds_iam
GRANT rds_iam TO {role}

-- name: database_confine_public
-- Every role inherits PUBLIC's privileges, and PostgreSQL grants PUBLIC TEMPORARY on every
-- new database: a tool role could create temporary tables here. This database is ours, so
-- PUBLIC loses TEMPORARY on it; the role running the backend keeps it explicitly (a
-- non-owner admin would otherwise lose it). CONNECT stays as PostgreSQL set it here; each
-- tool role gets its own, explicitly (the audit checks it is there).
REVOKE TEMPORARY ON DATABASE {db} FROM PUBLIC;
GRANT CONNECT, TEMPORARY ON DATABASE {db} TO CURRENT_USER

-- name: database_tool_connect
-- A tool role's only database privilege: CONNECT on the ERP database, nothing else.
REVOKE ALL ON DATABASE {db} FROM {role};
GRANT CONNECT ON DATABASE {db} TO {role}

-- name: current_database
SELECT current_database() AS db
