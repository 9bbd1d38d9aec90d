-- Dev tasks (backend/infra/dev_tasks.py, backend/infra/dev_worker.py): the PO's module tasks
-- and the lease of the worker running a dev agent on one. Every status change is one
-- conditional statement, so two workers (threads or `cadencia serve` processes on one
-- PostgreSQL) racing on a task cannot both win.

-- name: dev_task_insert
INSERT INTO dev_tasks
    (id, project_id, module, title, description, story_id, session_id, status, created_at,
     updated_at, seq)
VALUES (%(id)s, %(project_id)s, %(module)s, %(title)s, %(description)s, %(story_id)s,
        %(session_id)s, 'todo', %(now)s, %(now)s,
        (SELECT COALESCE(MAX(seq), 0) + 1 FROM dev_tasks))

-- name: dev_task_get
SELECT id, project_id, module, title, description, story_id, session_id, status, reason,
       owner, lease_until, attempts, created_at, updated_at
FROM dev_tasks WHERE id = %(id)s

-- name: dev_tasks_of_project
SELECT id, project_id, module, title, description, story_id, session_id, status, reason,
       owner, lease_until, attempts, created_at, updated_at
FROM dev_tasks WHERE project_id = %(project_id)s ORDER BY created_at, seq, id

-- name: dev_tasks_runnable
-- Tasks a worker may take, oldest first: todo, or working under a lease that ran out (its
-- worker died), in a project whose execution is active, with no PR yet (a PR opened by an
-- approved proposal is already in review).
SELECT t.id, t.project_id, t.module, t.status, t.lease_until
FROM dev_tasks t JOIN projects p ON p.id = t.project_id
WHERE p.execution_activated = %(yes)s
  AND (t.status = 'todo' OR (t.status = 'working' AND t.lease_until < %(epoch)s))
  AND NOT EXISTS (SELECT 1 FROM pull_requests r WHERE r.task_id = t.id)
ORDER BY t.created_at, t.seq, t.id

-- name: dev_tasks_busy
-- Modules whose agent is on a task under a live lease (one task at a time per agent).
SELECT DISTINCT project_id, module FROM dev_tasks
WHERE status = 'working' AND lease_until >= %(epoch)s

-- name: dev_task_claim
UPDATE dev_tasks
SET status = 'working', owner = %(owner)s, lease_until = %(lease_until)s,
    attempts = attempts + 1, updated_at = %(now)s
WHERE id = %(id)s
  AND (status = 'todo' OR (status = 'working' AND lease_until < %(epoch)s))
RETURNING id, attempts

-- name: dev_tasks_dead_any
-- Whether some task's turn died on every one of its attempts (the sweep asks first, so a
-- quiet sweep writes nothing and reads no clock).
SELECT 1 AS dead FROM dev_tasks
WHERE status = 'working' AND lease_until < %(epoch)s AND attempts >= %(max_attempts)s
LIMIT 1

-- name: dev_tasks_give_up
-- Tasks whose turn died (lease expired) on every one of their attempts: blocked, for an
-- operator, instead of being taken again forever.
UPDATE dev_tasks
SET status = 'blocked', reason = %(reason)s, owner = NULL, lease_until = 0, updated_at = %(now)s
WHERE status = 'working' AND lease_until < %(epoch)s AND attempts >= %(max_attempts)s
RETURNING id, project_id, module, session_id, attempts

-- name: dev_task_heartbeat
UPDATE dev_tasks SET lease_until = %(lease_until)s
WHERE id = %(id)s AND owner = %(owner)s AND status = 'working'
RETURNING id

-- name: dev_task_release
-- The owner's turn ended without settling the task: back to todo (``reason`` says why) or
-- blocked with it (``to_status``). ``refund`` (0 or 1) gives back the claim's attempt when
-- the turn was refused before it ran (the agent is paused or over its budget).
UPDATE dev_tasks
SET status = %(to_status)s, reason = %(reason)s, attempts = attempts - %(refund)s,
    owner = NULL, lease_until = 0, updated_at = %(now)s
WHERE id = %(id)s AND owner = %(owner)s AND status = 'working'
RETURNING id, status, project_id, module, session_id

-- name: dev_task_set_status
-- The agent's own tools settle its task: a PR opened (in_review), or report_blocked.
UPDATE dev_tasks
SET status = %(status)s, reason = %(reason)s, owner = NULL, lease_until = 0,
    updated_at = %(now)s
WHERE id = %(id)s
RETURNING id, status
