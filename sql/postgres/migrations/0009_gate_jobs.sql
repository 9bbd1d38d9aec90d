-- Gate runs as durable jobs with a lease (issue 12): one row per PR. A worker claims the row
-- with one conditional UPDATE (queued, or running with an expired lease, attempts left), so
-- exactly one worker runs a PR's gates, and its heartbeat pushes lease_until forward while the
-- scanners run. ``generation`` counts requests to run, ``claimed_generation`` the request a
-- claim serves: a request that arrives while a run is in flight makes it run once more.
-- A job that failed, or whose lease ran out on every attempt, stays ``failed`` (pr_stuck)
-- until an operator reruns it. lease_until is epoch seconds, like the ledger's claims.
CREATE TABLE IF NOT EXISTS gate_jobs (
    pr_id               TEXT PRIMARY KEY,
    status              TEXT NOT NULL CHECK (status IN ('queued', 'running', 'done', 'failed')),
    owner               TEXT,
    lease_until         DOUBLE PRECISION NOT NULL DEFAULT 0,
    attempts            INTEGER NOT NULL DEFAULT 0,
    generation          INTEGER NOT NULL DEFAULT 1,
    claimed_generation  INTEGER NOT NULL DEFAULT 0,
    last_error          TEXT,
    created_at          TIMESTAMPTZ NOT NULL,
    updated_at          TIMESTAMPTZ NOT NULL
);
CREATE INDEX IF NOT EXISTS gate_jobs_status_idx ON gate_jobs (status, lease_until);
