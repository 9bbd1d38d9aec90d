-- SQLite administration: the migrations table and `teardown`'s ledger tables.

-- name: migrations_begin
-- Taken before reading schema_migrations, so two processes cannot both apply a version.
BEGIN IMMEDIATE

-- name: migrations_table
CREATE TABLE IF NOT EXISTS schema_migrations
    (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)

-- name: migrations_applied
SELECT version FROM schema_migrations

-- name: migration_record
INSERT INTO schema_migrations (version, name, applied_at) VALUES (%(version)s, %(name)s, %(now)s)

-- name: ledger_tables_present
SELECT name FROM sqlite_master
WHERE type = 'table' AND name IN (SELECT value FROM json_each(%(tables)s)) ORDER BY name

-- name: ledger_drop_records
DROP TABLE IF EXISTS ledger_records

-- name: ledger_drop_counters
DROP TABLE IF EXISTS ledger_counters
