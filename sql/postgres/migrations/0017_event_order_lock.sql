-- The event log's ordering (issue 16): appenders and the readers' barrier meet on a lock of
-- this empty table instead of an advisory lock. Any role may take any advisory lock, so a
-- tool credential could hold the barrier's key and freeze every append; LOCK TABLE checks
-- privileges before it waits, and no tool role has any on this table, so a tool role gets
-- "permission denied" instead of the lock. The table never holds a row (nothing vacuums
-- it, so no autovacuum lock ever queues against the barrier).
CREATE TABLE IF NOT EXISTS events_order (never_a_row BOOLEAN CHECK (false));
REVOKE ALL ON events_order FROM PUBLIC;

-- Appenders: ROW EXCLUSIVE does not conflict with itself (appenders never wait for each
-- other) but conflicts with the barrier's SHARE. Called from the FROM clause of
-- event_append so the lock is held before the identity value is drawn, in one round trip.
-- Invoker's rights: run by a role without privileges on events_order, LOCK TABLE refuses.
CREATE OR REPLACE FUNCTION events_order_append() RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    LOCK TABLE events_order IN ROW EXCLUSIVE MODE;
END
$$;

-- Readers: SHARE waits until every appender in flight has ended and does not conflict with
-- other readers; new appenders queue behind it until the reader's short transaction ends.
-- The wait is bounded by lock_timeout (55P03 past it; the reader serves its cached horizon).
CREATE OR REPLACE FUNCTION events_order_barrier() RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    PERFORM set_config('lock_timeout', '1000ms', true);
    LOCK TABLE events_order IN SHARE MODE;
END
$$;

-- PUBLIC gets EXECUTE on every new function by default; tool roles need none of ours.
REVOKE EXECUTE ON FUNCTION events_order_append(), events_order_barrier() FROM PUBLIC;
