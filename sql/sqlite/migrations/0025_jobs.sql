-- The job engine's table (backend/jobs/): work that must happen later or survive a crash.
-- A worker owns a job only through one conditional UPDATE (due and queued/failed, or running
-- with a lapsed lease and attempts left) and heartbeats lease_until while it runs. A unique
-- key makes enqueue idempotent while a job with it is unfinished (queued, running, failed
-- and waiting for its retry). period_s marks a recurring job: it is queued again for its
-- next tick instead of finishing. run_at and lease_until are epoch seconds.
CREATE TABLE IF NOT EXISTS jobs (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    kind          TEXT NOT NULL,
    payload       TEXT NOT NULL DEFAULT '{}',
    unique_key    TEXT,
    state         TEXT NOT NULL CHECK (state IN ('queued', 'running', 'done', 'failed', 'dead',
                                                 'cancelled')),
    run_at        REAL NOT NULL,
    period_s      REAL,
    attempts      INTEGER NOT NULL DEFAULT 0,
    max_attempts  INTEGER NOT NULL,
    owner         TEXT,
    lease_until   REAL NOT NULL DEFAULT 0,
    last_error    TEXT,
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS jobs_unique_key_idx ON jobs (unique_key)
    WHERE state IN ('queued', 'running', 'failed');
CREATE INDEX IF NOT EXISTS jobs_due_idx ON jobs (kind, state, run_at);
