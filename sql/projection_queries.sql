-- Projections (backend/projections/): the roster's fact table, its snapshots, its state.
-- The upserts differ per dialect (MIN/MAX vs LEAST/GREATEST): sql/<dialect>/projection_queries.sql.

-- name: roster_facts_of_scopes
-- Everything but the per-PR gate rows (those grow with the history of PRs): two ranges of
-- the primary key around 'gate:' ... 'gate;' (';' follows ':').
SELECT scope, key, value, event_id, first_id FROM roster_facts
WHERE scope IN (%(global)s, %(scope)s) AND (key < 'gate:' OR key >= 'gate;');

-- name: roster_gates_waiting
-- The PRs waiting in a gate (what QA and SecOps show), through a partial index.
SELECT scope, key, value, event_id, first_id FROM roster_facts
WHERE scope IN (%(global)s, %(scope)s) AND value IN ('"awaiting_qa"', '"awaiting_secops"');

-- name: roster_gate_newest_infra
-- The infra PR the roster met last (what an idle Infra agent shows): the newest of each
-- scope, each one step backwards on the partial index roster_facts_infra_idx (scope,
-- first_id). With the two scopes in one IN list PostgreSQL sorted every infra PR's row
-- (6 ms with 6,000 PRs).
SELECT scope, key, value, event_id, first_id FROM (
    SELECT * FROM (
        SELECT scope, key, value, event_id, first_id FROM roster_facts
        WHERE scope = %(global)s AND key >= 'gate:infra PR ' AND key < 'gate:infra PR!'
        ORDER BY first_id DESC LIMIT 1
    ) AS of_global
    UNION ALL
    SELECT * FROM (
        SELECT scope, key, value, event_id, first_id FROM roster_facts
        WHERE scope = %(scope)s AND key >= 'gate:infra PR ' AND key < 'gate:infra PR!'
        ORDER BY first_id DESC LIMIT 1
    ) AS of_scope
) AS newest
ORDER BY first_id DESC LIMIT 1;

-- name: roster_facts_all
SELECT scope, key, value, event_id, first_id FROM roster_facts;

-- name: roster_facts_clear
DELETE FROM roster_facts;

-- name: roster_flags_set
SELECT scope, key, event_id FROM roster_facts
WHERE key IN ('execution', 'infra', 'gate_opened', 'conversation');

-- name: roster_snapshot_put
INSERT INTO roster_snapshots (upto, facts, created_at)
VALUES (%(upto)s, %(facts)s, %(created_at)s)
ON CONFLICT (upto) DO UPDATE SET facts = excluded.facts, created_at = excluded.created_at;

-- name: roster_snapshot_at_or_before
SELECT upto, facts FROM roster_snapshots WHERE upto <= %(upto)s ORDER BY upto DESC LIMIT 1;

-- name: projection_state_get
SELECT name, upto, rebuilt_at FROM projection_state WHERE name = %(name)s;

-- name: projection_state_put
INSERT INTO projection_state (name, upto, rebuilt_at)
VALUES (%(name)s, %(upto)s, %(rebuilt_at)s)
ON CONFLICT (name) DO UPDATE SET upto = excluded.upto, rebuilt_at = excluded.rebuilt_at;

-- name: events_first_id
SELECT COALESCE(MIN(id), 0) AS first_id FROM events;
