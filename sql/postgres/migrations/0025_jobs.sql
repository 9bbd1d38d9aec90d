-- The job engine's table (backend/jobs/): work that must happen later or survive a crash.
-- A worker owns a job only through one conditional UPDATE (due and queued/failed, or running
-- with a lapsed lease and attempts left; rows picked FOR UPDATE SKIP LOCKED) and heartbeats
-- lease_until while it runs. A unique key makes enqueue idempotent while a job with it is
-- unfinished (queued, running, failed and waiting for its retry). period_s marks a recurring
-- job: it is queued again for its next tick instead of finishing. run_at and lease_until
-- are epoch seconds.
CREATE TABLE IF NOT EXISTS jobs (
    id            BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    kind          TEXT NOT NULL,
    payload       JSONB NOT NULL DEFAULT '{}',
    unique_key    TEXT,
    state         TEXT NOT NULL CHECK (state IN ('queued', 'running', 'done', 'failed', 'dead',
                                                 'cancelled')),
    run_at        DOUBLE PRECISION NOT NULL,
    period_s      DOUBLE PRECISION,
    attempts      INTEGER NOT NULL DEFAULT 0,
    max_attempts  INTEGER NOT NULL,
    owner         TEXT,
    lease_until   DOUBLE PRECISION NOT NULL DEFAULT 0,
    last_error    TEXT,
    created_at    TIMESTAMPTZ NOT NULL,
    updated_at    TIMESTAMPTZ NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS jobs_unique_key_idx ON jobs (unique_key)
    WHERE state IN ('queued', 'running', 'failed');
CREATE INDEX IF NOT EXISTS jobs_due_idx ON jobs (kind, state, run_at);
