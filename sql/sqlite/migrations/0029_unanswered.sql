-- A customer message no agent will answer (atendimento paused or over its budget): one row
-- per conversation from the first such message until someone replies (any outbound
-- message deletes it). It is the inbox's 'unanswered' item, with a takeover's SLA.
CREATE TABLE IF NOT EXISTS unanswered (
    conversa_id  TEXT PRIMARY KEY,
    reason       TEXT NOT NULL,
    since        TEXT NOT NULL
);
