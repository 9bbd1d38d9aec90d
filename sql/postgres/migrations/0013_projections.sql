-- Projections (issue 14): the roster kept as a table, updated in the same transaction as
-- each append, instead of re-derived from the whole log on every read.
--
-- One row per (scope, key) fact (backend/agents/roster_facts.py): scope is a project id or
-- '' for events with no project, value is JSON, event_id is the event that set it (the
-- highest wins, so concurrent writers, replays and a rebuild converge), first_id is the
-- first event that touched the key (the order the roster lists gates and seeds in).
CREATE TABLE IF NOT EXISTS roster_facts (
    scope     TEXT NOT NULL,
    key       TEXT NOT NULL,
    value     TEXT,
    event_id  BIGINT NOT NULL,
    first_id  BIGINT NOT NULL,
    PRIMARY KEY (scope, key)
);

-- The live read skips the per-PR gate rows (one per PR ever, they grow with history) and
-- reads only the PRs waiting in a gate and the newest infra PR, each through its index.
CREATE INDEX IF NOT EXISTS roster_facts_waiting_idx ON roster_facts (scope, first_id)
    WHERE value IN ('"awaiting_qa"', '"awaiting_secops"');
CREATE INDEX IF NOT EXISTS roster_facts_infra_idx ON roster_facts (scope, first_id)
    WHERE key >= 'gate:infra PR ' AND key < 'gate:infra PR!';

-- Time travel: every fact of every scope as it stood at event `upto` (a multiple of
-- CADENCIA_ROSTER_SNAPSHOT_EVERY), so "the roster at N" replays at most one block.
CREATE TABLE IF NOT EXISTS roster_snapshots (
    upto        BIGINT PRIMARY KEY,
    facts       TEXT NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL
);

-- Which projections are maintained, from which event on. A database migrated while its
-- log is empty is current from the start, one that already holds events is rebuilt once
-- from its log when a backend first opens it (backend/projections/roster_table.py).
CREATE TABLE IF NOT EXISTS projection_state (
    name        TEXT PRIMARY KEY,
    upto        BIGINT NOT NULL,
    rebuilt_at  TIMESTAMPTZ
);
INSERT INTO projection_state (name, upto, rebuilt_at)
SELECT 'roster', 0, NULL WHERE NOT EXISTS (SELECT 1 FROM events)
ON CONFLICT (name) DO NOTHING;

-- The inbox reads what waits for a human: only the unresolved takeovers and the open PRs,
-- in the order it lists them, so its cost follows what is waiting, not the whole history
-- of takeovers and PRs (both lists are read on every inbox refresh).
CREATE INDEX IF NOT EXISTS interruptions_unresolved_idx
    ON interruptions (id) WHERE status <> 'resolved';
CREATE INDEX IF NOT EXISTS pull_requests_open_idx
    ON pull_requests (created_at, id) WHERE gate_status NOT IN ('merged', 'closed');
