-- Gate jobs (backend/infra/job_store.py): one durable job per PR, claimed with a lease.
-- Every write is one conditional statement, so two workers (threads or `cadencia serve`
-- processes on one PostgreSQL) racing on a PR cannot both win.

-- name: gate_job_enqueue
-- A live run (running, lease not expired) is asked to run once more; anything else is
-- queued afresh with its attempts and error cleared.
INSERT INTO gate_jobs
    (pr_id, status, owner, lease_until, attempts, generation, claimed_generation, last_error,
     created_at, updated_at)
VALUES (%(pr_id)s, 'queued', NULL, 0, 0, 1, 0, NULL, %(now)s, %(now)s)
ON CONFLICT (pr_id) DO UPDATE SET
    generation = gate_jobs.generation + 1,
    status = CASE WHEN gate_jobs.status = 'running' AND gate_jobs.lease_until >= %(epoch)s
        THEN 'running' ELSE 'queued' END,
    owner = CASE WHEN gate_jobs.status = 'running' AND gate_jobs.lease_until >= %(epoch)s
        THEN gate_jobs.owner ELSE NULL END,
    attempts = CASE WHEN gate_jobs.status = 'running' AND gate_jobs.lease_until >= %(epoch)s
        THEN gate_jobs.attempts ELSE 0 END,
    last_error = CASE WHEN gate_jobs.status = 'running' AND gate_jobs.lease_until >= %(epoch)s
        THEN gate_jobs.last_error ELSE NULL END,
    updated_at = %(now)s
RETURNING pr_id, status

-- name: gate_jobs_adopt_orphans
-- PRs waiting in a gate with no job at all (opened before gate jobs existed) get one.
INSERT INTO gate_jobs
    (pr_id, status, owner, lease_until, attempts, generation, claimed_generation, last_error,
     created_at, updated_at)
SELECT p.id, 'queued', NULL, 0, 0, 1, 0, NULL, %(now)s, %(now)s
FROM pull_requests p
WHERE p.gate_status IN ('awaiting_qa', 'awaiting_secops')
  AND NOT EXISTS (SELECT 1 FROM gate_jobs j WHERE j.pr_id = p.id)
ON CONFLICT (pr_id) DO NOTHING
RETURNING pr_id

-- name: gate_job_claim
UPDATE gate_jobs
SET status = 'running', owner = %(owner)s, lease_until = %(lease_until)s,
    attempts = attempts + 1, claimed_generation = generation, updated_at = %(now)s
WHERE pr_id = %(pr_id)s
  AND (status = 'queued' OR (status = 'running' AND lease_until < %(epoch)s))
  AND attempts < %(max_attempts)s
RETURNING pr_id, attempts

-- name: gate_job_heartbeat
UPDATE gate_jobs SET lease_until = %(lease_until)s
WHERE pr_id = %(pr_id)s AND owner = %(owner)s AND status = 'running'
RETURNING pr_id

-- name: gate_job_finish
-- The owner's run ended (``error`` NULL: it returned). A request that arrived meanwhile
-- queues the job again; otherwise it is done, or failed with its error.
UPDATE gate_jobs
SET status = CASE WHEN generation <> claimed_generation THEN 'queued'
        WHEN CAST(%(error)s AS TEXT) IS NULL THEN 'done' ELSE 'failed' END,
    attempts = CASE WHEN generation <> claimed_generation THEN 0 ELSE attempts END,
    last_error = CASE WHEN generation <> claimed_generation THEN NULL ELSE %(error)s END,
    owner = NULL, lease_until = 0, updated_at = %(now)s
WHERE pr_id = %(pr_id)s AND owner = %(owner)s AND status = 'running'
RETURNING status

-- name: gate_job_give_up
-- The lease ran out on the last attempt allowed: leave the job to an operator (pr_stuck).
UPDATE gate_jobs
SET status = 'failed', owner = NULL, lease_until = 0, last_error = %(error)s,
    updated_at = %(now)s
WHERE pr_id = %(pr_id)s AND status = 'running' AND lease_until < %(epoch)s
  AND attempts >= %(max_attempts)s
RETURNING pr_id

-- name: gate_job_get
SELECT pr_id, status, owner, lease_until, attempts, generation, claimed_generation, last_error,
       created_at, updated_at
FROM gate_jobs WHERE pr_id = %(pr_id)s

-- name: gate_jobs_due
-- Jobs a worker may claim now, and expired ones out of attempts (to give up on).
SELECT pr_id, status, owner, lease_until, attempts, generation, claimed_generation, last_error,
       created_at, updated_at
FROM gate_jobs
WHERE status = 'queued' OR (status = 'running' AND lease_until < %(epoch)s)
ORDER BY updated_at, pr_id

-- name: gate_jobs_stuck
-- Jobs that will not run again on their own, of PRs still waiting in a gate.
SELECT j.pr_id, j.status, j.owner, j.lease_until, j.attempts, j.generation,
       j.claimed_generation, j.last_error, j.created_at, j.updated_at
FROM gate_jobs j JOIN pull_requests p ON p.id = j.pr_id
WHERE p.gate_status IN ('awaiting_qa', 'awaiting_secops')
  AND (j.status = 'failed'
       OR (j.status = 'running' AND j.lease_until < %(epoch)s
           AND j.attempts >= %(max_attempts)s))
ORDER BY j.updated_at, j.pr_id
