-- What an operator needs to see and decide a decide() "ask" (issue 12): the stage and rule
-- that asked, the operator's reason, and what executing the approved action did ('failed'
-- when it could not run). A handoff can be declined. SQLite cannot alter a CHECK
-- constraint, so both tables are rebuilt.
CREATE TABLE approvals_new (
    id          TEXT PRIMARY KEY,
    project_id  TEXT,
    session_id  TEXT,
    agent       TEXT NOT NULL,
    action      TEXT NOT NULL,
    payload     TEXT NOT NULL DEFAULT '{}',
    status      TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'rejected', 'failed')),
    created_at  TEXT NOT NULL,
    decided_by  TEXT,
    decided_at  TEXT,
    stage       TEXT,
    rule        TEXT,
    reason      TEXT,
    result      TEXT,
    claimed_by  TEXT,
    claimed_at  TEXT
);
INSERT INTO approvals_new (id, project_id, session_id, agent, action, payload, status,
    created_at, decided_by, decided_at)
SELECT id, project_id, session_id, agent, action, payload, status, created_at, decided_by,
    decided_at FROM approvals;
DROP TABLE approvals;
ALTER TABLE approvals_new RENAME TO approvals;
CREATE INDEX IF NOT EXISTS approvals_status_idx ON approvals (status, created_at);

CREATE TABLE handoffs_new (
    id              TEXT PRIMARY KEY,
    project_id      TEXT NOT NULL,
    session_id      TEXT NOT NULL REFERENCES sessions (id),
    from_agent      TEXT NOT NULL,
    to_agent        TEXT NOT NULL,
    status          TEXT NOT NULL CHECK (status IN ('offered', 'accepted', 'declined')),
    note            TEXT,
    offered_at      TEXT NOT NULL,
    accepted_at     TEXT,
    accepted_by     TEXT,
    declined_at     TEXT,
    declined_by     TEXT,
    decline_reason  TEXT,
    UNIQUE (session_id, from_agent, to_agent)
);
INSERT INTO handoffs_new (id, project_id, session_id, from_agent, to_agent, status, note,
    offered_at, accepted_at, accepted_by)
SELECT id, project_id, session_id, from_agent, to_agent, status, note, offered_at,
    accepted_at, accepted_by FROM handoffs;
DROP TABLE handoffs;
ALTER TABLE handoffs_new RENAME TO handoffs;
