-- Infra PRs (ADR 0014 decision 4) and dev task PRs share the gate columns.
CREATE TABLE IF NOT EXISTS infra_artifacts (
    pr_action_id           TEXT PRIMARY KEY,
    project_id             TEXT NOT NULL,
    session_id             TEXT NOT NULL UNIQUE,
    title                  TEXT NOT NULL,
    branch                 TEXT NOT NULL,
    pr_id                  TEXT NOT NULL,
    pr_url                 TEXT NOT NULL,
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

CREATE TABLE IF NOT EXISTS dev_tasks (
    id                     TEXT PRIMARY KEY,
    project_id             TEXT NOT NULL,
    module                 TEXT NOT NULL,
    title                  TEXT NOT NULL,
    branch                 TEXT,
    pr_action_id           TEXT UNIQUE,
    head                   TEXT,
    files                  TEXT NOT NULL DEFAULT '[]',
    findings               TEXT NOT NULL DEFAULT '[]',
    gate_status            TEXT,
    gate_correction_count  INTEGER NOT NULL DEFAULT 0,
    blocked                INTEGER NOT NULL DEFAULT 0,
    blocked_reason         TEXT,
    created_at             TEXT NOT NULL,
    updated_at             TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS gate_history (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    subject      TEXT NOT NULL,
    from_status  TEXT,
    to_status    TEXT NOT NULL,
    actor        TEXT NOT NULL,
    note         TEXT,
    ts           TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS gate_history_subject_idx ON gate_history (subject, id);
