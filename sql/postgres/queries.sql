-- PostgreSQL-only queries and overrides.

-- name: event_append
-- One round trip. The SHARED form of the log's advisory lock is taken (in the SELECT that
-- feeds the INSERT) before the identity value is drawn and held until this transaction
-- ends: appenders never wait for each other, but a reader's barrier (events_barrier, the
-- exclusive form) waits until every id drawn so far is committed or rolled back, so the
-- horizon it reads next has no lower id still to come. NOTIFY tells other backend
-- processes (delivered at commit).
WITH ins AS (
    INSERT INTO events (type, ts, project_id, session_id, agent, payload)
    SELECT %(type)s, %(ts)s, %(project_id)s, %(session_id)s, %(agent)s, %(payload)s
    FROM (SELECT pg_advisory_xact_lock_shared(738700002)) AS ordered
    RETURNING id
)
SELECT id, pg_notify('cadencia_events', id::text) AS notified FROM ins

-- name: events_barrier
-- The exclusive form of event_append's lock, held only by a reader's own short
-- transaction: granted once every appender in flight has ended; new appenders wait for
-- this transaction (one statement after this one) to end. Read the horizon in the NEXT
-- statement: under READ COMMITTED it takes a snapshot after the lock was granted. The
-- wait is bounded (lock_timeout, set first by the FROM clause): a unit of work that stays
-- open long, or one open in the reader's own thread, delays readers instead of hanging
-- them, and appenders queued behind the barrier wait at most that long.
SELECT pg_advisory_xact_lock(738700002) AS settled
FROM (SELECT set_config('lock_timeout', '1000ms', true)) AS bounded
