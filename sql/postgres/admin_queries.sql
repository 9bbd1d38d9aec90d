-- PostgreSQL administration: the migrations table, the tool roles, `audit grants` and
-- `teardown`. Queries whose statement names a role take it as a `{role}` placeholder that
-- backend.store.queries.composed() fills with psycopg.sql.Identifier, never with text.

-- name: migrations_table_present
SELECT to_regclass('schema_migrations') IS NOT NULL AS present

-- name: migrations_first_lock
-- Only while the migrations table does not exist yet (a fresh database, before any tool
-- role exists): two processes creating it at once wait on this arbitrary constant.
SELECT pg_advisory_xact_lock(738700001)

-- name: migrations_lock
-- Every process migrating (or re-creating the tool roles of) the same PostgreSQL waits on
-- this table lock. Not an advisory lock: any role can take any advisory lock and hold it
-- forever, a tool role included; LOCK TABLE needs a privilege on the table that no tool
-- role has (it is refused at once, never queued).
LOCK TABLE schema_migrations IN EXCLUSIVE MODE

-- name: migrations_table
CREATE TABLE IF NOT EXISTS schema_migrations
    (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL)

-- name: migrations_applied
SELECT version FROM schema_migrations

-- name: migration_record
INSERT INTO schema_migrations (version, name, applied_at) VALUES (%(version)s, %(name)s, %(now)s)

-- name: roles_present
SELECT rolname FROM pg_roles WHERE rolname = ANY(%(roles)s) ORDER BY 1

-- name: roles_without_login
SELECT rolname FROM pg_roles WHERE rolname = ANY(%(roles)s) AND NOT rolcanlogin ORDER BY 1

-- name: role_login
ALTER ROLE {role} LOGIN

-- name: role_nologin
ALTER ROLE {role} NOLOGIN

-- name: role_drop
DROP ROLE {role}

-- name: roles_drop_owned
-- Everything the roles own goes to the admin running teardown, then every privilege they
-- hold in this database is revoked; DROP ROLE needs both.
REASSIGN OWNED BY {roles} TO CURRENT_USER; DROP OWNED BY {roles}

-- name: role_sessions
SELECT count(*) AS n FROM pg_stat_activity WHERE usename = ANY(%(roles)s)

-- name: role_sessions_terminate
SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) AS n
FROM pg_stat_activity WHERE usename = ANY(%(roles)s) AND pid <> pg_backend_pid()

-- name: roles_in_other_databases
SELECT d.datname, r.rolname, count(*) AS n
FROM pg_shdepend s JOIN pg_database d ON d.oid = s.dbid JOIN pg_roles r ON r.oid = s.refobjid
WHERE s.refclassid = 'pg_authid'::regclass AND r.rolname = ANY(%(roles)s)
  AND d.datname <> current_database()
GROUP BY 1, 2 ORDER BY 1, 2

-- name: roles_left
SELECT r.rolname, r.rolcanlogin,
       (SELECT count(*) FROM pg_shdepend s
        WHERE s.refobjid = r.oid AND s.refclassid = 'pg_authid'::regclass
          AND s.dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
       ) AS here
FROM pg_roles r WHERE r.rolname = ANY(%(roles)s) ORDER BY 1

-- name: ledger_tables_present
SELECT t FROM unnest(%(tables)s::text[]) AS t WHERE to_regclass(t) IS NOT NULL

-- name: ledger_drop_tables
DROP TABLE IF EXISTS ledger_records, ledger_counters

-- name: audit_head
SELECT current_database() AS db, current_schema() AS schema

-- name: audit_roles
SELECT rolname, rolsuper, rolcreaterole, rolcreatedb, rolreplication, rolbypassrls, rolinherit,
       rolcanlogin
FROM pg_roles WHERE rolname = ANY(%(roles)s)

-- name: audit_memberships
SELECT m.rolname AS member, r.rolname AS role, a.admin_option
FROM pg_auth_members a JOIN pg_roles r ON r.oid = a.roleid JOIN pg_roles m ON m.oid = a.member
WHERE m.rolname = ANY(%(roles)s) ORDER BY 1, 2

-- name: audit_privileges
-- Read from the catalogs, not information_schema: its column_privileges view also lists
-- every column implied by a table-level grant. aclexplode keeps the two apart, as \dp does.
-- "User schemas" excludes pg_catalog, information_schema and pg_toast*.
SELECT CASE WHEN e.grantee = 0 THEN 'PUBLIC' ELSE g.rolname END AS grantee,
       n.nspname AS schema, c.relname AS name, c.relkind::text AS kind,
       NULL::text AS column_name, e.privilege_type AS privilege, e.is_grantable AS grantable
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
CROSS JOIN LATERAL aclexplode(c.relacl) e LEFT JOIN pg_roles g ON g.oid = e.grantee
WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%%'
  AND (e.grantee = 0 OR g.rolname = ANY(%(roles)s))
UNION ALL
SELECT CASE WHEN e.grantee = 0 THEN 'PUBLIC' ELSE g.rolname END,
       n.nspname, c.relname, c.relkind::text, a.attname::text, e.privilege_type, e.is_grantable
FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
CROSS JOIN LATERAL aclexplode(a.attacl) e LEFT JOIN pg_roles g ON g.oid = e.grantee
WHERE a.attnum > 0 AND NOT a.attisdropped
  AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%%'
  AND (e.grantee = 0 OR g.rolname = ANY(%(roles)s))
UNION ALL
SELECT CASE WHEN e.grantee = 0 THEN 'PUBLIC' ELSE g.rolname END,
       n.nspname, n.nspname, 'schema', NULL, e.privilege_type, e.is_grantable
FROM pg_namespace n CROSS JOIN LATERAL aclexplode(n.nspacl) e
LEFT JOIN pg_roles g ON g.oid = e.grantee
WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%%'
  AND (g.rolname = ANY(%(roles)s) OR (e.grantee = 0 AND e.privilege_type = 'CREATE'))
UNION ALL
SELECT g.rolname, n.nspname, p.oid::regprocedure::text, 'function', NULL,
       e.privilege_type, e.is_grantable
FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
CROSS JOIN LATERAL aclexplode(p.proacl) e JOIN pg_roles g ON g.oid = e.grantee
WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%%'
  AND g.rolname = ANY(%(roles)s)
UNION ALL
SELECT g.rolname, NULL, d.datname, 'database', NULL, e.privilege_type, e.is_grantable
FROM pg_database d CROSS JOIN LATERAL aclexplode(d.datacl) e JOIN pg_roles g ON g.oid = e.grantee
WHERE d.datname = current_database() AND g.rolname = ANY(%(roles)s)
  AND e.privilege_type NOT IN ('CONNECT', 'TEMPORARY')
ORDER BY 1, 2, 3, 5 NULLS FIRST, 6

-- name: audit_owned
SELECT o.rolname AS owner, n.nspname AS schema, c.relname AS name, c.relkind::text AS kind
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace JOIN pg_roles o ON o.oid = c.relowner
WHERE o.rolname = ANY(%(roles)s) AND c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f', 'c')
UNION ALL
SELECT o.rolname, n.nspname, n.nspname, 'schema'
FROM pg_namespace n JOIN pg_roles o ON o.oid = n.nspowner WHERE o.rolname = ANY(%(roles)s)
UNION ALL
SELECT o.rolname, n.nspname, p.oid::regprocedure::text, 'function'
FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace JOIN pg_roles o ON o.oid = p.proowner
WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%%'
  AND o.rolname = ANY(%(roles)s)
UNION ALL
SELECT o.rolname, NULL, d.datname, 'database'
FROM pg_database d JOIN pg_roles o ON o.oid = d.datdba WHERE o.rolname = ANY(%(roles)s)
ORDER BY 1, 2, 3

-- name: audit_default_acls
SELECT o.rolname AS owner, n.nspname AS schema, d.defaclobjtype::text AS objtype,
       CASE WHEN e.grantee = 0 THEN 'PUBLIC' ELSE g.rolname END AS grantee,
       e.privilege_type AS privilege
FROM pg_default_acl d JOIN pg_roles o ON o.oid = d.defaclrole
LEFT JOIN pg_namespace n ON n.oid = d.defaclnamespace
CROSS JOIN LATERAL aclexplode(d.defaclacl) e LEFT JOIN pg_roles g ON g.oid = e.grantee
WHERE g.rolname = ANY(%(roles)s) OR o.rolname = ANY(%(roles)s)
   OR (e.grantee = 0 AND d.defaclobjtype IN ('r', 'S'))
ORDER BY 1, 2, 3, 4, 5

-- name: audit_databases
-- What each tool role may EFFECTIVELY do on every database it could reach: through PUBLIC
-- (a database's default ACL gives PUBLIC CONNECT and TEMPORARY) or a grant of its own.
SELECT d.datname AS name, r.rolname AS role, d.datname = current_database() AS here,
       has_database_privilege(r.oid, d.oid, 'CONNECT') AS can_connect,
       has_database_privilege(r.oid, d.oid, 'TEMPORARY') AS can_temp,
       EXISTS (SELECT 1 FROM aclexplode(d.datacl) e
               WHERE e.grantee = r.oid AND e.privilege_type = 'CONNECT') AS granted_connect,
       EXISTS (SELECT 1 FROM aclexplode(d.datacl) e WHERE e.grantee = r.oid) AS granted_any
FROM pg_database d CROSS JOIN pg_roles r
WHERE r.rolname = ANY(%(roles)s) AND d.datallowconn
ORDER BY 1, 2

-- name: audit_functions
-- Functions of user schemas a tool role may EXECUTE, whoever granted it: PostgreSQL gives
-- PUBLIC EXECUTE on every new function, and a SECURITY DEFINER one runs as its owner.
SELECT r.rolname AS role, n.nspname AS schema, p.oid::regprocedure::text AS name,
       p.prosecdef AS definer
FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace CROSS JOIN pg_roles r
WHERE r.rolname = ANY(%(roles)s)
  AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%%'
  AND has_function_privilege(r.oid, p.oid, 'EXECUTE')
ORDER BY 1, 2, 3
