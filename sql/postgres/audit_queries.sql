-- The audit trail's page (GET /api/audit): the log's events of the operator-action types.

-- name: audit_page
SELECT id, type, ts, project_id, session_id, agent, payload FROM events
WHERE type = ANY(%(types)s)
  AND id > %(after)s AND id <= %(upto)s
  AND (CAST(%(operator)s AS TEXT) IS NULL OR payload ->> 'operator' = %(operator)s)
ORDER BY id LIMIT %(limit)s

-- name: pr_lock
-- Two approvals of one PR at once: the second waits, then counts the first's row.
SELECT id FROM pull_requests WHERE id = %(pr_id)s FOR UPDATE
