-- SQLite-only queries and overrides.

-- name: event_notify
SELECT 1
