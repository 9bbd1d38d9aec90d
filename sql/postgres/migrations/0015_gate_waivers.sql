-- Reviewed waivers (issue 15): an operator waives one finding on one PR with a reason. The
-- finding is named by its fingerprint (tool, rule, file, text of the flagged line), so the
-- waiver survives a correction that does not touch that line. A PR's own files can never
-- write here: only the waiver route does, for an operator.
CREATE TABLE IF NOT EXISTS gate_waivers (
    pr_id       TEXT NOT NULL,
    finding     TEXT NOT NULL,
    gate        TEXT NOT NULL,
    tool        TEXT NOT NULL,
    rule        TEXT NOT NULL,
    file        TEXT NOT NULL,
    line        INTEGER,
    operator    TEXT NOT NULL,
    reason      TEXT NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (pr_id, finding)
);
