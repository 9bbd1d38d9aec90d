-- The channel appenders NOTIFY and other serve processes LISTEN on (issue 16). LISTEN and
-- NOTIFY take no privilege in PostgreSQL: any role may LISTEN to or NOTIFY any channel it
-- can name. So the name is a secret of the deployment: 128 random bits, kept in this table,
-- which no tool role can read (no grant, nothing for PUBLIC). A tool role cannot see it
-- either in pg_stat_activity (other roles' queries read "<insufficient privilege>" unless
-- it belongs to pg_read_all_stats, a membership `audit grants` reports) or in
-- pg_listening_channels() (a session's own channels only). The notifications carry no
-- payload: a listener only learns "something was appended" and re-reads the log.
CREATE TABLE IF NOT EXISTS events_channel (
    only_row BOOLEAN PRIMARY KEY DEFAULT true CHECK (only_row),
    name TEXT NOT NULL CHECK (name ~ '^cadencia_events_[0-9a-f]{32}$')
);
INSERT INTO events_channel (name)
VALUES ('cadencia_events_' || replace(gen_random_uuid()::text, '-', ''))
ON CONFLICT (only_row) DO NOTHING;
REVOKE ALL ON events_channel FROM PUBLIC;
