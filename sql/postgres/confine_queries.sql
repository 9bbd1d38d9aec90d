-- `cadencia db confine` and the cluster-exposure half of `audit grants`
-- (backend/posture/confine.py). {db} and {roles} are filled with psycopg.sql.Identifier.

-- name: confine_head
SELECT current_database() AS db, current_user AS me,
       (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) AS superuser,
       host(inet_client_addr()) AS client_addr, inet_client_addr() IS NULL AS via_socket,
       current_setting('server_version_num')::int / 10000 AS major

-- name: confine_databases
-- Every OTHER database a role could connect to (template0 has datallowconn false): who owns
-- it, whether this role may change its ACL, whether PUBLIC holds CONNECT (a NULL datacl is
-- the default ACL, which gives PUBLIC CONNECT and TEMPORARY), which tool roles hold a
-- privilege of their own there.
SELECT d.datname AS name, pg_get_userbyid(d.datdba) AS owner,
       (SELECT rolsuper FROM pg_roles WHERE rolname = current_user)
         OR pg_has_role(current_user, d.datdba, 'MEMBER') AS can_change,
       EXISTS (SELECT 1 FROM aclexplode(coalesce(d.datacl, acldefault('d', d.datdba))) e
               WHERE e.grantee = 0 AND e.privilege_type = 'CONNECT') AS public_connect,
       ARRAY(SELECT DISTINCT r.rolname FROM aclexplode(d.datacl) e
             JOIN pg_roles r ON r.oid = e.grantee
             WHERE r.rolname = ANY(%(roles)s) ORDER BY 1) AS tool_grants
FROM pg_database d
WHERE d.datallowconn AND d.datname <> current_database()
ORDER BY 1

-- name: confine_keep_roles
-- The login roles that reach the named database only through PUBLIC: not superusers (they
-- need no privilege), not the tool roles, and holding no CONNECT of their own or of a role
-- whose privileges they inherit (the owner's entry in the ACL included).
SELECT r.rolname FROM pg_roles r CROSS JOIN pg_database d
WHERE d.datname = %(db)s AND r.rolcanlogin AND NOT r.rolsuper
  AND r.rolname <> ALL(%(roles)s)
  AND NOT EXISTS (SELECT 1 FROM aclexplode(coalesce(d.datacl, acldefault('d', d.datdba))) e
                  WHERE e.grantee <> 0 AND e.privilege_type = 'CONNECT'
                    AND pg_has_role(r.oid, e.grantee, 'USAGE'))
ORDER BY 1

-- name: confine_other_logins
-- Login roles that are neither superusers, nor the role running this, nor our tool roles:
-- someone else uses the cluster (another team, another deployment's tool roles).
SELECT rolname FROM pg_roles
WHERE rolcanlogin AND NOT rolsuper AND rolname <> current_user AND rolname <> ALL(%(roles)s)
ORDER BY 1

-- name: confine_erp_missing
-- Tool roles without an explicit CONNECT on this (the ERP) database.
SELECT r.rolname FROM pg_roles r CROSS JOIN pg_database d
WHERE d.datname = current_database() AND r.rolname = ANY(%(roles)s)
  AND NOT EXISTS (SELECT 1 FROM aclexplode(coalesce(d.datacl, acldefault('d', d.datdba))) e
                  WHERE e.grantee = r.oid AND e.privilege_type = 'CONNECT')
ORDER BY 1

-- name: confine_groups
-- Every role each tool role is a member of, directly or not (pg_hba.conf's +group).
SELECT m.rolname AS member, g.rolname AS grp
FROM pg_roles m JOIN pg_roles g ON g.oid <> m.oid AND pg_has_role(m.oid, g.oid, 'MEMBER')
WHERE m.rolname = ANY(%(roles)s)
ORDER BY 1, 2

-- name: confine_hba_rules
-- The pg_hba.conf lines as the file reads NOW (superusers only, by default).
SELECT line_number, type, database, user_name, address, netmask, auth_method, error
FROM pg_hba_file_rules ORDER BY line_number

-- name: confine_hba_stale
-- Whether pg_hba.conf was written after the server last loaded its configuration.
SELECT (pg_stat_file(current_setting('hba_file'))).modification > pg_conf_load_time() AS stale

-- name: confine_settings
SELECT current_setting('hba_file') AS hba_file,
       current_setting('data_directory') AS data_directory,
       current_setting('cluster_name') AS cluster_name

-- name: confine_grant_connect
GRANT CONNECT ON DATABASE {db} TO {roles}

-- name: confine_revoke_public
REVOKE CONNECT ON DATABASE {db} FROM PUBLIC

-- name: confine_revoke_tools
REVOKE ALL ON DATABASE {db} FROM {roles}

-- name: confine_reload
SELECT pg_reload_conf()
