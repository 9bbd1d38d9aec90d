-- name: job_claim
-- Up to `limit` due jobs of one kind, owned by one UPDATE: due and queued or waiting for a
-- retry, or running under a lapsed lease with attempts left. SKIP LOCKED lets concurrent
-- workers pick different rows; the outer condition is checked again on the locked row.
UPDATE jobs
SET state = 'running', owner = %(owner)s, lease_until = %(lease_until)s,
    attempts = attempts + 1, updated_at = %(now)s
WHERE id IN (
    SELECT id FROM jobs
    WHERE kind = %(kind)s
      AND ((state IN ('queued', 'failed') AND run_at <= %(epoch)s)
           OR (state = 'running' AND lease_until < %(epoch)s AND attempts < max_attempts))
    ORDER BY run_at, id
    LIMIT %(limit)s
    FOR UPDATE SKIP LOCKED)
  AND ((state IN ('queued', 'failed') AND run_at <= %(epoch)s)
       OR (state = 'running' AND lease_until < %(epoch)s AND attempts < max_attempts))
RETURNING id, kind, payload, unique_key, state, run_at, period_s, attempts, max_attempts,
          owner, lease_until, last_error, again, created_at, updated_at
