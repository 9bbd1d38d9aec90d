-- The roster's fact upserts (backend/projections/roster_table.py), commutative by event id
-- so any commit order, a replay or a rebuild lands on the same row.

-- name: roster_fact_last
-- The highest event id sets the value, the lowest one that touched the key is first_id.
-- A replay of the same event matches neither condition and writes nothing.
INSERT INTO roster_facts AS f (scope, key, value, event_id, first_id)
VALUES (%(scope)s, %(key)s, %(value)s, %(event_id)s, %(event_id)s)
ON CONFLICT (scope, key) DO UPDATE SET
    value = CASE WHEN excluded.event_id > f.event_id THEN excluded.value ELSE f.value END,
    event_id = MAX(f.event_id, excluded.event_id),
    first_id = MIN(f.first_id, excluded.first_id)
WHERE excluded.event_id > f.event_id OR excluded.first_id < f.first_id;

-- name: roster_fact_first
-- A flag: set once, event id 0 (which event set it first depends on commit order).
-- DO NOTHING neither writes nor locks the row, so the customer messages that all say
-- "a conversation exists" never queue behind each other on it.
INSERT INTO roster_facts (scope, key, value, event_id, first_id)
VALUES (%(scope)s, %(key)s, %(value)s, 0, 0)
ON CONFLICT (scope, key) DO NOTHING;

-- name: roster_fact_put
-- A rebuild writes the folded rows as they are.
INSERT INTO roster_facts AS f (scope, key, value, event_id, first_id)
VALUES (%(scope)s, %(key)s, %(value)s, %(event_id)s, %(first_id)s)
ON CONFLICT (scope, key) DO UPDATE SET
    value = CASE WHEN excluded.event_id >= f.event_id THEN excluded.value ELSE f.value END,
    event_id = MAX(f.event_id, excluded.event_id),
    first_id = MIN(f.first_id, excluded.first_id);

-- name: roster_gate_newest_infra
-- The shared query's shape, each scope's newest read one step backwards on the partial
-- index roster_facts_infra_idx (scope, first_id): SQLite plans without statistics and would
-- otherwise take the key range of the primary key and sort every infra PR of the scope.
SELECT scope, key, value, event_id, first_id FROM (
    SELECT * FROM (
        SELECT scope, key, value, event_id, first_id FROM roster_facts
        INDEXED BY roster_facts_infra_idx
        WHERE scope = %(global)s AND key >= 'gate:infra PR ' AND key < 'gate:infra PR!'
        ORDER BY first_id DESC LIMIT 1
    ) AS of_global
    UNION ALL
    SELECT * FROM (
        SELECT scope, key, value, event_id, first_id FROM roster_facts
        INDEXED BY roster_facts_infra_idx
        WHERE scope = %(scope)s AND key >= 'gate:infra PR ' AND key < 'gate:infra PR!'
        ORDER BY first_id DESC LIMIT 1
    ) AS of_scope
) AS newest
ORDER BY first_id DESC LIMIT 1;
