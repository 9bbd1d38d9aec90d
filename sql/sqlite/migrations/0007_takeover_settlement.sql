-- What the human settled on a takeover: the ledger's real outcome of the operator's action
-- and the extra attempts an operator granted the agent on that combination (issue 11).
ALTER TABLE interruptions ADD COLUMN outcome TEXT;
ALTER TABLE interruptions ADD COLUMN grant_total INTEGER NOT NULL DEFAULT 0;
ALTER TABLE interruptions ADD COLUMN grant_used INTEGER NOT NULL DEFAULT 0;
