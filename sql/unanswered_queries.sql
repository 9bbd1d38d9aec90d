-- Customer messages no agent will answer (backend/guard/conversations.py).

-- name: unanswered_mark
-- The oldest unanswered message counts: a later one does not move `since`.
INSERT INTO unanswered (conversa_id, reason, since) VALUES (%(conversa_id)s, %(reason)s, %(now)s)
ON CONFLICT (conversa_id) DO UPDATE SET reason = excluded.reason

-- name: unanswered_clear
DELETE FROM unanswered WHERE conversa_id = %(conversa_id)s

-- name: unanswered_all
SELECT conversa_id, reason, since FROM unanswered ORDER BY since, conversa_id
