-- The agent team: projects, sessions, handoffs, autonomy, pending approvals.
CREATE TABLE IF NOT EXISTS projects (
    id                   TEXT PRIMARY KEY,
    name                 TEXT NOT NULL,
    repo_path            TEXT,
    module_map           TEXT,
    execution_activated  INTEGER NOT NULL DEFAULT 0,
    created_at           TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS sessions (
    id          TEXT PRIMARY KEY,
    project_id  TEXT NOT NULL REFERENCES projects (id),
    title       TEXT NOT NULL,
    created_at  TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS handoffs (
    id           TEXT PRIMARY KEY,
    project_id   TEXT NOT NULL,
    session_id   TEXT NOT NULL REFERENCES sessions (id),
    from_agent   TEXT NOT NULL,
    to_agent     TEXT NOT NULL,
    status       TEXT NOT NULL CHECK (status IN ('offered', 'accepted')),
    note         TEXT,
    offered_at   TEXT NOT NULL,
    accepted_at  TEXT,
    accepted_by  TEXT,
    UNIQUE (session_id, from_agent, to_agent)
);

CREATE TABLE IF NOT EXISTS agent_autonomy (
    project_id  TEXT NOT NULL,
    agent       TEXT NOT NULL,
    action      TEXT NOT NULL,
    value       TEXT NOT NULL,
    PRIMARY KEY (project_id, agent, action)
);

CREATE TABLE IF NOT EXISTS approvals (
    id          TEXT PRIMARY KEY,
    project_id  TEXT,
    session_id  TEXT,
    agent       TEXT NOT NULL,
    action      TEXT NOT NULL,
    payload     TEXT NOT NULL DEFAULT '{}',
    status      TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'rejected')),
    created_at  TEXT NOT NULL,
    decided_by  TEXT,
    decided_at  TEXT
);
