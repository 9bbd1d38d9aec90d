-- Keyset pages of the list routes (backend/api/paging.py): each reads LIMIT n + 1 rows
-- after the cursor's (sort key, id) on an index, never OFFSET, never the whole table.

-- name: events_before
-- Newest first, below an id: the tail of the log and its older pages (the primary key).
SELECT id, type, ts, project_id, session_id, agent, payload
FROM events WHERE id < %(before)s ORDER BY id DESC LIMIT %(limit)s

-- name: handoffs_page
-- Oldest first; uses handoffs_offered_idx (offered_at, id).
SELECT id, project_id, session_id, from_agent, to_agent, status, note, offered_at, accepted_at,
       accepted_by, declined_at, declined_by, decline_reason
FROM handoffs
WHERE (CAST(%(project_id)s AS TEXT) IS NULL OR project_id = %(project_id)s)
  AND (CAST(%(status)s AS TEXT) IS NULL OR status = %(status)s)
  AND (CAST(%(after_at)s AS TEXT) IS NULL OR offered_at > %(after_at)s
       OR (offered_at = %(after_at)s AND id > %(after_id)s))
ORDER BY offered_at, id
LIMIT %(limit)s

-- name: projects_page
-- Oldest first; uses projects_created_idx (created_at, id).
SELECT id, name, repo_path, module_map, execution_activated, created_at
FROM projects
WHERE CAST(%(after_at)s AS TEXT) IS NULL OR created_at > %(after_at)s
   OR (created_at = %(after_at)s AND id > %(after_id)s)
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
  AND (CAST(%(after_at)s AS TEXT) IS NULL OR created_at > %(after_at)s
       OR (created_at = %(after_at)s AND id > %(after_id)s))
ORDER BY created_at, id
LIMIT %(limit)s

-- name: conversation_messages_newest
-- Newest first, below a message id (conversation_messages_idx (conversa_id, id)).
SELECT m.id, m.role, m.text, m.ts, d.status, d.attempts, d.last_error, d.delivered_at
FROM conversation_messages m
LEFT JOIN message_deliveries d ON d.message_id = m.id
WHERE m.conversa_id = %(conversa_id)s AND m.id < %(before)s
ORDER BY m.id DESC
LIMIT %(limit)s

-- name: events_of_session_type_newest
-- Newest first, below an id (events_session_type_idx (session_id, type, id), migration 0019).
SELECT id, type, ts, project_id, session_id, agent, payload
FROM events
WHERE session_id = %(session_id)s AND type = %(type)s AND id < %(before)s
ORDER BY id DESC
LIMIT %(limit)s

-- name: events_agent_before
-- An agent's turns newest first, below an id: events_agent_type_idx (agent, type, id).
SELECT id, type, ts, project_id, session_id, agent, payload
FROM events
WHERE agent = %(agent)s AND type = %(type)s AND id < %(before)s
  AND (CAST(%(project_id)s AS TEXT) IS NULL OR project_id = %(project_id)s)
  AND (CAST(%(session_id)s AS TEXT) IS NULL OR session_id = %(session_id)s)
ORDER BY id DESC
LIMIT %(limit)s
