-- Operators with names and roles, their approvals, and the audit trail's indexes (issue 16).
-- A token is "<id>.<secret>": the id selects one row, the secret is checked against its
-- salted scrypt hash (the secret itself is never stored).
CREATE TABLE IF NOT EXISTS operators (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    role        TEXT NOT NULL CHECK (role IN ('viewer', 'operator', 'admin')),
    salt        TEXT NOT NULL,
    secret_hash TEXT NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL,
    revoked_at  TIMESTAMPTZ
);
-- One live account per name (a revoked name may be added again, with a new id and token).
CREATE UNIQUE INDEX IF NOT EXISTS operators_live_name_idx ON operators (name)
    WHERE revoked_at IS NULL;

-- One operator's approval of one PR at one head (a correction, a new head, needs new ones).
CREATE TABLE IF NOT EXISTS pr_approvals (
    pr_id       TEXT NOT NULL,
    head        TEXT NOT NULL,
    operator    TEXT NOT NULL,
    reason      TEXT,
    approved_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (pr_id, head, operator)
);

-- GET /api/audit: the operator-action events by id, and by operator.
CREATE INDEX IF NOT EXISTS events_type_idx ON events (type, id);
CREATE INDEX IF NOT EXISTS events_operator_action_idx
    ON events ((payload ->> 'operator'), id) WHERE type = 'operator.action';
