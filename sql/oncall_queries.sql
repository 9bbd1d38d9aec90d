-- On call (backend/oncall/): what was sent about each inbox item (the pages table).

-- name: pages_open
SELECT item_id, kind, title, seen_at, triggered_at, escalated_at, acknowledged_at
FROM pages

-- name: page_seen
-- First sight of an item; nothing when another process saw it first.
INSERT INTO pages (item_id, kind, title, seen_at) VALUES (%(item_id)s, %(kind)s, %(title)s, %(now)s)
ON CONFLICT (item_id) DO NOTHING
RETURNING item_id

-- name: page_triggered
UPDATE pages SET triggered_at = %(now)s
WHERE item_id = %(item_id)s AND triggered_at IS NULL
RETURNING item_id

-- name: page_escalated
UPDATE pages SET escalated_at = %(now)s
WHERE item_id = %(item_id)s AND escalated_at IS NULL
RETURNING item_id

-- name: page_acknowledged
UPDATE pages SET acknowledged_at = %(now)s
WHERE item_id = %(item_id)s AND acknowledged_at IS NULL AND triggered_at IS NOT NULL
RETURNING item_id

-- name: page_released
-- Its holder released a claimed takeover: it may be paged again.
UPDATE pages SET acknowledged_at = NULL, triggered_at = NULL
WHERE item_id = %(item_id)s AND acknowledged_at IS NOT NULL
RETURNING item_id

-- name: page_resolved
-- The item left the inbox: its row goes (an item that comes back is seen afresh).
DELETE FROM pages WHERE item_id = %(item_id)s
RETURNING item_id, kind, title, triggered_at, escalated_at
