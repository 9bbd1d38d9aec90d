-- The operators' off switch (issue 13): one row per agent id, across projects. ``paused`` is
-- flipped by one conditional statement, so two operators pausing at once get one success
-- and one 409. The last pause's who/when/why stay after a resume (with who resumed it).
CREATE TABLE IF NOT EXISTS agent_pauses (
    agent       TEXT PRIMARY KEY,
    paused      BOOLEAN NOT NULL DEFAULT FALSE,
    paused_by   TEXT,
    paused_at   TIMESTAMPTZ,
    reason      TEXT,
    resumed_by  TEXT,
    resumed_at  TIMESTAMPTZ
);

-- Turn inspection reads an agent's newest ``agent.turn`` events with a LIMIT.
CREATE INDEX IF NOT EXISTS events_agent_type_idx ON events (agent, type, id);
