-- Who holds each customer conversation (the agent, or the operator who claimed its
-- takeover) and the journal of every outbound message handed to the customer's channel.
CREATE TABLE IF NOT EXISTS conversations (
    id          TEXT PRIMARY KEY,
    state       TEXT NOT NULL CHECK (state IN ('bot', 'human')),
    operator    TEXT,
    updated_at  TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS message_deliveries (
    message_id       INTEGER PRIMARY KEY REFERENCES conversation_messages (id),
    conversa_id      TEXT NOT NULL,
    idempotency_key  TEXT NOT NULL UNIQUE,
    status           TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
    attempts         INTEGER NOT NULL DEFAULT 0,
    last_error       TEXT,
    created_at       TEXT NOT NULL,
    updated_at       TEXT NOT NULL,
    delivered_at     TEXT
);
CREATE INDEX IF NOT EXISTS message_deliveries_status_idx ON message_deliveries (status, message_id);
