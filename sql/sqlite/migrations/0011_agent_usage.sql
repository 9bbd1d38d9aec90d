-- Model usage and budgets (issue 13). One row per (UTC day, project, agent, model spec),
-- bumped by one upsert after each turn, so the roster and GET /api/usage sum a few rows
-- instead of scanning the event log. project_id is '' for turns outside a project (the
-- customer-service agent's conversations): a key column cannot be NULL and stay unique.
CREATE TABLE IF NOT EXISTS agent_usage (
    day            TEXT NOT NULL,
    project_id     TEXT NOT NULL DEFAULT '',
    agent          TEXT NOT NULL,
    model          TEXT NOT NULL,
    input_tokens   INTEGER NOT NULL DEFAULT 0,
    output_tokens  INTEGER NOT NULL DEFAULT 0,
    turns          INTEGER NOT NULL DEFAULT 0,
    updated_at     TEXT NOT NULL,
    PRIMARY KEY (day, project_id, agent, model)
);
CREATE INDEX IF NOT EXISTS agent_usage_agent_idx ON agent_usage (agent, day);

-- A budget an operator set for one agent (tokens per UTC day), which overrides the settings.
CREATE TABLE IF NOT EXISTS agent_budgets (
    agent           TEXT PRIMARY KEY,
    tokens_per_day  INTEGER NOT NULL CHECK (tokens_per_day > 0),
    raised_by       TEXT NOT NULL,
    reason          TEXT,
    updated_at      TEXT NOT NULL
);

-- The days an agent's budget stopped it: agent.budget_exceeded is appended once per row.
CREATE TABLE IF NOT EXISTS agent_budget_stops (
    agent       TEXT NOT NULL,
    day         TEXT NOT NULL,
    budget      INTEGER NOT NULL,
    used        INTEGER NOT NULL,
    stopped_at  TEXT NOT NULL,
    PRIMARY KEY (agent, day)
);
