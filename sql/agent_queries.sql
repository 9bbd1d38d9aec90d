-- The operators' off switch and turn inspection (backend/agents/pauses.py, turns.py).

-- name: agent_pause
-- Affects one row only when the agent was not paused: 0 rows means it already was (409).
INSERT INTO agent_pauses (agent, paused, paused_by, paused_at, reason)
VALUES (%(agent)s, TRUE, %(operator)s, %(now)s, %(reason)s)
ON CONFLICT (agent) DO UPDATE SET
    paused = TRUE, paused_by = excluded.paused_by, paused_at = excluded.paused_at,
    reason = excluded.reason, resumed_by = NULL, resumed_at = NULL
WHERE NOT agent_pauses.paused

-- name: agent_resume
UPDATE agent_pauses SET paused = FALSE, resumed_by = %(operator)s, resumed_at = %(now)s
WHERE agent = %(agent)s AND paused

-- name: agent_pause_get
SELECT agent, paused, paused_by, paused_at, reason, resumed_by, resumed_at
FROM agent_pauses WHERE agent = %(agent)s

-- name: events_agent_latest
-- Newest first, bounded: uses events_agent_type_idx (agent, type, id).
SELECT id, type, ts, project_id, session_id, agent, payload
FROM events
WHERE agent = %(agent)s AND type = %(type)s
  AND (CAST(%(project_id)s AS TEXT) IS NULL OR project_id = %(project_id)s)
  AND (CAST(%(session_id)s AS TEXT) IS NULL OR session_id = %(session_id)s)
ORDER BY id DESC
LIMIT %(limit)s
