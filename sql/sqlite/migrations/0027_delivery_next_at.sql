-- Deliveries run as one 'deliver' job on the job engine: a transient failure no longer
-- sleeps in a worker, it records when the delivery may be tried again (epoch seconds, 0 is
-- now) and the job waits until the earliest such time. Nothing else changes in the journal.
ALTER TABLE message_deliveries ADD COLUMN next_at REAL NOT NULL DEFAULT 0;
-- Finished jobs are pruned after a while (the backend's recurring 'jobs.prune'): by state
-- and age, on an index, so a busy month does not keep every delivery run forever.
CREATE INDEX IF NOT EXISTS jobs_finished_idx ON jobs (state, updated_at);
