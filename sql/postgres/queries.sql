-- PostgreSQL-only queries and overrides.

-- name: event_append
-- One round trip: the transaction-scoped advisory lock is taken (in the SELECT that feeds
-- the INSERT) before the identity value is drawn, so ids become visible in commit order and
-- a subscriber resuming after id N never misses a lower id committed later; NOTIFY tells
-- other backend processes (delivered at commit).
WITH ins AS (
    INSERT INTO events (type, ts, project_id, session_id, agent, payload)
    SELECT %(type)s, %(ts)s, %(project_id)s, %(session_id)s, %(agent)s, %(payload)s
    FROM (SELECT pg_advisory_xact_lock(738700002)) AS serialized
    RETURNING id
)
SELECT id, pg_notify('cadencia_events', id::text) AS notified FROM ins
