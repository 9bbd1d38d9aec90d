-- Real dev agents (issue 13): a task's own work status, what the PO wrote about it, and the
-- lease of the worker running its dev agent. A worker claims a task with one conditional
-- UPDATE (todo, or working with an expired lease: the process that ran it died), so one task
-- never runs twice at once, and its heartbeat pushes lease_until (epoch seconds) forward. The PR
-- of a task keeps its own gate status (pull_requests). Here: todo → working → in_review
-- (a PR is open) → done (merged), or blocked with the reason the agent or the worker gave.
ALTER TABLE dev_tasks ADD COLUMN status TEXT NOT NULL DEFAULT 'todo'
    CHECK (status IN ('todo', 'working', 'in_review', 'done', 'blocked'));
ALTER TABLE dev_tasks ADD COLUMN description TEXT;
ALTER TABLE dev_tasks ADD COLUMN story_id TEXT;
ALTER TABLE dev_tasks ADD COLUMN session_id TEXT;
ALTER TABLE dev_tasks ADD COLUMN reason TEXT;
ALTER TABLE dev_tasks ADD COLUMN owner TEXT;
ALTER TABLE dev_tasks ADD COLUMN lease_until REAL NOT NULL DEFAULT 0;
ALTER TABLE dev_tasks ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;
UPDATE dev_tasks SET status = 'in_review'
WHERE id IN (SELECT task_id FROM pull_requests WHERE task_id IS NOT NULL);
UPDATE dev_tasks SET status = 'done'
WHERE id IN (SELECT task_id FROM pull_requests WHERE task_id IS NOT NULL AND gate_status = 'merged');
CREATE INDEX IF NOT EXISTS dev_tasks_status_idx ON dev_tasks (status, lease_until);
