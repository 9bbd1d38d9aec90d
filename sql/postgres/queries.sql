-- PostgreSQL-only queries and overrides.

-- name: event_lock
-- Serialize appends so ids become visible in commit order: a subscriber that resumes
-- after id N can never later miss an id below N committed by a slower transaction.
SELECT pg_advisory_xact_lock(738700002)

-- name: event_notify
SELECT pg_notify('cadencia_events', %(id)s::text)
