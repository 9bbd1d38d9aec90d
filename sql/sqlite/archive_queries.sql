-- Retention, SQLite: id lists and row batches travel as one JSON parameter (json_each).

-- name: events_newest_per_key
-- The newest event of each (type, project, agent[, PR]): what the roster folds to.
SELECT MAX(id) AS id FROM (
    SELECT id, type, project_id, agent,
        CASE WHEN type IN (SELECT value FROM json_each(%(subject_types)s))
            THEN COALESCE(json_extract(payload, '$.pr_action_id'),
                          json_extract(payload, '$.task_id'))
        END AS subject
    FROM events
) AS keyed
GROUP BY type, project_id, agent, subject

-- name: events_delete_ids
DELETE FROM events WHERE id IN (SELECT value FROM json_each(%(ids)s))

-- name: events_restore_batch
-- WHERE true: SQLite's parser needs it between INSERT ... SELECT and ON CONFLICT.
INSERT INTO events (id, type, ts, project_id, session_id, agent, payload)
SELECT json_extract(value, '$.id'), json_extract(value, '$.type'), json_extract(value, '$.ts'),
    json_extract(value, '$.project_id'), json_extract(value, '$.session_id'),
    json_extract(value, '$.agent'), json_extract(value, '$.payload')
FROM json_each(%(rows)s) WHERE true
ON CONFLICT (id) DO NOTHING
