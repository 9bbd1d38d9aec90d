-- Model usage and budgets (backend/agents/usage.py, migration 0011). Sums are cast to
-- BIGINT so PostgreSQL answers integers, not NUMERIC.

-- name: usage_record
INSERT INTO agent_usage
    (day, project_id, agent, model, input_tokens, output_tokens, turns, updated_at)
VALUES (%(day)s, %(project_id)s, %(agent)s, %(model)s, %(input_tokens)s, %(output_tokens)s,
    1, %(now)s)
ON CONFLICT (day, project_id, agent, model) DO UPDATE SET
    input_tokens = agent_usage.input_tokens + excluded.input_tokens,
    output_tokens = agent_usage.output_tokens + excluded.output_tokens,
    turns = agent_usage.turns + 1,
    updated_at = excluded.updated_at

-- name: usage_rows
-- Every filter is optional (NULL: any). One row per (project, agent, model), summed over
-- the days that match (one day, or all of them).
SELECT project_id, agent, model,
    CAST(SUM(input_tokens) AS BIGINT) AS input_tokens,
    CAST(SUM(output_tokens) AS BIGINT) AS output_tokens,
    CAST(SUM(turns) AS BIGINT) AS turns
FROM agent_usage
WHERE (CAST(%(day)s AS TEXT) IS NULL OR day = %(day)s)
  AND (CAST(%(project_id)s AS TEXT) IS NULL OR project_id = %(project_id)s)
  AND (CAST(%(agent)s AS TEXT) IS NULL OR agent = %(agent)s)
GROUP BY project_id, agent, model
ORDER BY project_id, agent, model

-- name: usage_agent_day
-- One agent's tokens (in + out) on one day, every project: what its budget counts.
SELECT CAST(COALESCE(SUM(input_tokens + output_tokens), 0) AS BIGINT) AS used
FROM agent_usage WHERE agent = %(agent)s AND day = %(day)s

-- name: budget_get
SELECT agent, tokens_per_day, raised_by, reason, updated_at
FROM agent_budgets WHERE agent = %(agent)s

-- name: budget_set
INSERT INTO agent_budgets (agent, tokens_per_day, raised_by, reason, updated_at)
VALUES (%(agent)s, %(tokens_per_day)s, %(raised_by)s, %(reason)s, %(now)s)
ON CONFLICT (agent) DO UPDATE SET
    tokens_per_day = excluded.tokens_per_day,
    raised_by = excluded.raised_by,
    reason = excluded.reason,
    updated_at = excluded.updated_at

-- name: budget_stop_once
-- The first refusal of the day inserts the row (and the caller appends the event).
INSERT INTO agent_budget_stops (agent, day, budget, used, stopped_at)
VALUES (%(agent)s, %(day)s, %(budget)s, %(used)s, %(now)s)
ON CONFLICT (agent, day) DO NOTHING

-- name: budget_stop_clear
-- A raised budget lets the agent run again; a later stop that day is a new one.
DELETE FROM agent_budget_stops WHERE agent = %(agent)s AND day = %(day)s
