-- Cheaper appends (issue 14). Every index of the event log is one more page each append
-- writes and logs, and events_session_idx (session_id, id) serves no read that
-- events_session_type_idx (session_id, type, id) does not: each session read names its type.
DROP INDEX IF EXISTS events_session_idx;
