-- Retention, PostgreSQL: id lists and row batches travel as one JSONB parameter.

-- name: events_newest_per_key
-- The newest event of each (type, project, agent[, PR]): what the roster folds to.
SELECT MAX(id) AS id FROM (
    SELECT id, type, project_id, agent,
        CASE WHEN type IN (SELECT jsonb_array_elements_text(%(subject_types)s::jsonb))
            THEN COALESCE(payload->>'pr_action_id', payload->>'task_id')
        END AS subject
    FROM events
) AS keyed
GROUP BY type, project_id, agent, subject

-- name: events_delete_ids
DELETE FROM events WHERE id IN (SELECT jsonb_array_elements_text(%(ids)s::jsonb)::bigint)

-- name: events_restore_batch
-- Restored events keep their ids (below the identity's current value, so appends never
-- collide with them; events_restore_sequence covers a restore into an emptier database).
INSERT INTO events (id, type, ts, project_id, session_id, agent, payload)
OVERRIDING SYSTEM VALUE
SELECT r.id, r.type, r.ts, r.project_id, r.session_id, r.agent, r.payload::jsonb
FROM jsonb_to_recordset(%(rows)s::jsonb)
    AS r(id bigint, type text, ts timestamptz, project_id text, session_id text, agent text,
         payload text)
ON CONFLICT (id) DO NOTHING

-- name: events_restore_sequence
SELECT setval(pg_get_serial_sequence('events', 'id'), m) AS moved
FROM (SELECT MAX(id) AS m FROM events) AS top
WHERE m > COALESCE(pg_sequence_last_value(pg_get_serial_sequence('events', 'id')::regclass), 0)
