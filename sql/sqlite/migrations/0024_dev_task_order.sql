-- Dev tasks are taken and listed oldest first. Two tasks of one PO turn can share a
-- millisecond of created_at, and their random ids must not decide which runs first:
-- seq numbers them in insert order and breaks that tie.
ALTER TABLE dev_tasks ADD COLUMN seq INTEGER;
UPDATE dev_tasks SET seq = rowid;
CREATE INDEX IF NOT EXISTS dev_tasks_seq_idx ON dev_tasks (seq);
