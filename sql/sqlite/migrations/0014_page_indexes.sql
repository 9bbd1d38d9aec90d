-- Keyset pages of the list routes (issue 14): each page is an index range scan from the
-- cursor's (sort key, id), however many rows the table holds. The events, conversation
-- messages and agent turns already have theirs (primary key, 0001, 0012).
CREATE INDEX IF NOT EXISTS handoffs_offered_idx ON handoffs (offered_at, id);
CREATE INDEX IF NOT EXISTS projects_created_idx ON projects (created_at, id);
CREATE INDEX IF NOT EXISTS pull_requests_open_idx ON pull_requests (created_at, id)
    WHERE gate_status NOT IN ('merged', 'closed');
