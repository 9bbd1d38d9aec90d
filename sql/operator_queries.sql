-- Operator accounts and PR approvals (backend/operators, migration 0016).

-- name: operator_insert
INSERT INTO operators (id, name, role, salt, secret_hash, created_at)
VALUES (%(id)s, %(name)s, %(role)s, %(salt)s, %(secret_hash)s, %(now)s)

-- name: operator_by_id
-- The token's id selects the row: one primary-key read per request, never a scan of hashes.
SELECT id, name, role, salt, secret_hash, created_at, revoked_at
FROM operators WHERE id = %(id)s

-- name: operator_live_by_name
SELECT id, name, role, salt, secret_hash, created_at, revoked_at
FROM operators WHERE name = %(name)s AND revoked_at IS NULL

-- name: operator_named
-- Any account ever named so, revoked ones included: the bootstrap token may not act as one.
SELECT 1 AS known FROM operators WHERE name = %(name)s LIMIT 1

-- name: operators_all
SELECT id, name, role, salt, secret_hash, created_at, revoked_at
FROM operators ORDER BY name, created_at

-- name: operator_revoke
UPDATE operators SET revoked_at = %(now)s WHERE name = %(name)s AND revoked_at IS NULL

-- name: pr_approval_insert
-- Conflict (the same operator at the same head) inserts nothing: they cannot count twice.
INSERT INTO pr_approvals (pr_id, head, operator, reason, approved_at)
VALUES (%(pr_id)s, %(head)s, %(operator)s, %(reason)s, %(now)s)
ON CONFLICT (pr_id, head, operator) DO NOTHING

-- name: pr_approvals_of
SELECT operator, reason, approved_at FROM pr_approvals
WHERE pr_id = %(pr_id)s AND head = %(head)s ORDER BY approved_at, operator
