-- The tool login roles (backend/erp/roles.py). Role names are identifiers, not values:
-- {role} is filled with psycopg.sql.Identifier, {password} with psycopg.sql.Literal
-- (ALTER ROLE takes no bind parameters).

-- name: roles_lock
-- Two processes migrating at once must not both try CREATE ROLE.
SELECT pg_advisory_xact_lock(738700003)

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
