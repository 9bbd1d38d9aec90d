-- PostgreSQL-only queries and overrides.

-- name: event_append
-- One round trip. events_order_append() (migration 0017) takes the appenders' form of the
-- log's ordering lock (ROW EXCLUSIVE on events_order, in the SELECT that feeds the INSERT)
-- before the identity value is drawn, held until this transaction ends: appenders never
-- wait for each other, but a reader's barrier (events_barrier, SHARE) waits until every id
-- drawn so far is committed or rolled back, so the horizon it reads next has no lower id
-- still to come. A table lock, not an advisory one: a tool role has no privilege on
-- events_order, so it cannot take or hold it. NOTIFY tells other backend processes
-- (delivered at commit, one per transaction: equal notifications fold into one), on the
-- deployment's secret channel (events_channel, migration 0018) and with no payload.
WITH ins AS (
    INSERT INTO events (type, ts, project_id, session_id, agent, payload)
    SELECT %(type)s, %(ts)s, %(project_id)s, %(session_id)s, %(agent)s, %(payload)s
    FROM (SELECT events_order_append()) AS ordered
    RETURNING id
)
SELECT id, pg_notify((SELECT name FROM events_channel), '') AS notified FROM ins

-- name: events_barrier
-- The readers' form of event_append's lock (SHARE on events_order), held only by a
-- reader's own short transaction: granted once every appender in flight has ended; new
-- appenders wait for this transaction (one statement after this one) to end. Read the
-- horizon in the NEXT statement: under READ COMMITTED it takes a snapshot after the lock
-- was granted. The wait is bounded (the function sets lock_timeout first): a unit of work
-- that stays open long, or one open in the reader's own thread, delays readers instead of
-- hanging them, and appenders queued behind the barrier wait at most that long.
SELECT events_order_barrier() AS settled

-- name: events_channel
-- The NOTIFY channel of this deployment (migration 0018); the listener LISTENs on it.
SELECT name FROM events_channel
