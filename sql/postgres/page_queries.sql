-- PostgreSQL versions of the keyset pages over timestamp columns (sql/page_queries.sql):
-- the cursor carries the timestamp as text, so it is cast to the column's type here.

-- name: handoffs_page
-- Oldest first; uses handoffs_offered_idx (offered_at, id).
SELECT id, project_id, session_id, from_agent, to_agent, status, note, offered_at, accepted_at,
       accepted_by, declined_at, declined_by, decline_reason
FROM handoffs
WHERE (CAST(%(project_id)s AS TEXT) IS NULL OR project_id = %(project_id)s)
  AND (CAST(%(status)s AS TEXT) IS NULL OR status = %(status)s)
  AND (CAST(%(after_at)s AS TEXT) IS NULL OR offered_at > CAST(%(after_at)s AS TIMESTAMPTZ)
       OR (offered_at = CAST(%(after_at)s AS TIMESTAMPTZ) AND id > %(after_id)s))
ORDER BY offered_at, id
LIMIT %(limit)s

-- name: projects_page
-- Oldest first; uses projects_created_idx (created_at, id).
SELECT id, name, repo_path, module_map, execution_activated, created_at
FROM projects
WHERE CAST(%(after_at)s AS TEXT) IS NULL OR created_at > CAST(%(after_at)s AS TIMESTAMPTZ)
   OR (created_at = CAST(%(after_at)s AS TIMESTAMPTZ) AND id > %(after_id)s)
ORDER BY created_at, id
LIMIT %(limit)s

-- name: prs_in_review_page
-- Open PRs oldest first; uses pull_requests_open_idx (created_at, id) WHERE open.
SELECT id, kind, project_id, session_id, task_id, author, title, branch, pr_id, pr_url, head,
       files, findings, gate_status, gate_correction_count, blocked, blocked_reason, created_at,
       updated_at
FROM pull_requests
WHERE gate_status NOT IN ('merged', 'closed')
  AND (CAST(%(project_id)s AS TEXT) IS NULL OR project_id = %(project_id)s)
  AND (CAST(%(kind)s AS TEXT) IS NULL OR kind = %(kind)s)
  AND (CAST(%(after_at)s AS TEXT) IS NULL OR created_at > CAST(%(after_at)s AS TIMESTAMPTZ)
       OR (created_at = CAST(%(after_at)s AS TIMESTAMPTZ) AND id > %(after_id)s))
ORDER BY created_at, id
LIMIT %(limit)s
