-- A request for a job whose unique key is held by a running job is not lost: `again` makes
-- that job run once more when the running attempt ends. Gate runs move onto the job engine:
-- every PR still waiting in a gate gets a queued `gates` job (a failed or dead gate_jobs row
-- becomes a dead job an operator can rerun), and gate_jobs is dropped.
ALTER TABLE jobs ADD COLUMN IF NOT EXISTS again BOOLEAN NOT NULL DEFAULT false;
INSERT INTO jobs
    (kind, payload, unique_key, state, run_at, period_s, attempts, max_attempts, owner,
     lease_until, last_error, created_at, updated_at)
SELECT 'gates', jsonb_build_object('pr_id', p.id),
       'gates:' || p.id,
       CASE WHEN g.status = 'failed' THEN 'dead' ELSE 'queued' END,
       0, NULL, COALESCE(g.attempts, 0), 3, NULL, 0, g.last_error,
       COALESCE(g.created_at, p.created_at::timestamptz),
       COALESCE(g.updated_at, p.updated_at::timestamptz)
FROM pull_requests p LEFT JOIN gate_jobs g ON g.pr_id = p.id
WHERE p.gate_status IN ('awaiting_qa', 'awaiting_secops');
DROP TABLE IF EXISTS gate_jobs;
