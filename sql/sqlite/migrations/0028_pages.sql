-- On call: what was sent about each inbox item, so a sweep (a recurring job: one process
-- per tick) sends each notification once however many processes run. A row per item id
-- (<kind>:<target>), from when it was first seen until it leaves the inbox. The sends
-- themselves are jobs, enqueued in the same transaction as the row's change.
CREATE TABLE IF NOT EXISTS pages (
    item_id          TEXT PRIMARY KEY,
    kind             TEXT NOT NULL,
    title            TEXT NOT NULL,
    seen_at          TEXT NOT NULL,
    triggered_at     TEXT,
    escalated_at     TEXT,
    acknowledged_at  TEXT
);
