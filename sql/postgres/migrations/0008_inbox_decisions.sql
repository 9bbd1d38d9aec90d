-- What an operator needs to see and decide a decide() "ask" (issue 12): the stage and rule
-- that asked, the operator's reason, and what executing the approved action did ('failed'
-- when it could not run). A handoff can be declined.
ALTER TABLE approvals ADD COLUMN IF NOT EXISTS stage TEXT;
ALTER TABLE approvals ADD COLUMN IF NOT EXISTS rule TEXT;
ALTER TABLE approvals ADD COLUMN IF NOT EXISTS reason TEXT;
ALTER TABLE approvals ADD COLUMN IF NOT EXISTS result JSONB;
ALTER TABLE approvals ADD COLUMN IF NOT EXISTS claimed_by TEXT;
ALTER TABLE approvals ADD COLUMN IF NOT EXISTS claimed_at TIMESTAMPTZ;
ALTER TABLE approvals DROP CONSTRAINT IF EXISTS approvals_status_check;
ALTER TABLE approvals ADD CONSTRAINT approvals_status_check
    CHECK (status IN ('pending', 'approved', 'rejected', 'failed'));
CREATE INDEX IF NOT EXISTS approvals_status_idx ON approvals (status, created_at);

ALTER TABLE handoffs ADD COLUMN IF NOT EXISTS declined_at TIMESTAMPTZ;
ALTER TABLE handoffs ADD COLUMN IF NOT EXISTS declined_by TEXT;
ALTER TABLE handoffs ADD COLUMN IF NOT EXISTS decline_reason TEXT;
ALTER TABLE handoffs DROP CONSTRAINT IF EXISTS handoffs_status_check;
ALTER TABLE handoffs ADD CONSTRAINT handoffs_status_check
    CHECK (status IN ('offered', 'accepted', 'declined'));
