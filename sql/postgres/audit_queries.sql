-- The audit trail's page (GET /api/audit): the log's events of the operator-action types.

-- The audit trail's pages (GET /api/audit), one query per filter so each reads its own
-- index range and stops at LIMIT: all of it (events_type_idx), one operator's
-- (events_operator_action_idx, 0016), one item's (events_audit_subject_idx, 0020). The
-- literal type lets the partial indexes apply; *_tail reads the newest first (the caller
-- reverses them). The one type is catalog.OPERATOR_ACTIONS (a test keeps them equal).

-- name: audit_page
SELECT id, type, ts, project_id, session_id, agent, payload FROM events
WHERE type = 'operator.action' AND id > %(after)s AND id <= %(upto)s
ORDER BY id LIMIT %(limit)s

-- name: audit_tail
SELECT id, type, ts, project_id, session_id, agent, payload FROM events
WHERE type = 'operator.action' AND id <= %(upto)s
ORDER BY id DESC LIMIT %(limit)s

-- name: audit_page_operator
SELECT id, type, ts, project_id, session_id, agent, payload FROM events
WHERE type = 'operator.action' AND id > %(after)s AND id <= %(upto)s
  AND payload ->> 'operator' = %(operator)s
ORDER BY id LIMIT %(limit)s

-- name: audit_tail_operator
SELECT id, type, ts, project_id, session_id, agent, payload FROM events
WHERE type = 'operator.action' AND id <= %(upto)s
  AND payload ->> 'operator' = %(operator)s
ORDER BY id DESC LIMIT %(limit)s

-- name: audit_page_subject
SELECT id, type, ts, project_id, session_id, agent, payload FROM events
WHERE type = 'operator.action' AND id > %(after)s AND id <= %(upto)s
  AND payload ->> 'subject' = %(subject)s
  AND (CAST(%(operator)s AS TEXT) IS NULL OR payload ->> 'operator' = %(operator)s)
ORDER BY id LIMIT %(limit)s

-- name: audit_tail_subject
SELECT id, type, ts, project_id, session_id, agent, payload FROM events
WHERE type = 'operator.action' AND id <= %(upto)s
  AND payload ->> 'subject' = %(subject)s
  AND (CAST(%(operator)s AS TEXT) IS NULL OR payload ->> 'operator' = %(operator)s)
ORDER BY id DESC LIMIT %(limit)s

-- name: pr_lock
-- Two approvals of one PR at once: the second waits, then counts the first's row.
SELECT id FROM pull_requests WHERE id = %(pr_id)s FOR UPDATE
