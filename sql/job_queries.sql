-- The job engine (backend/jobs/store.py). Every write is one conditional statement on the
-- job's row (its owner, its state, the attempt it serves), so two workers — threads or
-- `cadencia serve` processes on one PostgreSQL — racing on a job cannot both win.
-- The claim differs per dialect: sql/<dialect>/job_queries.sql.

-- name: job_enqueue
-- A unique key already held by an unfinished job inserts nothing (no row returned).
INSERT INTO jobs
    (kind, payload, unique_key, state, run_at, period_s, attempts, max_attempts, owner,
     lease_until, last_error, created_at, updated_at)
VALUES (%(kind)s, %(payload)s, %(unique_key)s, 'queued', %(run_at)s, %(period_s)s, 0,
        %(max_attempts)s, NULL, 0, NULL, %(now)s, %(now)s)
ON CONFLICT (unique_key) WHERE state IN ('queued', 'running', 'failed') DO NOTHING
RETURNING id

-- name: job_schedule
-- A recurring job: queued once per unique key; an existing one waiting for a later tick is
-- brought forward to run_at, and takes the period it is given now.
INSERT INTO jobs
    (kind, payload, unique_key, state, run_at, period_s, attempts, max_attempts, owner,
     lease_until, last_error, created_at, updated_at)
VALUES (%(kind)s, %(payload)s, %(unique_key)s, 'queued', %(run_at)s, %(period_s)s, 0,
        %(max_attempts)s, NULL, 0, NULL, %(now)s, %(now)s)
ON CONFLICT (unique_key) WHERE state IN ('queued', 'running', 'failed') DO UPDATE SET
    run_at = CASE WHEN jobs.state IN ('queued', 'failed') AND jobs.run_at > excluded.run_at
        THEN excluded.run_at ELSE jobs.run_at END,
    period_s = excluded.period_s,
    updated_at = excluded.updated_at
RETURNING id

-- name: job_unfinished_by_key
SELECT id, kind, payload, unique_key, state, run_at, period_s, attempts, max_attempts, owner,
       lease_until, last_error, again, created_at, updated_at
FROM jobs WHERE unique_key = %(unique_key)s AND state IN ('queued', 'running', 'failed')

-- name: job_get
SELECT id, kind, payload, unique_key, state, run_at, period_s, attempts, max_attempts, owner,
       lease_until, last_error, again, created_at, updated_at
FROM jobs WHERE id = %(id)s

-- name: job_heartbeat
UPDATE jobs SET lease_until = %(lease_until)s
WHERE id = %(id)s AND owner = %(owner)s AND state = 'running' AND attempts = %(attempt)s
RETURNING id

-- name: job_succeed
-- A one-off job is done; a recurring one waits for its next tick with its attempts reset;
-- one asked for again while it ran is queued now with fresh attempts.
UPDATE jobs
SET state = CASE WHEN again OR period_s IS NOT NULL THEN 'queued' ELSE 'done' END,
    run_at = CASE WHEN again THEN %(epoch)s WHEN period_s IS NULL THEN run_at
                  ELSE %(epoch)s + period_s END,
    attempts = CASE WHEN again OR period_s IS NOT NULL THEN 0 ELSE attempts END,
    again = %(no)s, owner = NULL, lease_until = 0, last_error = NULL, updated_at = %(now)s
WHERE id = %(id)s AND owner = %(owner)s AND state = 'running' AND attempts = %(attempt)s
RETURNING state, run_at

-- name: job_retry
UPDATE jobs
SET state = 'failed', run_at = %(run_at)s, owner = NULL, lease_until = 0,
    last_error = %(error)s, updated_at = %(now)s
WHERE id = %(id)s AND owner = %(owner)s AND state = 'running' AND attempts = %(attempt)s
RETURNING state, run_at

-- name: job_bury
-- The last attempt failed: a one-off job is dead; a recurring one waits for its next tick,
-- and one asked for again meanwhile is queued with fresh attempts.
UPDATE jobs
SET state = CASE WHEN again OR period_s IS NOT NULL THEN 'queued' ELSE 'dead' END,
    run_at = CASE WHEN again THEN %(epoch)s WHEN period_s IS NULL THEN run_at
                  ELSE %(epoch)s + period_s END,
    attempts = CASE WHEN again OR period_s IS NOT NULL THEN 0 ELSE attempts END,
    again = %(no)s, owner = NULL, lease_until = 0, last_error = %(error)s, updated_at = %(now)s
WHERE id = %(id)s AND owner = %(owner)s AND state = 'running' AND attempts = %(attempt)s
RETURNING state, run_at

