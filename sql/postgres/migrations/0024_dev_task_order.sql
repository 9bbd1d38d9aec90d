-- Dev tasks are taken and listed oldest first. Two tasks of one PO turn can share a
-- millisecond of created_at, and their random ids must not decide which runs first:
-- seq numbers them in insert order and breaks that tie.
ALTER TABLE dev_tasks ADD COLUMN IF NOT EXISTS seq BIGINT;
UPDATE dev_tasks SET seq = numbered.n
FROM (SELECT id, row_number() OVER (ORDER BY created_at, id) AS n FROM dev_tasks) AS numbered
WHERE dev_tasks.id = numbered.id;
CREATE INDEX IF NOT EXISTS dev_tasks_seq_idx ON dev_tasks (seq);
