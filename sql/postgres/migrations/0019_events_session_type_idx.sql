-- A conversation's tool attempts (GET /api/conversations/{id}: events of one type in one
-- session, newest first). With only events_session_idx (session_id, id) and
-- events_type_idx (type, id) to choose from, SQLite took the type index and walked every
-- attempt of every conversation newest first until it found this one's: 127 ms at 1M
-- events, growing with the log. This index makes it a range scan of the conversation's own
-- attempts on both dialects, whatever the planner's statistics say.
CREATE INDEX IF NOT EXISTS events_session_type_idx ON events (session_id, type, id);
