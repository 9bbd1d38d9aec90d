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

-- name: dev_modules_runnable
-- (project, module) pairs with a task a dev agent may take: todo, or working when the job
-- that ran it died, in a project whose execution is active, with no PR yet (a PR opened by
-- an approved proposal is already in review).
SELECT DISTINCT t.project_id, t.module
FROM dev_tasks t JOIN projects p ON p.id = t.project_id
WHERE p.execution_activated = %(yes)s
  AND t.status IN ('todo', 'working')
  AND NOT EXISTS (SELECT 1 FROM pull_requests r WHERE r.task_id = t.id)

-- name: dev_task_next_of_module
-- The task the module's agent works next: one left working by a job that died first, then
-- the oldest todo (seq breaks a created_at tie).
SELECT t.id, t.status, t.attempts
FROM dev_tasks t JOIN projects p ON p.id = t.project_id
WHERE t.project_id = %(project_id)s AND t.module = %(module)s
  AND p.execution_activated = %(yes)s
  AND t.status IN ('todo', 'working')
  AND NOT EXISTS (SELECT 1 FROM pull_requests r WHERE r.task_id = t.id)
ORDER BY CASE WHEN t.status = 'working' THEN 0 ELSE 1 END, t.created_at, t.seq, t.id
LIMIT 1

-- name: dev_task_take
-- The module's job takes the task for one attempt (the job's lease is the only lease).
UPDATE dev_tasks
SET status = 'working', owner = %(owner)s, lease_until = 0, attempts = attempts + 1,
    updated_at = %(now)s
WHERE id = %(id)s AND status IN ('todo', 'working')
RETURNING id, attempts

-- name: dev_task_give_up
-- A task whose turn died (its job's lease lapsed) on every one of its attempts: blocked,
-- for an operator, instead of being taken again forever.
UPDATE dev_tasks
SET status = 'blocked', reason = %(reason)s, owner = NULL, lease_until = 0, updated_at = %(now)s
WHERE id = %(id)s AND status = 'working' AND attempts >= %(max_attempts)s
RETURNING id, project_id, module, session_id, attempts

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
