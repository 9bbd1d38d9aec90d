-- An item's operator actions (GET /api/audit?target=ID: the console's timeline of a PR, an
-- approval, a takeover...): operator.action events carry the item as `subject` (the first
-- id of the request's path). This index reads one item's entries in id order, either way.
CREATE INDEX IF NOT EXISTS events_audit_subject_idx
    ON events (json_extract(payload, '$.subject'), id) WHERE type = 'operator.action';
