-- The audit trail's page (GET /api/audit): the log's events of the operator-action types.

-- name: audit_page
SELECT id, type, ts, project_id, session_id, agent, payload FROM events
WHERE type IN (SELECT value FROM json_each(%(types)s))
  AND id > %(after)s AND id <= %(upto)s
  AND (CAST(%(operator)s AS TEXT) IS NULL OR json_extract(payload, '$.operator') = %(operator)s)
ORDER BY id LIMIT %(limit)s

-- name: pr_lock
-- SQLite: a write transaction (BEGIN IMMEDIATE) already excludes every other writer.
SELECT id FROM pull_requests WHERE id = %(pr_id)s