-- name: jobs_bury_lapsed
-- Jobs whose lease lapsed on their last attempt (their worker died every time), as job_bury.
UPDATE jobs
SET state = CASE WHEN again OR period_s IS NOT NULL THEN 'queued' ELSE 'dead' END,
    run_at = CASE WHEN again THEN %(epoch)s WHEN period_s IS NULL THEN run_at
                  ELSE %(epoch)s + period_s END,
    attempts = CASE WHEN again OR period_s IS NOT NULL THEN 0 ELSE attempts END,
    again = %(no)s, owner = NULL, lease_until = 0, last_error = %(error)s, updated_at = %(now)s
WHERE kind = %(kind)s AND state = 'running' AND lease_until < %(epoch)s
  AND attempts >= max_attempts
RETURNING id, state

-- name: job_again
-- A request for a key held by an unfinished job: a running one runs once more when this
-- attempt ends; a waiting one (a retry, a snooze) is brought forward to run_at.
UPDATE jobs
SET again = CASE WHEN state = 'running' THEN %(yes)s ELSE again END,
    run_at = CASE WHEN state <> 'running' AND run_at > %(run_at)s THEN %(run_at)s
                  ELSE run_at END,
    updated_at = %(now)s
WHERE unique_key = %(unique_key)s AND state IN ('queued', 'running', 'failed')
RETURNING id

-- name: job_snooze
-- The handler asked to be run later: queued at run_at (now, if it was asked for again
-- meanwhile), the attempt not counted.
UPDATE jobs
SET state = 'queued', attempts = attempts - 1,
    run_at = CASE WHEN again THEN %(epoch)s ELSE %(run_at)s END, again = %(no)s,
    owner = NULL, lease_until = 0, updated_at = %(now)s
WHERE id = %(id)s AND owner = %(owner)s AND state = 'running' AND attempts = %(attempt)s
RETURNING id

-- name: jobs_unfinished_count
SELECT COUNT(*) AS n FROM jobs WHERE kind = %(kind)s AND state IN ('queued', 'running', 'failed')

-- name: jobs_by_key
-- Every job a unique key has named, newest first.
SELECT id, kind, payload, unique_key, state, run_at, period_s, attempts, max_attempts, owner,
       lease_until, last_error, again, created_at, updated_at
FROM jobs WHERE unique_key = %(unique_key)s ORDER BY id DESC LIMIT %(limit)s

-- name: job_cancel
-- A running job's owner loses it: its heartbeat and its finish no longer match.
UPDATE jobs
SET state = 'cancelled', owner = NULL, lease_until = 0, updated_at = %(now)s
WHERE id = %(id)s AND state IN ('queued', 'running', 'failed')
RETURNING id

-- name: job_rerun
-- A dead job queued afresh, unless its unique key is held by another unfinished job.
UPDATE jobs
SET state = 'queued', attempts = 0, run_at = %(epoch)s, last_error = NULL,
    updated_at = %(now)s
WHERE id = %(id)s AND state = 'dead'
  AND NOT EXISTS (SELECT 1 FROM jobs other
                  WHERE other.unique_key = jobs.unique_key
                    AND other.state IN ('queued', 'running', 'failed'))
RETURNING id

-- name: jobs_dead
SELECT id, kind, payload, unique_key, state, run_at, period_s, attempts, max_attempts, owner,
       lease_until, last_error, again, created_at, updated_at
FROM jobs WHERE state = 'dead' ORDER BY updated_at, id LIMIT %(limit)s

-- name: jobs_next_due
-- When the kind's next job may be claimed (a queued one's run_at, a running one's lease).
SELECT MIN(CASE WHEN state = 'running' THEN lease_until ELSE run_at END) AS due
FROM jobs WHERE kind = %(kind)s AND state IN ('queued', 'running', 'failed')

-- name: job_release
-- A stopping worker gives an unfinished claim back: due now, the attempt not counted.
UPDATE jobs
SET state = 'queued', attempts = attempts - 1, run_at = %(epoch)s, owner = NULL,
    lease_until = 0, updated_at = %(now)s
WHERE id = %(id)s AND owner = %(owner)s AND state = 'running' AND attempts = %(attempt)s
RETURNING id

-- name: job_drop
-- An operator gives up on a dead job: it stays, cancelled, as the record of what happened.
UPDATE jobs SET state = 'cancelled', updated_at = %(now)s
WHERE id = %(id)s AND state = 'dead'
RETURNING id

-- name: jobs_prune
-- Finished jobs older than `before`: done ones and dropped ones. Dead jobs stay (the inbox).
DELETE FROM jobs WHERE state IN ('done', 'cancelled') AND updated_at < %(before)s
