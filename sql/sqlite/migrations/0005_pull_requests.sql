-- One pull request concept for every kind (infra, dev, adr): one table, one gate flow.
-- Existing infra artifacts and dev task PRs are copied in, keyed by their pr_action_id;
-- dev task gate history moves from the task id to that same key. The old PR columns go:
-- infra_artifacts is dropped (nothing else reads it), dev_tasks keeps only the task itself
-- (SQLite cannot drop a UNIQUE column, so that table is rebuilt).
CREATE TABLE IF NOT EXISTS pull_requests (
    id                     TEXT PRIMARY KEY,
    kind                   TEXT NOT NULL CHECK (kind IN ('infra', 'dev', 'adr')),
    project_id             TEXT NOT NULL,
    session_id             TEXT,
    task_id                TEXT UNIQUE,
    author                 TEXT NOT NULL,
    title                  TEXT NOT NULL,
    branch                 TEXT NOT NULL,
    pr_id                  TEXT,
    pr_url                 TEXT,
    head                   TEXT NOT NULL,
    files                  TEXT NOT NULL DEFAULT '[]',
    findings               TEXT NOT NULL DEFAULT '[]',
    gate_status            TEXT NOT NULL,
    gate_correction_count  INTEGER NOT NULL DEFAULT 0,
    blocked                INTEGER NOT NULL DEFAULT 0,
    blocked_reason         TEXT,
    created_at             TEXT NOT NULL,
    updated_at             TEXT NOT NULL
);
-- ADR 0014: one infra PR cycle per session.
CREATE UNIQUE INDEX IF NOT EXISTS pull_requests_one_infra_per_session
    ON pull_requests (session_id) WHERE kind = 'infra';
CREATE INDEX IF NOT EXISTS pull_requests_status_idx ON pull_requests (gate_status, created_at);

INSERT INTO pull_requests
    (id, kind, project_id, session_id, task_id, author, title, branch, pr_id, pr_url, head,
     files, findings, gate_status, gate_correction_count, blocked, blocked_reason, created_at,
     updated_at)
SELECT pr_action_id, 'infra', project_id, session_id, NULL, 'infra', title, branch, pr_id,
       pr_url, head, files, findings, gate_status, gate_correction_count, blocked,
       blocked_reason, created_at, updated_at
FROM infra_artifacts;

INSERT INTO pull_requests
    (id, kind, project_id, session_id, task_id, author, title, branch, pr_id, pr_url, head,
     files, findings, gate_status, gate_correction_count, blocked, blocked_reason, created_at,
     updated_at)
SELECT pr_action_id, 'dev', project_id, NULL, id, 'dev-' || module, title, branch, NULL, NULL,
       head, files, findings, gate_status, gate_correction_count, blocked, blocked_reason,
       created_at, updated_at
FROM dev_tasks WHERE gate_status IS NOT NULL AND pr_action_id IS NOT NULL;

UPDATE gate_history
SET subject = (SELECT d.pr_action_id FROM dev_tasks d WHERE d.id = gate_history.subject)
WHERE subject IN (SELECT id FROM dev_tasks WHERE pr_action_id IS NOT NULL);

DROP TABLE infra_artifacts;

CREATE TABLE dev_tasks_new (
    id          TEXT PRIMARY KEY,
    project_id  TEXT NOT NULL,
    module      TEXT NOT NULL,
    title       TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);
INSERT INTO dev_tasks_new SELECT id, project_id, module, title, created_at, updated_at
FROM dev_tasks;
DROP TABLE dev_tasks;
ALTER TABLE dev_tasks_new RENAME TO dev_tasks;
CREATE INDEX IF NOT EXISTS dev_tasks_project_idx ON dev_tasks (project_id, created_at);
