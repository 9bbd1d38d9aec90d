-- Retention: `cadencia events archive` / `restore` (backend/events/archive.py).

-- name: events_archive_count
SELECT COUNT(*) AS n FROM events WHERE ts < %(before)s

-- name: events_archive_batch
SELECT id, type, ts, project_id, session_id, agent, payload
FROM events WHERE id > %(after)s AND ts < %(before)s ORDER BY id LIMIT %(limit)s

-- name: events_first_since
-- Scans from the oldest id and stops at the first recent event: O(what is archived).
SELECT id FROM events WHERE ts >= %(before)s ORDER BY id LIMIT 1

-- name: events_sessions_since
SELECT DISTINCT session_id FROM events
WHERE id >= %(from_id)s AND ts >= %(before)s AND session_id IS NOT NULL

-- name: events_archive_live_sessions
-- Sessions and conversations that live state still points at: an unresolved takeover, a
-- pending approval, an offered handoff, a conversation an operator holds.
SELECT conversa_id AS session_id FROM interruptions WHERE status <> 'resolved'
UNION SELECT session_id FROM approvals WHERE status = 'pending' AND session_id IS NOT NULL
UNION SELECT session_id FROM handoffs WHERE status = 'offered' AND session_id IS NOT NULL
UNION SELECT id AS session_id FROM conversations WHERE state = 'human'
